package replayer

import (
	"bytes"
	"encoding/json"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/internal/mcpwire"
)

// volatileMeta lists the _meta keys that differ between runs of the same
// client and never count when matching.
var volatileMeta = []string{"progressToken", "traceparent", "tracestate", "baggage"}

// canonical decodes JSON for comparison: numbers keep their text, and
// volatile _meta keys are removed from params. It returns nil for bytes
// that are not JSON.
func canonical(raw []byte) any {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return nil
	}
	if obj, ok := v.(map[string]any); ok {
		if meta, ok := obj["_meta"].(map[string]any); ok {
			for _, k := range volatileMeta {
				delete(meta, k)
			}
			if len(meta) == 0 {
				delete(obj, "_meta")
			}
		}
	}
	return v
}

// key is the canonical text of v, used to compare two values cheaply.
func key(v any) string {
	b, _ := json.Marshal(v) // maps marshal with sorted keys
	return string(b)
}

// progressToken returns the raw progress token of a request's params.
func progressToken(params json.RawMessage) json.RawMessage {
	var p struct {
		Meta struct {
			Token json.RawMessage `json:"progressToken"`
		} `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil {
		return nil
	}
	return p.Meta.Token
}

// requestIDParam returns params.requestId of a notifications/cancelled.
func requestIDParam(params json.RawMessage) json.RawMessage {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil {
		return nil
	}
	return p.RequestID
}

// subscriptionID returns params._meta["io.modelcontextprotocol/subscriptionId"]
// of a 2026-07-28 listen-stream notification.
func subscriptionID(params json.RawMessage) json.RawMessage {
	v, _ := jsonrpc.Lookup(params, "_meta", mcpwire.MetaSubscriptionID)
	return v
}
