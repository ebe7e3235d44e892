package chaos

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/replayer"
	"github.com/mcpvcr/mcpvcr/store"
)

// redeliver: a resumable stream dropped after event k, whose resumption
// sends again the events the client already had (as a server whose event
// store replays too much would) before the rest. A client must not act
// twice on one message: what the wire shows of that is an answer to a
// server request, so the fault goes only where such a request is among
// the events sent again, and the client must answer it once.

// sitesRedeliver returns the places of a resumable cut of a POST's SSE
// answer (event ids, its response on it, no recorded resumption) after a
// server request of the stream and before its response. The stream may
// have ended as the client closed it once it had the response.
func sitesRedeliver(rec *store.Recording, st *store.Stream, base Fault, evs []*store.Frame, requests int, cancelled map[int64]*store.Frame) []Fault {
	var out []Fault
	if st.Kind != store.PostStream || !st.SSE() || st.Status != http.StatusOK || resumedInRecording(rec, st.ID) {
		return out
	}
	asked := false
	for e := 1; e < len(evs) && !evs[e-1].Kind.IsResponse(); e++ {
		last := evs[e-1]
		asked = asked || last.Kind == store.KindRequest
		if asked && last.HasEventID && last.EventID != "" {
			f := base
			f.Event, f.Seq = e, last.Seq
			out = append(out, f)
		}
	}
	if !slices.ContainsFunc(evs, func(f *store.Frame) bool { return f.Kind.IsResponse() }) {
		return nil // nothing after the cut to resume for
	}
	return out
}

// redeliverLocked notes, for a redeliver cut after event n of p.Stream,
// the server requests among the events to send again, and that the
// stream's next event (its resumption's) goes after them.
func (cs *Hook) redeliverLocked(inj *injection, p *replayer.Point, n int) {
	for _, f := range sseEvents(p.Recording, p.Stream.ID)[:n] {
		if f.Kind == store.KindRequest {
			m := jsonrpc.Parse(f.Data)
			inj.asked = append(inj.asked, string(m.ID))
			inj.askedMethods = append(inj.askedMethods, m.Method)
		}
	}
	cs.redeliver[liveStream{p.Session, p.StreamNumber}] = inj
}

// again returns what a redeliver sends in place of event f, the first of
// the resumption: the events the client had, then f.
func again(p *replayer.Point, inj *injection, f *store.Frame) replayer.Action {
	var pieces [][]byte
	for _, e := range sseEvents(p.Recording, p.Stream.ID)[:inj.Event] {
		pieces = append(pieces, e.Raw)
	}
	return replayer.Action{Pieces: append(pieces, f.Raw)}
}

// judgeRedeliver judges a client whose resumption got events again: as
// after a resumable cut first; then each server request sent again
// answered once: pass; one answered twice: fail.
func judgeRedeliver(inj *injection, after, mine []chaosAction) (string, Verdict) {
	did, v := judgeResumable(inj, after, mine)
	if v != VerdictPass {
		return did, v
	}
	answers := map[string]int{}
	for _, a := range mine {
		if m := jsonrpc.Parse([]byte(a.body)); a.method == http.MethodPost && m.Kind.IsResponse() {
			answers[string(m.ID)]++
		}
	}
	var once []string
	for i, id := range inj.asked {
		if answers[id] > 1 {
			return fmt.Sprintf("%s, then answered the server request %s (id %s) %d times: it acted again on the events sent again", did, inj.askedMethods[i], id, answers[id]), VerdictFail
		}
		once = append(once, inj.askedMethods[i])
	}
	return fmt.Sprintf("%s, and answered %s once, though sent again", did, strings.Join(once, ", ")), VerdictPass
}
