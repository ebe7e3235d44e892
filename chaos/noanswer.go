package chaos

import (
	"bytes"
	"net/http"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/replayer"
	"github.com/mcpvcr/mcpvcr/store"
)

// reset_peer and EMPTY_RESPONSE (the names Toxiproxy and WireMock give
// them): a POST of a request gets no answer at all, its connection reset
// before anything was written, or an event stream that ends before its
// first event. The request is lost; the client must send it again or give
// up on it and carry on, not wait for good.

// sitesLost returns the POSTs of a JSON-RPC request (initialize and
// notifications/initialized aside: from the session's POST 3) answered
// 200: where an answer can go missing.
func sitesLost(rec *store.Recording, st *store.Stream, base Fault, evs []*store.Frame, requests int, cancelled map[int64]*store.Frame) []Fault {
	var out []Fault
	if st.Kind != store.PostStream || st.Status != http.StatusOK || requests < 3 {
		return out
	}
	for i := range rec.Frames {
		if f := &rec.Frames[i]; f.StreamID == st.ID && f.Direction == store.ClientToServer {
			if f.Kind == store.KindRequest {
				out = append(out, Fault{Kind: base.Kind, Request: requests})
			}
			break
		}
	}
	return out
}

// noAnswerLocked takes the reset_peer, EMPTY_RESPONSE or timeout planned
// at POST n of ls, noting the request it hits; nil when none.
func (cs *Hook) noAnswerLocked(ls *replayer.Session, rec *store.Recording, n int, body []byte) *injection {
	inj, ok := cs.takeLocked(ls, rec, func(f Fault) bool {
		return (f.Kind == FaultResetPeer || f.Kind == FaultEmptyResponse || f.Kind == FaultTimeout) && f.Request == n
	})
	if !ok {
		return nil
	}
	live := jsonrpc.Parse(body)
	inj.body, inj.rpcMethod, inj.rpcID = string(body), live.Method, string(live.ID)
	cs.posts[ls]-- // not a POST of the conversation: it is to come again, or not at all
	return inj
}

// noAnswer is the Action of a reset_peer or EMPTY_RESPONSE fault.
func noAnswer(inj *injection) replayer.Action {
	if inj.Kind == FaultResetPeer {
		return replayer.Action{Cut: true}
	}
	return replayer.Action{Status: http.StatusOK, Header: http.Header{"Content-Type": {"text/event-stream"}, "Cache-Control": {"no-cache"}}, Body: []byte{}}
}

// judgeNoAnswer judges a client whose request got no answer: sent again
// (the same method and params), or given up (cancelled, or the client
// went on with its session): pass; nothing more where the recorded client
// went on: fail.
func judgeNoAnswer(inj *injection, mine []chaosAction) (string, Verdict) {
	want := jsonrpc.Parse([]byte(inj.body))
	for _, a := range mine {
		got := jsonrpc.Parse([]byte(a.body))
		switch {
		case a.method == http.MethodPost && got.Method == want.Method && bytes.Equal(got.Params, want.Params):
			return "sent the request again (" + describe(a) + ")", VerdictPass
		case a.cancels != "" && a.cancels == inj.rpcID:
			return "gave up on the request and said so (notifications/cancelled)", VerdictPass
		case a.method == http.MethodDelete || a.method == http.MethodPost && a.rpcMethod != "" && a.rpcID != "":
			return "did not send the request again; it gave up on it and carried on (next: " + describe(a) + ")", VerdictPass
		}
	}
	return silent(inj, "sent nothing more of its session (it may be waiting for an answer that cannot come)")
}
