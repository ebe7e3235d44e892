package replayer

import (
	"bytes"
	"encoding/json"

	"github.com/mcpvcr/mcpvcr/internal/mcpwire"
)

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
			for _, k := range mcpwire.VolatileMeta {
				delete(meta, k)
			}
			if len(meta) == 0 {
				delete(obj, "_meta")
			}
		}
	}
	return v
}
