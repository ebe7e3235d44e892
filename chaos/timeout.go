package chaos

import (
	"bytes"
	"net/http"
	"time"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/replayer"
	"github.com/mcpvcr/mcpvcr/store"
)

// timeout (Toxiproxy's name) and stall: a request never answered, its
// connection held open with nothing written, and a POST's event stream
// that stops after some events without closing. Nothing on the wire ends
// the wait: the client must give up on its own (its own timeout, or a
// cancellation), and carry on or say so, not wait for good.

// holdFor is how long a timeout or a stall holds its request: until the
// client leaves or replay closes, in practice.
const holdFor = 24 * time.Hour

// hang holds the request of a timeout fault unanswered until the client
// leaves (or replay closes), then drops its connection.
func (cs *Hook) hang(p *replayer.Point, inj *injection) replayer.Action {
	p.Wait(holdFor)
	cs.mu.Lock()
	inj.left = p.Gone()
	cs.mu.Unlock()
	return replayer.Action{Cut: true}
}

// stall holds a stalled stream, nothing more written, until the client
// leaves (or replay closes), and ends it.
func (cs *Hook) stall(p *replayer.Point, inj *injection) replayer.Action {
	cs.mu.Lock()
	inj.body = cs.bodyOfLocked(p.Request)
	inj.rpcID = string(jsonrpc.Parse([]byte(inj.body)).ID)
	cs.mu.Unlock()
	p.Wait(holdFor)
	cs.mu.Lock()
	inj.left = p.Gone()
	cs.mu.Unlock()
	return replayer.Action{Stop: true}
}

// sitesStall returns the events of a POST's SSE answer (a request's, from
// the session's POST 3) before which the stream can stall: any after the
// first, up to and including the response.
func sitesStall(rec *store.Recording, st *store.Stream, base Fault, evs []*store.Frame, requests int, cancelled map[int64]*store.Frame) []Fault {
	return sitesUpToResponse(st, base, evs, requests, func(*store.Frame) bool { return true })
}

// sitesUpToResponse returns the events of st's SSE answer, a request's
// from the session's POST 3 (requests) answered whole, that ok accepts,
// from the second event to the response: where a stream can stop early
// with a part of it sent.
func sitesUpToResponse(st *store.Stream, base Fault, evs []*store.Frame, requests int, ok func(*store.Frame) bool) []Fault {
	var out []Fault
	if st.Kind != store.PostStream || !st.SSE() || st.Status != http.StatusOK || st.End != store.EndComplete || requests < 3 {
		return out
	}
	for e := 1; e < len(evs); e++ {
		if ok(evs[e]) {
			f := base
			f.Event, f.Seq = e, evs[e].Seq
			out = append(out, f)
		}
		if evs[e].Kind.IsResponse() {
			break
		}
	}
	return out
}

// judgeGiveUp judges a client whose request nothing answers (timeout) or
// whose answer stopped coming (stall): it gave up on the request and said
// so (notifications/cancelled), sent it again, went on with its next
// request or ended its session (a DELETE): pass; nothing more where the
// recorded client went on: fail (it waited for good, or left without a
// word: either way the request's stream closes at last).
func judgeGiveUp(inj *injection, mine []chaosAction) (string, Verdict) {
	want := jsonrpc.Parse([]byte(inj.body))
	closed := ""
	if inj.left {
		closed = " (it closed the request's stream)"
	}
	for _, a := range mine {
		got := jsonrpc.Parse([]byte(a.body))
		switch {
		case a.cancels != "" && a.cancels == inj.rpcID:
			return "gave up on the request and said so (notifications/cancelled)" + closed, VerdictPass
		case a.method == http.MethodPost && got.Method == want.Method && bytes.Equal(got.Params, want.Params):
			return "gave up waiting and sent the request again (" + describe(a) + ")" + closed, VerdictPass
		case a.method == http.MethodDelete:
			return "gave up waiting and ended its session (DELETE)" + closed, VerdictPass
		case a.method == http.MethodPost && a.rpcMethod != "" && a.rpcID != "":
			return "gave up waiting and carried on (next: " + describe(a) + ")" + closed, VerdictPass
		}
	}
	return silent(inj, "sent nothing more of its session: it waited for an answer that never came, or left without a word")
}
