package replayer

import (
	"fmt"
	"net/http"
	"time"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/internal/replayreport"
	"github.com/mcpvcr/mcpvcr/internal/script"
	"github.com/mcpvcr/mcpvcr/store"
)

// aheadStep is an answer sent ahead of its turn on an HTTP+SSE stream.
type aheadStep struct {
	s   streamStep
	id  string       // the live request it answers
	req *store.Frame // the recorded request it answers
	why string       // why it is not sent in its turn
}

// ahead is for an HTTP+SSE stream, which carries every answer in the
// order recorded: when position k waits for client frames this client
// has not sent (it skipped a recorded request, say), it returns the
// first later answer on the stream to an outstanding request that is
// released, alike in every candidate. Its recorded answer does not
// depend on what the client skipped; it only followed it on the one
// stream, and is sent out of turn once Server.Wait runs out.
func (ls *liveSession) ahead(pick picker, k int, skipped map[int]bool) (aheadStep, bool) {
	_, cands := ls.cur.snapshot()
	lead := cands[0]
	st := pick(lead)
	if st == nil {
		return aheadStep{}, false
	}
	frames := lead.rec.serverFrames()[st.ID]
	if k < 0 || k >= len(frames) || ls.isReleased(frames[k]) {
		return aheadStep{}, false
	}
	for j := k + 1; j < len(frames); j++ {
		f := frames[j]
		if skipped[j] || !script.IsProtocol(f) || !ls.isReleased(f) {
			continue
		}
		ls.mu.Lock()
		o := ls.released[f]
		ls.mu.Unlock()
		ids := jsonrpc.Parse(o.Data).ResponseIDs()
		if len(ids) != 1 || !ls.cur.isOutstanding(ids[0]) {
			continue
		}
		sig, s, _ := ls.value(lead, pick, j)
		for _, e := range cands[1:] {
			if other, _, ready := ls.value(e, pick, j); !ready || other != sig {
				return aheadStep{}, false
			}
		}
		s.ahead, s.pos = true, j
		req, why := ls.cur.behind(lead, frames[k], f)
		if req == nil {
			return aheadStep{}, false
		}
		return aheadStep{s: s, id: ids[0], req: req, why: why}, true
	}
	return aheadStep{}, false
}

// watchAhead logs, once, that a request waits behind an answer that
// waits for client frames not sent, and returns a channel that fires
// when Server.Wait is over; nil when replay waits for good.
func (ls *liveSession) watchAhead(a aheadStep) <-chan time.Time {
	return ls.watch(a.id, func() {
		wait := "forever (--wait 0)"
		if ls.srv.wait() >= 0 {
			wait = ls.srv.wait().String() + ", then its recorded answer is sent out of recorded order"
		}
		ls.srv.logger().Warn("a request waits: "+a.why, "wait", wait)
	})
}

// watch notes when live request id began to wait, calling first the
// first time, and returns a channel that fires when Server.Wait is over;
// nil when replay waits for good.
func (ls *liveSession) watch(id string, first func()) <-chan time.Time {
	now := ls.srv.clock().Now()
	ls.mu.Lock()
	since, seen := ls.stalled[id]
	if !seen {
		since = now
		ls.stalled[id] = now
	}
	ls.mu.Unlock()
	if !seen {
		first()
	}
	if ls.srv.wait() < 0 {
		return nil
	}
	return ls.srv.clock().At(since.Add(ls.srv.wait()))
}

// awaitStall waits, at the end of a recorded stream the recorded client
// left before its answer, while live request id is stalled: it reports
// true once replay gave up on it (Server.Wait), false when it is not
// stalled (answered, cancelled as recorded, or waiting for good) or the
// client left.
// With hold set, it waits on while id is not stalled, until the client
// leaves.
func (ls *liveSession) awaitStall(r *http.Request, id string, hold bool) bool {
	for {
		ch := ls.cur.wakeup()
		if ls.cur.selfAnsweredID(id) {
			return true
		}
		wait := ls.watchStall(id)
		if wait == nil && !hold {
			return false
		}
		ok, late := ls.srv.await(r, ch, wait)
		if !ok {
			return false
		}
		if late {
			ls.giveUp(id)
		}
	}
}

// holdOrAnswer keeps a request the recording never answered open until
// the client leaves, or answers it with -32019 once replay gives up
// waiting for it (Server.Wait).
func (ls *liveSession) holdOrAnswer(w http.ResponseWriter, r *http.Request, liveID string) {
	if liveID == "" {
		ls.hold(r)
		return
	}
	if ls.awaitStall(r, liveID, true) {
		ls.writeStallAnswer(w, liveID, false)
	}
}

// stallOf returns the stall of live request id, if it is stalled in
// every candidate.
func (ls *liveSession) stallOf(id string) (stall, bool) {
	for _, st := range ls.cur.stalls() {
		if st.ID == id {
			return st, true
		}
	}
	return stall{}, false
}

// watchStall logs a newly stalled request once and returns a channel
// that fires when its wait is over; nil when it is not stalled or waits
// for good.
func (ls *liveSession) watchStall(id string) <-chan time.Time {
	st, ok := ls.stallOf(id)
	if !ok {
		return nil
	}
	return ls.watch(id, func() {
		if !st.Expected {
			ls.srv.logger().Warn("a request waits: "+st.Describe(), "wait", ls.srv.waitText())
		}
	})
}

// writeStallAnswer answers a request replay gave up waiting for with
// -32019: as a JSON body, or as an SSE event on a stream already open.
func (ls *liveSession) writeStallAnswer(w http.ResponseWriter, id string, sse bool) {
	writeOwn(w, replayreport.NoMatchAnswer([]byte(id), ls.stallReport(id)), sse)
}

// writeOwn writes msg, an answer of replay's own: as a JSON body, or as
// an SSE event on a stream already open, flushed.
func writeOwn(w http.ResponseWriter, msg []byte, sse bool) {
	if sse {
		_, _ = w.Write(sseMessage(msg))
		_ = http.NewResponseController(w).Flush()
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(msg)
}

// sseMessage returns msg as an SSE message event.
func sseMessage(msg []byte) []byte { return fmt.Appendf(nil, "event: message\ndata: %s\n\n", msg) }

// giveUp answers a stalled request itself: its recorded answer will not
// be sent, and the stall is reported like an unmatched frame. When the
// recording answers it only after a cancellation this client did not
// send, it releases that answer instead (see cursor.waive) and reports
// false.
func (ls *liveSession) giveUp(id string) bool {
	st, ok := ls.stallOf(id)
	if !ok {
		return false
	}
	if outs, ok := ls.cur.waive(st); ok {
		ls.srv.logger().Warn("the client did not cancel where the recorded one did; sending what the recording holds after that cancellation", "request", st.Describe())
		// The streams that send them wait for them in ls.released.
		ls.publish(outs)
		return false
	}
	mm := st.Mismatch()
	ls.mu.Lock()
	ls.stallReports[id] = mm
	ls.mu.Unlock()
	ls.cur.answerSelf(id)
	ls.mismatch(mm)
	return true
}

// stallReport returns the report of a request replay answered itself.
func (ls *liveSession) stallReport(id string) *Mismatch {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if m, ok := ls.stallReports[id]; ok {
		return m
	}
	return &Mismatch{Reason: "replay gave up waiting for the recorded answer"}
}
