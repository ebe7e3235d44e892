package chaos

import (
	"net/http"

	"github.com/mcpvcr/mcpvcr/replayer"
	"github.com/mcpvcr/mcpvcr/store"
)

// delay and drop-priming: an event or answer that comes late, or a
// stream without its priming event; the client must wait for, or take,
// what follows.

func sitesDelay(rec *store.Recording, st *store.Stream, base Fault, evs []*store.Frame, requests int, cancelled map[int64]*store.Frame) []Fault {
	var out []Fault
	if st.Status != 200 || (st.Kind != store.PostStream && st.Kind != store.GetStream && st.Kind != store.SSEGetStream) {
		return out
	}
	if !st.SSE() {
		out = append(out, base) // a JSON answer, delayed whole
		return out
	}
	for e := range evs {
		f := base
		f.Event, f.Seq = e, evs[e].Seq
		out = append(out, f)
	}
	return out
}

func sitesDropPriming(rec *store.Recording, st *store.Stream, base Fault, evs []*store.Frame, requests int, cancelled map[int64]*store.Frame) []Fault {
	var out []Fault
	if st.Kind == store.PostStream && st.SSE() && len(evs) > 1 && evs[0].Kind == store.KindEmpty && evs[0].HasEventID {
		f := base
		f.Seq = evs[0].Seq
		out = append(out, f)
	}
	return out
}

func judgeDelay(inj *injection, after, mine []chaosAction) (string, Verdict) {
	switch {
	case inj.left && inj.StreamKind == store.GetStream && inj.waiting == "":
		// The standalone GET stream carries what the server sends of
		// its own; a client done with its work (every answer it asked
		// for in hand) may close it.
		return "left before the delayed event of its GET stream came, with every answer it asked for: it was done", VerdictNotObserved
	case inj.left && inj.StreamKind == store.GetStream:
		return "left before the delayed event of its GET stream came, still waiting for " + inj.waiting, VerdictFail
	case inj.left:
		return "left before the event came", VerdictFail
	case inj.delivered && inj.Kind == FaultDelay:
		return "waited and took the event", VerdictPass
	case inj.delivered:
		// The events after the missing priming one were written; the
		// client shows it took them by going on without asking again.
		for _, a := range mine {
			if a.method == http.MethodPost && inj.body != "" && a.body == inj.body {
				return "sent the request again: it abandoned the stream without its priming event", VerdictFail
			}
			if a.method == http.MethodPost && a.rpcMethod != "" {
				return "took the stream without its priming event and carried on (next: " + describe(a) + ")", VerdictPass
			}
		}
		if inj.more {
			return "sent nothing more after the stream without its priming event, where the recorded client went on", VerdictFail
		}
		return "the stream without its priming event was sent; nothing followed to show the client took it", VerdictNotObserved
	}
	return "the stream went on no further", VerdictNotObserved
}

// delayJSON waits a delay planned for the JSON answer of p.Stream; Stop
// when the client left first.
func (cs *Hook) delayJSON(p *replayer.Point) replayer.Action {
	ls, rec, n := p.Session, p.Recording, p.StreamNumber
	cs.mu.Lock()
	cs.answered[p.Request] = true // written next, or dropped with the client gone
	inj, ok := cs.takeLocked(ls, rec, func(g Fault) bool { return g.Kind == FaultDelay && g.Stream == n })
	cs.mu.Unlock()
	if !ok {
		return replayer.Action{}
	}
	cs.announce(inj)
	gone := !p.Wait(inj.Delay)
	cs.mu.Lock()
	inj.left, inj.delivered = gone, !gone
	cs.mu.Unlock()
	return replayer.Action{Stop: gone}
}
