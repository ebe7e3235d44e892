package replayer

import (
	"fmt"
	"net/http"
	"slices"

	"github.com/mcpvcr/mcpvcr/store"
)

// reorderHold is a reorder waiting for its other notification: sent is
// closed once it is.
type reorderHold struct {
	inj  *injection
	sent chan struct{}
}

// chaosHold holds a reorder's notification until its other notification
// was sent, for at most the fault's Delay: then it is sent anyway, and a
// warning says so. It never waits longer, so a client that never opens
// the other stream gets the held notification all the same.
func (ls *liveSession) chaosHold(r *http.Request, h *reorderHold) chaosStep {
	s := ls.srv
	cs := s.chaos()
	select {
	case <-h.sent:
		return chaosSend
	case <-s.clock().After(h.inj.Delay):
	case <-r.Context().Done():
	case <-s.http().done:
	}
	cs.mu.Lock()
	cs.holds = slices.DeleteFunc(cs.holds, func(g *reorderHold) bool { return g == h })
	if h.inj.first { // the other one was sent as the wait ended
		cs.mu.Unlock()
		return chaosSend
	}
	gone := r.Context().Err() != nil
	timedOut := !gone
	h.inj.timedOut = timedOut
	h.inj.left = gone
	cs.mu.Unlock()
	if gone {
		return chaosGone
	}
	if timedOut {
		s.logger().Warn(fmt.Sprintf("chaos: reorder: seq %d was not sent within %s; sent the held seq %d anyway (in recorded order)", h.inj.OtherSeq, h.inj.Delay, h.inj.Seq),
			"session", h.inj.session, "seed", s.Chaos.Seed)
	}
	return chaosSend
}

// clientAfter reports whether the recorded client sent a request (other
// than a DELETE's) after seq.
func clientAfter(rec *store.Recording, seq int64) bool {
	return slices.ContainsFunc(rec.Frames, func(f store.Frame) bool {
		return f.Seq > seq && f.Direction == store.ClientToServer && f.Kind == store.KindRequest
	})
}
