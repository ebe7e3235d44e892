package chaos

import (
	"fmt"
	"slices"
	"time"

	"github.com/mcpvcr/mcpvcr/replayer"
	"github.com/mcpvcr/mcpvcr/store"
)

// reorderHold is a reorder waiting for its other notification: sent is
// closed once it is.
type reorderHold struct {
	inj  *injection
	sent chan struct{}
}

// hold holds a reorder's notification, drawn from rec, until its
// other notification was sent, for at most the fault's Delay: then it is
// sent anyway, and a warning says so. It never waits longer, so a client
// that never opens the other stream gets the held notification all the
// same.
//
// Other candidate sessions may send the other notification only once the
// held one's stream goes on (their servers sent it later): while they are
// in play, the other stream waits for them to agree, and they wait for the
// held notification. So, as with an awaited answer the candidates
// disagree on, once the hold has lasted the settle time with other
// candidates in play, replay keeps rec's session alone.
func (cs *Hook) hold(p *replayer.Point, h *reorderHold) replayer.Action {
	ls, rec := p.Session, p.Recording
	bound := p.Clock.After(h.inj.Delay)
	var settle <-chan time.Time
	if ls.Candidates() > 1 {
		settle = p.Clock.After(min(ls.Settle(), h.inj.Delay))
	}
	done := p.Request.Context().Done()
wait:
	for {
		select {
		case <-h.sent:
			return replayer.Action{}
		case <-settle:
			settle = nil
			if ls.CommitTo(rec) {
				cs.logger().Warn("chaos: reorder: candidate sessions disagreed on what the other stream sends next; replaying only the session the pair was drawn from", "session", rec.Session.ID)
			}
		case <-bound:
			break wait
		case <-done:
			break wait
		case <-p.Closed:
			break wait
		}
	}
	cs.mu.Lock()
	cs.holds = slices.DeleteFunc(cs.holds, func(g *reorderHold) bool { return g == h })
	if h.inj.first { // the other one was sent as the wait ended
		cs.mu.Unlock()
		return replayer.Action{}
	}
	gone := p.Gone()
	timedOut := !gone
	h.inj.timedOut = timedOut
	h.inj.left = gone
	cs.mu.Unlock()
	if gone {
		return replayer.Action{Stop: true}
	}
	if timedOut {
		cs.logger().Warn(fmt.Sprintf("chaos: reorder: seq %d was not sent within %s; sent the held seq %d anyway (in recorded order)", h.inj.OtherSeq, h.inj.Delay, h.inj.Seq),
			"session", h.inj.session, "seed", cs.Seed)
	}
	return replayer.Action{}
}

// clientAfter reports whether the recorded client sent a request (other
// than a DELETE's) after seq.
func clientAfter(rec *store.Recording, seq int64) bool {
	if seq < 0 {
		return false
	}
	return slices.ContainsFunc(rec.Frames, func(f store.Frame) bool {
		return f.Seq > seq && f.Direction == store.ClientToServer && f.Kind == store.KindRequest
	})
}

// faultSeq returns the recorded seq at which f hits rec: the event at a
// stream's fault, the first client frame of the stream a fault before
// any event hits, of the POST a request's fault hits; -1 when none.
func faultSeq(rec *store.Recording, f Fault) int64 {
	if f.Seq > 0 {
		return f.Seq
	}
	posts := 0
	for n, st := range rec.Streams {
		if f.Request > 0 && st.Kind == store.PostStream {
			posts++
		}
		if (f.Request > 0 && posts == f.Request) || (f.Request == 0 && f.Stream == n+1) {
			for _, fr := range rec.Frames {
				if fr.StreamID == st.ID && fr.Direction == store.ClientToServer {
					return fr.Seq
				}
			}
			return -1
		}
	}
	return -1
}
