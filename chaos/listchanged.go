package chaos

import (
	"encoding/json"
	"net/http"
	"slices"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/store"
)

// list-changed: a notifications/tools/list_changed of chaos's own on a
// tools/call's stream, just before its response, from a server that
// declared tools.listChanged: the list changes mid-call. The client must
// still take the call's response and carry on (listing the tools again,
// if it likes), not drop or repeat the call.

// listChangedEvent is the SSE event of chaos's notification.
var listChangedEvent = []byte("event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n")

// sitesListChanged returns the results of tools/call (from the session's
// POST 3) sent as SSE events, where the recorded server declared
// tools.listChanged in its initialize result and the recorded client sent
// a request after.
func sitesListChanged(rec *store.Recording, st *store.Stream, base Fault, evs []*store.Frame, requests int, cancelled map[int64]*store.Frame) []Fault {
	if requests < 3 || !toolsListChanged(rec) || firstClientMethod(rec, st) != "tools/call" {
		return nil
	}
	// Only where the recorded client went on after the call: a client
	// that drops the call is then seen.
	return slices.DeleteFunc(resultEvents(st, base, evs), func(f Fault) bool { return !clientAfter(rec, f.Seq) })
}

// toolsListChanged reports whether rec's server declared
// tools.listChanged (a list_changed of tools may come from it).
func toolsListChanged(rec *store.Recording) bool {
	for i := range rec.Frames {
		f := &rec.Frames[i]
		if f.Direction != store.ServerToClient || f.Kind != store.KindResult {
			continue
		}
		var r struct {
			ProtocolVersion string `json:"protocolVersion"`
			Capabilities    struct {
				Tools *struct {
					ListChanged bool `json:"listChanged"`
				} `json:"tools"`
			} `json:"capabilities"`
		}
		if json.Unmarshal(jsonrpc.Parse(f.Data).Result, &r) == nil && r.ProtocolVersion != "" {
			return r.Capabilities.Tools != nil && r.Capabilities.Tools.ListChanged // initialize's result
		}
	}
	return false
}

// firstClientMethod returns the method of the request st answers.
func firstClientMethod(rec *store.Recording, st *store.Stream) string {
	for i := range rec.Frames {
		if f := &rec.Frames[i]; f.StreamID == st.ID && f.Direction == store.ClientToServer {
			return f.Method
		}
	}
	return ""
}

// judgeListChanged judges a client whose tool list changed mid-call: it
// took the call's response and carried on (a tools/list included):
// pass; it sent the call again, ended its session or sent nothing more
// where the recorded client went on: fail.
func judgeListChanged(inj *injection, mine []chaosAction) (string, Verdict) {
	did, v := judgeTook(inj, mine, "call's response after the list_changed", "it dropped the call at the list_changed")
	if v == VerdictPass {
		for _, a := range mine {
			if a.method == http.MethodPost && a.rpcMethod == "tools/list" {
				return did + ", and listed the tools again", v
			}
		}
	}
	return did, v
}
