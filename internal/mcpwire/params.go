package mcpwire

import (
	"encoding/json"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
)

// VolatileMeta lists the _meta keys that differ between runs of the same
// client: replay matching and diffs never count them.
var VolatileMeta = []string{"progressToken", "traceparent", "tracestate", "baggage"}

// ProgressToken returns params._meta.progressToken of a request, nil when
// absent.
func ProgressToken(params json.RawMessage) json.RawMessage {
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

// ProgressNotificationToken returns params.progressToken of a
// notifications/progress, nil when absent.
func ProgressNotificationToken(params json.RawMessage) json.RawMessage {
	var p struct {
		Token json.RawMessage `json:"progressToken"`
	}
	if json.Unmarshal(params, &p) != nil {
		return nil
	}
	return p.Token
}

// CancelledRequestID returns params.requestId of a
// notifications/cancelled, nil when absent.
func CancelledRequestID(params json.RawMessage) json.RawMessage {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil {
		return nil
	}
	return p.RequestID
}

// SubscriptionID returns params._meta["io.modelcontextprotocol/subscriptionId"]
// of a 2026-07-28 listen-stream notification, nil when absent.
func SubscriptionID(params json.RawMessage) json.RawMessage {
	v, _ := jsonrpc.Lookup(params, "_meta", MetaSubscriptionID)
	return v
}
