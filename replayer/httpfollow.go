package replayer

import (
	"fmt"
	"iter"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mcpvcr/mcpvcr/internal/replayreport"
	"github.com/mcpvcr/mcpvcr/internal/script"
	"github.com/mcpvcr/mcpvcr/store"
)

// picker chooses, in one candidate, the recorded stream that answers a
// live request; nil when that candidate has none.
type picker func(*engine) *store.Stream

// memo returns a picker that asks pick once per candidate, and keeps its
// answer; streams holds the picks known already. The picker is safe for
// concurrent use: it runs on other requests too (translateEventID).
func memo(streams map[*engine]*store.Stream, pick picker) picker {
	var mu sync.Mutex // guards streams
	return func(e *engine) *store.Stream {
		mu.Lock()
		defer mu.Unlock()
		st, ok := streams[e]
		if !ok {
			st = pick(e)
			streams[e] = st
		}
		return st
	}
}

// streamStep is what every candidate agrees a live stream does next.
type streamStep struct {
	e  *engine       // the candidate that speaks for all
	st *store.Stream // e's recorded stream
	f  *store.Frame  // the frame to send; nil at the end of the stream
	// self is set when replay answered the request itself after a stall.
	self bool
	// inject is set when replay has answers of its own to send on this
	// HTTP+SSE stream first.
	inject bool
	// ahead is set when f, at position pos of this HTTP+SSE stream, is
	// sent before the frames recorded before it (see liveSession.ahead).
	ahead bool
	pos   int
}

// agree waits until every candidate gives the same value for position k
// of the stream pick chooses (k < 0: the stream's status and headers),
// and returns the leader's step. While they disagree and the client
// waits for an answer, it settles after Server.Settle. It reports false
// when the client left or the server closed.
func (ls *liveSession) agree(r *http.Request, pick picker, k int, liveID string, injectable bool, skipped map[int]bool) (streamStep, bool) {
	for {
		if liveID != "" && ls.cur.selfAnsweredID(liveID) {
			return streamStep{self: true}, true
		}
		if injectable && ls.hasInjected() {
			return streamStep{inject: true}, true
		}
		ls.mu.Lock()
		changed := ls.changed
		ls.mu.Unlock()
		curChanged, cands := ls.cur.snapshot()
		if len(cands) == 1 {
			// One candidate: nothing to agree on.
			if _, s, ready := ls.value(cands[0], pick, k); ready {
				return s, true
			}
		}
		var first string
		allReady, anyReady, same := true, false, true
		var lead streamStep
		for n, e := range cands {
			sig, s, ready := ls.value(e, pick, k)
			if n == 0 {
				lead, first = s, sig
			}
			if !ready {
				allReady = false
				continue
			}
			anyReady = true
			if sig != first {
				same = false
			}
		}
		if allReady && same {
			return lead, true
		}
		var settle, wait <-chan time.Time
		if anyReady && ls.cur.waiting() && len(cands) > 1 && (liveID != "" || injectable || len(ls.cur.stalls()) > 0) {
			// Settle only for what the client waits on: this stream's own
			// answer, or (a standalone GET stream) a request stalled in
			// every candidate, which may wait for what this stream sends.
			// A GET on which candidates disagree while an answer elsewhere
			// is merely in flight must not pick a candidate for the client.
			settle = ls.srv.clock().After(ls.cur.settleAfter(ls.srv.settle()))
		}
		stalledID := liveID
		if liveID != "" && !allReady {
			wait = ls.watchStall(liveID)
		} else if injectable {
			// On an HTTP+SSE stream every answer is awaited here.
			for _, st := range ls.cur.stalls() {
				if c := ls.watchStall(st.ID); c != nil {
					wait, stalledID = c, st.ID
					break
				}
			}
		}
		var aheadWait <-chan time.Time
		if injectable && wait == nil && !allReady {
			if a, ok := ls.ahead(pick, k, skipped); ok {
				aheadWait = ls.watchAhead(a)
			}
		}
		select {
		case <-aheadWait:
			if a, ok := ls.ahead(pick, k, skipped); ok {
				ls.mismatch(&Mismatch{Live: a.req.Data, Closest: a.req, Reason: a.why + "; replay sent its recorded answer out of recorded order"})
				return a.s, true
			}
		case <-wait:
			if ls.giveUp(stalledID) && injectable {
				ls.inject(replayreport.NoMatchAnswer([]byte(stalledID), ls.stallReport(stalledID)))
			}
		case <-changed:
		case <-curChanged:
		case <-settle:
			if ls.cur.settle() {
				ls.srv.logger().Info("candidate sessions disagreed on an awaited answer; replaying the first that can give it", "session", ls.cur.leader().rec.Session.ID)
			}
		case <-r.Context().Done():
			return streamStep{}, false
		case <-ls.srv.http().done:
			return streamStep{}, false
		}
	}
}

