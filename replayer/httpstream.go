package replayer

import (
	"bytes"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/mcpvcr/mcpvcr/internal/sse"
	"github.com/mcpvcr/mcpvcr/store"
)

// play answers a live request as the recorded stream st was answered.
func (ls *liveSession) play(w http.ResponseWriter, r *http.Request, rec *recording, st *store.Stream, frames []*store.Frame) {
	ls.playWith(w, r, rec, st, st, frames)
}

// playWith answers with hdr's recorded status and headers and then sends
// frames, ending the way seg ended in the recording.
func (ls *liveSession) playWith(w http.ResponseWriter, r *http.Request, rec *recording, hdr, seg *store.Stream, frames []*store.Frame) {
	h := w.Header()
	for k, vs := range hdr.ResponseHeader {
		if !isHop(k) {
			h[k] = append([]string(nil), vs...)
		}
	}
	if sid := hdr.ResponseHeader.Get("Mcp-Session-Id"); sid != "" {
		h.Set("Mcp-Session-Id", ls.issueID(sid))
	}
	status := hdr.Status
	if status == 0 {
		// The recorded client left before the server answered: answer
		// nothing until this client leaves too.
		ls.hold(r)
		return
	}
	mt, _, _ := mime.ParseMediaType(hdr.ResponseHeader.Get("Content-Type"))
	if mt != "text/event-stream" {
		var body []byte
		for _, f := range frames {
			b, ok := ls.frameBytes(r, f)
			if !ok {
				return
			}
			body = append(body, b...)
		}
		if a := ls.srv.actHTTP(r, Point{Where: AtBefore, Session: ls.session(), Recording: rec.Recording, Stream: hdr, StreamNumber: ordinalOf(rec, hdr.ID)}); a.Stop || a.Cut {
			return
		}
		w.WriteHeader(status)
		_, _ = w.Write(body)
		return
	}

	rc := http.NewResponseController(w)
	w.WriteHeader(status)
	_ = rc.Flush()
	paced := ls.srv.Faults.Delay > 0 || ls.srv.Pace > 0
	for i, f := range frames {
		b, ok := ls.frameBytes(r, f)
		if !ok {
			return
		}
		// Events that are ready go out together: flush only before the
		// stream would wait (for the client, a delay or its end).
		more := func() bool { return i < len(frames)-1 && ls.isReleased(frames[i+1]) }
		if !ls.sendEvent(w, rc, r, rec, seg, f, b, paced, more, nil) {
			return
		}
	}
	ls.end(r, rec, seg)
}

// sendEvent sends event f (its bytes b; nil sends nothing) on recorded
// stream seg of rec: after --delay and the Hook before it, then the
// --cut or the Hook's cut after it, flushing when paced, cut, or the
// stream would wait next (more reports whether the next event is ready).
// written, if not nil, runs once b is written (before any cut). It
// reports false when the stream must end: the client left, or a write
// failed. A cut drops the
// connection as a network failure would: no clean end of the chunked
// body (it panics with http.ErrAbortHandler).
func (ls *liveSession) sendEvent(w http.ResponseWriter, rc *http.ResponseController, r *http.Request, rec *recording, seg *store.Stream, f *store.Frame, b []byte, paced bool, more func() bool, written func()) bool {
	// The Hook sees only what is sent; Faults (--delay, --cut) every
	// event.
	at := Point{Where: AtBefore, Session: ls.session(), Recording: rec.Recording, Stream: seg, StreamNumber: ordinalOf(rec, seg.ID), Frame: f}
	pieced := false
	switch a := ls.srv.actHTTPWith(r, at, b != nil); {
	case a.Stop:
		return false
	case a.Skip:
		return true
	case a.Cut:
		_ = rc.Flush()
		ls.abort()
	case a.Pieces != nil:
		if !ls.writePieces(w, rc, r, a.Pieces, a.Gap) {
			return false
		}
		pieced = true
		if written != nil {
			written()
		}
	case a.Replace != nil:
		b = a.Replace // a retry fault's rewritten priming event, say
	}
	if b != nil && !pieced {
		if _, err := w.Write(b); err != nil {
			return false
		}
		if written != nil {
			written()
		}
	}
	if !f.Comment {
		at.Events = ls.countEvent(seg.ID)
	}
	at.Where = AtAfter
	cutNow := ls.srv.actHTTPWith(r, at, b != nil).Cut
	if paced || cutNow || !more() {
		if err := rc.Flush(); err != nil {
			return false
		}
	}
	if cutNow {
		ls.abort()
	}
	return true
}

// writePieces writes an event in pieces, each flushed, gap apart; it
// reports false when a write failed or the client left.
func (ls *liveSession) writePieces(w http.ResponseWriter, rc *http.ResponseController, r *http.Request, pieces [][]byte, gap time.Duration) bool {
	for i, piece := range pieces {
		if i > 0 && gap > 0 {
			select {
			case <-ls.srv.clock().After(gap):
			case <-r.Context().Done():
				return false
			}
		}
		if _, err := w.Write(piece); err != nil {
			return false
		}
		if err := rc.Flush(); err != nil {
			return false
		}
	}
	return true
}

