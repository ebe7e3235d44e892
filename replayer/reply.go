package replayer

import (
	"iter"
	"net/http"
	"slices"
	"time"

	"github.com/mcpvcr/mcpvcr/internal/mcpwire"
	"github.com/mcpvcr/mcpvcr/internal/script"
	"github.com/mcpvcr/mcpvcr/store"
)

// One writer answers every HTTP request replay answers as recorded:
// reply.write. The answer's source (a 2026-07-28 exchange of the pool, a
// recorded stream played as it is, a stream followed across candidates)
// yields the frames, in order; the writer copies the recorded status and
// headers, gathers a JSON answer whole, and sends SSE events with the
// Hook around each. The source then ends the stream as its recording did.

// event is one frame of an answer, as its source yields it.
type event struct {
	rec *recording
	st  *store.Stream // the recorded stream f is on
	f   *store.Frame
	// b is what to send; nil sends nothing, though Faults (not the Hook)
	// still act around it.
	b []byte
	// quiet sends b without calling the hooks (a pooled exchange's
	// comment, or an answer of replay's own).
	quiet bool
	// written, if not nil, runs once b is written (before any cut).
	written func()
	// more reports whether the next event is ready, so that events that
	// are ready go out together; nil flushes after this one.
	more func() bool
}

// reply is one answer being written, and what its source tells the
// hooks.
type reply struct {
	srv *Server
	w   http.ResponseWriter
	r   *http.Request
	// issue returns the session id to issue for the recorded one; nil
	// keeps the recorded one.
	issue func(recorded string) string
	// at returns the Point the hooks see for event f of st (nil f: a
	// JSON answer, whole).
	at func(where Where, rec *recording, st *store.Stream, f *store.Frame) Point
	// count counts an event sent on st, comments aside, and returns how
	// many were so far (Point.Events at AtAfter).
	count func(st *store.Stream) int
	// cut, if not nil, notes a cut before the connection drops.
	cut func()
	// paced flushes after every event (--delay, Server.Pace).
	paced bool
	// done is set by a source that answered itself (or must not answer):
	// the writer writes nothing more.
	done bool
}

// head copies st's recorded headers to the answer, with the session id
// issued in place of the recorded one.
func (rp *reply) head(st *store.Stream) {
	h := rp.w.Header()
	for k, vs := range st.ResponseHeader {
		if !mcpwire.HopHeader(k) {
			h[k] = slices.Clone(vs)
		}
	}
	if sid := st.ResponseHeader.Get("Mcp-Session-Id"); sid != "" && rp.issue != nil {
		h.Set("Mcp-Session-Id", rp.issue(sid))
	}
}

// write answers with st's recorded status (st of rec; its headers went
// out with head) and the events yields: one JSON body, or SSE events
// one by one. It reports whether every event went out and the stream
// may end as recorded.
func (rp *reply) write(rec *recording, st *store.Stream, events iter.Seq[event]) bool {
	if !st.SSE() {
		var body []byte
		for ev := range events {
			body = append(body, ev.b...)
		}
		if rp.done {
			return false
		}
		if a := rp.srv.actHTTP(rp.r, rp.at(AtBefore, rec, st, nil)); a.Stop || a.Cut {
			return false
		}
		rp.w.WriteHeader(st.Status)
		_, _ = rp.w.Write(body)
		return true
	}
	rc := http.NewResponseController(rp.w)
	rp.w.WriteHeader(st.Status)
	_ = rc.Flush()
	for ev := range events {
		if !rp.send(rc, ev) {
			rp.done = true
			break
		}
	}
	return !rp.done
}

// send sends one event: after the hooks before it (--delay, a fault's
// skip, cut or replacement), then the hooks after it (--cut), flushing
// when paced, cut, or the stream would wait next. It reports false when
// the stream must end: the client left, or a write failed. A cut drops
// the connection as a network failure would: no clean end of the chunked
// body (it panics with http.ErrAbortHandler).
func (rp *reply) send(rc *http.ResponseController, ev event) bool {
	b, more := ev.b, ev.more
	if more == nil {
		more = func() bool { return false }
	}
	if ev.quiet {
		if _, err := rp.w.Write(b); err != nil {
			return false
		}
		return more() || rc.Flush() == nil
	}
	// The Hook sees only what is sent; Faults every event.
	at := rp.at(AtBefore, ev.rec, ev.st, ev.f)
	pieced := false
	switch a := rp.srv.actHTTPWith(rp.r, at, b != nil); {
	case a.Stop:
		return false
	case a.Skip:
		return true
	case a.Cut:
		_ = rc.Flush()
		rp.abort()
	case a.Pieces != nil:
		if !rp.pieces(rc, a.Pieces, a.Gap) {
			return false
		}
		pieced = true
		if ev.written != nil {
			ev.written()
		}
	case a.Replace != nil:
		b = a.Replace // a retry fault's rewritten priming event, say
	}
	if b != nil && !pieced {
		if _, err := rp.w.Write(b); err != nil {
			return false
		}
		if ev.written != nil {
			ev.written()
		}
	}
	at = rp.at(AtAfter, ev.rec, ev.st, ev.f)
	if !ev.f.Comment {
		at.Events = rp.count(ev.st)
	}
	cutNow := rp.srv.actHTTPWith(rp.r, at, b != nil).Cut
	if rp.paced || cutNow || !more() {
		if err := rc.Flush(); err != nil {
			return false
		}
	}
	if cutNow {
		rp.abort()
	}
	return true
}

// pieces writes an event in pieces, each flushed, gap apart; it reports
// false when a write failed or the client left.
func (rp *reply) pieces(rc *http.ResponseController, pieces [][]byte, gap time.Duration) bool {
	for i, piece := range pieces {
		if i > 0 && gap > 0 {
			if ok, _ := rp.srv.await(rp.r, nil, rp.srv.clock().After(gap)); !ok {
				return false
			}
		}
		if _, err := rp.w.Write(piece); err != nil {
			return false
		}
		if err := rc.Flush(); err != nil {
			return false
		}
	}
	return true
}

// abort notes a cut and drops the connection.
func (rp *reply) abort() {
	if rp.cut != nil {
		rp.cut()
	}
	panic(http.ErrAbortHandler)
}

// reply returns the writer of an answer to live session ls.
func (ls *liveSession) reply(w http.ResponseWriter, r *http.Request) *reply {
	return &reply{
		srv: ls.srv, w: w, r: r, issue: ls.issueID,
		at: func(where Where, rec *recording, st *store.Stream, f *store.Frame) Point {
			return Point{Where: where, Session: ls.session(), Recording: rec.Recording, Stream: st, StreamNumber: script.Ordinal(rec.Recording, st.ID), Frame: f}
		},
		count: func(st *store.Stream) int { return ls.countEvent(st.ID) },
		cut: func() {
			ls.mu.Lock()
			ls.rep.Cut++
			ls.mu.Unlock()
		},
		paced: ls.srv.Faults.Delay > 0 || ls.srv.Pace > 0,
	}
}