// value returns what e's stream does at position k, as a comparable
// signature, and whether it is known yet (a protocol frame is known once
// e released it).
func (ls *liveSession) value(e *engine, pick picker, k int) (string, streamStep, bool) {
	st := pick(e)
	if st == nil {
		return "none", streamStep{e: e}, true
	}
	s := streamStep{e: e, st: st}
	if k < 0 {
		mt, _, _ := mime.ParseMediaType(st.ResponseHeader.Get("Content-Type"))
		return fmt.Sprintf("%d %s", st.Status, mt), s, true
	}
	frames := e.rec.serverFrames()[st.ID]
	if k >= len(frames) {
		if (st.Kind == store.GetStream || st.Kind == store.SSEGetStream || st.Kind == store.ListenStream) && ls.cur.undivided(e) {
			// e speaks for sessions that part later: another's stream,
			// which follows the conversation, may go on past e's end
			// (a server request it sends). Known when they part.
			return "", s, false
		}
		return "end " + st.End.String(), s, true
	}
	f := frames[k]
	s.f = f
	if !script.IsProtocol(f) {
		// Transport events: their ids and the endpoint's session id are
		// the recording's own and differ between sessions.
		return fmt.Sprintf("transport %t %s", f.Comment, f.Event), s, true
	}
	ls.mu.Lock()
	o, ok := ls.released[f]
	ls.mu.Unlock()
	if !ok {
		return "", s, false
	}
	return "frame " + f.Event + " " + string(o.Data), s, true
}

// follow answers a live request with the recorded stream pick chooses,
// frame by frame, sending only what every candidate agrees on, so that
// the stream follows the conversation to whichever session the client's
// frames single out. liveID is the request the stream answers ("" for a
// GET): when replay answers it itself after a stall, so does the stream.
func (ls *liveSession) follow(w http.ResponseWriter, r *http.Request, pick picker, liveID string, none func()) {
	hd, ok := ls.agree(r, pick, -1, liveID, false, nil)
	switch {
	case !ok:
		return
	case hd.self:
		ls.writeStallAnswer(w, liveID, false)
		return
	case hd.st == nil:
		none()
		return
	}
	rp := ls.reply(w, r)
	rp.head(hd.st)
	if hd.st.Status == 0 {
		// The recorded client left before the server answered.
		ls.holdOrAnswer(w, r, liveID)
		return
	}
	if !hd.st.SSE() {
		rp.write(hd.e.rec, hd.st, ls.followJSON(rp, pick, liveID))
		return
	}
	var last streamStep
	if rp.write(hd.e.rec, hd.st, ls.followSSE(rp, pick, liveID, hd.st.Kind == store.SSEGetStream, &last)) {
		ls.endFollowed(rp, last, liveID)
	}
}

// followJSON yields the frames of a followed JSON answer, as every
// candidate agrees on them.
func (ls *liveSession) followJSON(rp *reply, pick picker, liveID string) iter.Seq[event] {
	return func(yield func(event) bool) {
		for k := 0; ; k++ {
			s, ok := ls.agree(rp.r, pick, k, liveID, false, nil)
			switch {
			case !ok:
				rp.done = true
				return
			case s.self:
				ls.writeStallAnswer(rp.w, liveID, false)
				rp.done = true
				return
			case s.f == nil:
				return
			}
			b, ok := ls.sendable(rp.r, s.f)
			if !ok {
				rp.done = true
				return
			}
			if !yield(event{b: b}) {
				return
			}
		}
	}
}

// followSSE yields the events of a followed SSE stream, as every
// candidate agrees on them, with answers of replay's own (-32019) on an
// HTTP+SSE stream (injectable), where the client waits for every answer.
// At the end of the stream it sets last to the step that ended it.
func (ls *liveSession) followSSE(rp *reply, pick picker, liveID string, injectable bool, last *streamStep) iter.Seq[event] {
	return func(yield func(event) bool) {
		skipped := map[int]bool{} // positions sent ahead of their turn
		for k := 0; ; k++ {
			if skipped[k] {
				continue
			}
			s, ok := ls.agree(rp.r, pick, k, liveID, injectable, skipped)
			if !ok {
				rp.done = true
				return
			}
			at, more := k, func() bool { return ls.nextReady(pick, k+1) }
			switch {
			case s.inject:
				k--
				injected := ls.takeInjected()
				for i, b := range injected {
					if !yield(event{b: b, quiet: true, more: func() bool { return i < len(injected)-1 }}) {
						return
					}
				}
				continue
			case s.self:
				ls.writeStallAnswer(rp.w, liveID, true)
				rp.done = true
				return
			case s.f == nil:
				*last = s
				return
			case s.ahead:
				skipped[s.pos] = true
				k--
				at, more = s.pos, nil
			}
			b, ok := ls.sendable(rp.r, s.f)
			if !ok {
				rp.done = true
				return
			}
			if !yield(event{rec: s.e.rec, st: s.st, f: s.f, b: b, more: more, written: func() { ls.noteEvent(s.f, pick, at) }}) {
				return
			}
		}
	}
}

