package replayer

import (
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/mcpvcr/mcpvcr/internal/script"
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
	rp := ls.reply(w, r)
	rp.head(hdr)
	if hdr.Status == 0 {
		// The recorded client left before the server answered: answer
		// nothing until this client leaves too.
		ls.hold(r)
		return
	}
	events := func(yield func(event) bool) {
		for i, f := range frames {
			b, ok := ls.frameBytes(r, f)
			if !ok {
				rp.done = true
				return
			}
			more := func() bool { return i < len(frames)-1 && ls.isReleased(frames[i+1]) }
			if !yield(event{rec: rec, st: seg, f: f, b: b, more: more}) {
				return
			}
		}
	}
	if rp.write(rec, hdr, events) && hdr.SSE() {
		ls.end(r, rec, seg)
	}
}

// hold waits until the client leaves or the server closes.
func (ls *liveSession) hold(r *http.Request) { ls.srv.await(r, nil, nil) }

// await waits until ch fires or deadline passes (either may be nil). It
// reports false when the client of r left or the server closed first,
// and late when deadline passed.
func (s *Server) await(r *http.Request, ch <-chan struct{}, deadline <-chan time.Time) (ok, late bool) {
	select {
	case <-ch:
		return true, false
	case <-deadline:
		return true, true
	case <-r.Context().Done():
		return false, false
	case <-s.http().done:
		return false, false
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
	ok, _ := ls.srv.await(r, nil, ls.srv.clock().After(d))
	return ok
}

// isReleased reports whether frameBytes would return f's bytes without
// waiting: f is released and, when it keeps its recorded delay (a
// server's cancellation of its own request), has none.
func (ls *liveSession) isReleased(f *store.Frame) bool {
	if !script.IsProtocol(f) {
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
	if !script.IsProtocol(f) {
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
	evs := sse.Split(f.Raw)
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
