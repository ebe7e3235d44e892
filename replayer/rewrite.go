package replayer

import (
	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/internal/mcpwire"
	"github.com/mcpvcr/mcpvcr/internal/script"
)

// rewrite returns fr's payload with the recorded client ids and progress
// tokens replaced by the live client's. Only those values change; every
// other byte is the recorded one.
func (e *engine) rewrite(fr *script.Frame) ([]byte, bool) {
	data := fr.F.Data
	if fr.Msg.Kind != jsonrpc.KindBatch {
		out, changed := e.rewriteOne(data, fr.Msg)
		return out, changed
	}
	spans, err := jsonrpc.Elements(data)
	if err != nil || len(spans) != len(fr.Msg.Members) {
		return data, false
	}
	var out []byte
	changed, prevEnd := false, 0
	for i, sp := range spans {
		elem, c := e.rewriteOne(data[sp[0]:sp[1]], fr.Msg.Members[i])
		out = append(out, data[prevEnd:sp[0]]...)
		out = append(out, elem...)
		prevEnd = sp[1]
		changed = changed || c
	}
	if !changed {
		return data, false
	}
	return append(out, data[prevEnd:]...), true
}

func (e *engine) rewriteOne(data []byte, m jsonrpc.Message) ([]byte, bool) {
	var val string
	var path []string
	switch {
	case m.Kind == jsonrpc.KindRequest && polls(m):
		live, ok := e.liveTaskID(m)
		if !ok {
			return data, false
		}
		val, path = live, []string{"params", "taskId"}
	case m.Kind.IsResponse():
		live, ok := e.ids[string(m.ID)]
		if !ok || live == string(m.ID) {
			return data, false
		}
		val, path = live, []string{"id"}
	case m.Kind == jsonrpc.KindNotification && mcpwire.SubscriptionID(m.Params) != nil:
		sub := mcpwire.SubscriptionID(m.Params)
		live, ok := e.ids[string(sub)]
		if !ok || live == string(sub) {
			return data, false
		}
		val, path = live, []string{"params", "_meta", "io.modelcontextprotocol/subscriptionId"}
	case m.Kind == jsonrpc.KindNotification && m.Method == "notifications/progress":
		tok := mcpwire.ProgressNotificationToken(m.Params)
		live, ok := e.tokens[string(tok)]
		if !ok || live == string(tok) {
			return data, false
		}
		val, path = live, []string{"params", "progressToken"}
	default:
		return data, false
	}
	out, err := jsonrpc.Splice(data, []byte(val), path...)
	if err != nil {
		return data, false
	}
	return out, true
}