// endFollowed ends a followed SSE stream at s, its last step: with
// replay's own answer when the recorded client left before the answer
// to liveID and this one waits for it, or as the Hook or the recording
// ends it.
func (ls *liveSession) endFollowed(rp *reply, s streamStep, liveID string) {
	if liveID != "" && s.st.End != store.EndComplete && s.st.End != store.EndServerClosed && ls.awaitStall(rp.r, liveID, false) {
		// The recorded client left before the answer (it cancelled,
		// say) and this one waits for it.
		ls.writeStallAnswer(rp.w, liveID, true)
		return
	}
	if liveID != "" && ls.hookEnd(rp.w, rp.r, s.e.rec, s.st, liveID) {
		return
	}
	ls.end(rp.r, s.e.rec, s.st)
}

// nextReady reports whether position k of the stream is known in the
// leader and can be sent without waiting.
func (ls *liveSession) nextReady(pick picker, k int) bool {
	sig, s, ready := ls.value(ls.cur.leader(), pick, k)
	return ready && sig != "none" && !strings.HasPrefix(sig, "end ") && (s.f == nil || ls.isReleased(s.f))
}

// sendable returns the bytes to send for f, which is released when it is
// a protocol frame; nil when it answers a request replay answered itself.
func (ls *liveSession) sendable(r *http.Request, f *store.Frame) ([]byte, bool) {
	b, ok := ls.frameBytes(r, f)
	if !ok || !script.IsProtocol(f) {
		return b, ok
	}
	ls.mu.Lock()
	o := ls.released[f]
	ls.mu.Unlock()
	if !ls.cur.markSent(o) {
		return nil, true
	}
	return b, true
}

// end ends a followed SSE stream the way the recording ended it.
func (ls *liveSession) end(r *http.Request, rec *recording, seg *store.Stream) {
	switch seg.End {
	case store.EndComplete, store.EndServerClosed:
		// End where the recording ended: once the client has done what the
		// recorded client did before the server closed (a standalone GET
		// stream the server closed at the session's DELETE stays open
		// until this client deletes too).
		ls.waitEnd(r, rec, seg)
		return
	case store.EndUpstreamError:
		ls.waitEnd(r, rec, seg)
		panic(http.ErrAbortHandler)
	}
	// The recorded client left first (or the recording stopped): keep the
	// stream open until this client leaves too.
	ls.hold(r)
}

// noteEvent remembers where an event id the client may resume from was
// sent: the stream and position, the same in every candidate.
func (ls *liveSession) noteEvent(f *store.Frame, pick picker, k int) {
	if !f.HasEventID || f.EventID == "" {
		return
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	ls.sentEvents[f.EventID] = sentEvent{pick: pick, k: k}
}

// sentEvent is where an event was sent: position k of the stream pick
// chooses.
type sentEvent struct {
	pick picker
	k    int
}

// translateEventID maps an event id this client received to the id the
// leader's recording gave the event at the same place.
func (ls *liveSession) translateEventID(id string) string {
	ls.mu.Lock()
	se, ok := ls.sentEvents[id]
	ls.mu.Unlock()
	if !ok {
		return id
	}
	e := ls.cur.leader()
	st := se.pick(e)
	if st == nil {
		return id
	}
	frames := e.rec.serverFrames()[st.ID]
	if se.k < len(frames) && frames[se.k].HasEventID {
		return frames[se.k].EventID
	}
	return id
}

// inject queues an answer of replay's own for the HTTP+SSE stream.
func (ls *liveSession) inject(msg []byte) {
	ls.mu.Lock()
	ls.injected = append(ls.injected, sseMessage(msg))
	ls.mu.Unlock()
	ls.publish(nil)
}

func (ls *liveSession) hasInjected() bool {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return len(ls.injected) > 0
}

func (ls *liveSession) takeInjected() [][]byte {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	b := ls.injected
	ls.injected = nil
	return b
}

// hookEnd calls the Hook where followed stream st of rec ends without
// the answer to live request liveID. It reports whether the Hook ended
// the stream (with one more event of its own, or without).
func (ls *liveSession) hookEnd(w http.ResponseWriter, r *http.Request, rec *recording, st *store.Stream, liveID string) bool {
	a := ls.srv.actHTTP(r, Point{Where: AtEnd, Session: ls.session(), Recording: rec.Recording, Stream: st, StreamNumber: script.Ordinal(rec.Recording, st.ID), LiveID: liveID})
	if a.Send == nil {
		return a.Stop
	}
	_, err := w.Write(a.Send)
	if err == nil {
		err = http.NewResponseController(w).Flush()
	}
	if a.Sent != nil {
		a.Sent(err)
	}
	return true
}