// abort counts a cut stream and drops its connection.
func (ls *liveSession) abort() {
	ls.mu.Lock()
	ls.rep.Cut++
	ls.mu.Unlock()
	panic(http.ErrAbortHandler)
}

// hold waits until the client leaves or the server closes.
func (ls *liveSession) hold(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-ls.srv.http().done:
	}
}

// countEvent counts an event sent on a recorded stream and returns the
// count so far.
func (ls *liveSession) countEvent(streamID int64) int {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	ls.cutEvents[streamID]++
	return ls.cutEvents[streamID]
}

// pause waits d on the server's clock; it reports false if the client
// left or the server closed first.
func (ls *liveSession) pause(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	select {
	case <-ls.srv.clock().After(d):
		return true
	case <-r.Context().Done():
		return false
	case <-ls.srv.http().done:
		return false
	}
}

// isReleased reports whether frameBytes would return f's bytes without
// waiting: f is released and, when it keeps its recorded delay (a
// server's cancellation of its own request), has none.
func (ls *liveSession) isReleased(f *store.Frame) bool {
	if !isProtocol(f) {
		return true
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	o, ok := ls.released[f]
	return ok && !(o.Timed && (o.Gap > 0 || !o.Born.IsZero()))
}

// frameBytes returns the bytes to send for recorded frame f, waiting until
// the replay engine releases it when it is a protocol frame.
func (ls *liveSession) frameBytes(r *http.Request, f *store.Frame) ([]byte, bool) {
	if f.SSE && f.Event == "endpoint" {
		data, why := localEndpoint(ls.recording().Session.Upstream, f.Data)
		if why != "" {
			// Record refuses such an endpoint; a cassette that holds one
			// was made by hand, and its client would POST elsewhere.
			ls.srv.noteInvented(r.Method+" "+r.URL.Path+" (HTTP+SSE stream)", http.StatusBadGateway, why)
			return nil, false
		}
		if data = ls.srv.bindEndpoint(r, data, ls); !bytes.Equal(data, f.Data) {
			return rewriteEvent(f, data), true
		}
	}
	if !isProtocol(f) {
		return f.Raw, true
	}
	o, ok := ls.waitReleased(r, f)
	if !ok {
		return nil, false
	}
	factor := ls.srv.Pace
	if factor <= 0 {
		factor = 1
	}
	if (ls.srv.Pace > 0 || o.Timed) && o.Gap > 0 {
		if !ls.pause(r, time.Duration(float64(o.Gap)*factor)) {
			return nil, false
		}
	}
	if o.Timed && !o.Born.IsZero() {
		// A poll of the client's task: not before its time since the task's creation.
		at := o.Born.Add(time.Duration(float64(o.Since) * factor))
		if !ls.pause(r, at.Sub(ls.srv.clock().Now())) {
			return nil, false
		}
	}
	if !f.SSE {
		return o.Data, true
	}
	if !o.Rewritten {
		return f.Raw, true
	}
	return rewriteEvent(f, o.Data), true
}

// rewriteEvent returns f's event block with data in place of its data.
func rewriteEvent(f *store.Frame, data []byte) []byte {
	var sp sse.Splitter
	evs := sp.Feed(nil, f.Raw)
	if len(evs) == 0 {
		if ev, ok := sp.End(); ok {
			evs = append(evs, ev)
		}
	}
	if len(evs) != 1 {
		return f.Raw
	}
	return evs[0].WithData(data).Raw
}

// localEndpoint returns the recorded HTTP+SSE endpoint event's data as
// replay announces it: a URL on the recorded upstream's origin becomes
// its path and query (the client resolves them against replay), a
// relative one stays as it is. An endpoint on another origin than the
// upstream's is refused, as record refuses it: why says so.
func localEndpoint(upstream string, data []byte) ([]byte, string) {
	raw := strings.TrimSpace(string(data))
	target, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Sprintf("the recorded endpoint event %q is not a URL", raw)
	}
	if !target.IsAbs() && target.Host == "" {
		return data, "" // relative: resolved against replay itself
	}
	base, err := url.Parse(upstream)
	if err != nil || base.Host == "" || !strings.EqualFold(base.Scheme, target.Scheme) || !strings.EqualFold(base.Host, target.Host) {
		return nil, fmt.Sprintf("the recorded endpoint event names %s, another origin than the recorded SSE stream (%s): replay, like record, will not send a client there", target.Redacted(), upstream)
	}
	return []byte(target.RequestURI()), ""
}

// isProtocol reports whether the replay engine matches or releases f:
// everything but the transport's own events: comments, events without
// data (priming, a close with retry) and the HTTP+SSE endpoint event.
func isProtocol(f *store.Frame) bool {
	if f.Comment {
		return false
	}
	return !(f.SSE && (f.Kind == store.KindEmpty || f.Event == "endpoint"))
}

// ordinalOf returns the number of a stream within its session, from 1, as
// mcpvcr show prints it.
func ordinalOf(rec *recording, id int64) int {
	for i := range rec.Streams {
		if rec.Streams[i].ID == id {
			return i + 1
		}
	}
	return 0
}
