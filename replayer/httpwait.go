package replayer

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/mcpvcr/mcpvcr/internal/script"
	"github.com/mcpvcr/mcpvcr/store"
)

// A live HTTP session's waits: released frames published to the streams
// that send them, and a stream waiting for the client to catch up with
// the recorded one.

// publish stores released frames for the streams that will send them,
// and wakes every stream waiting for the session to move on.
func (ls *liveSession) publish(outs []outFrame) {
	ls.mu.Lock()
	for _, o := range outs {
		ls.released[o.Frame] = o
	}
	close(ls.changed)
	ls.changed = make(chan struct{})
	ls.mu.Unlock()
}

// caughtUp reports whether the live client has done everything the
// recorded client did before offset t: sent every client frame and every
// DELETE.
func (ls *liveSession) caughtUp(rec *recording, t time.Duration) bool {
	ls.mu.Lock()
	for i := range rec.Streams {
		st := &rec.Streams[i]
		if st.Kind == store.DeleteStream && st.Opened < t && !ls.used[st.ID] {
			ls.mu.Unlock()
			return false
		}
	}
	ls.mu.Unlock()
	return ls.cur.caughtUp(t)
}

// waitEnd waits until the session caught up with the recorded client at
// the end of seg, then returns for the stream to end. A standalone GET
// stream waits as long as it takes (no request waits on it); any other
// stream, whose answers are sent, ends after Server.Wait anyway, with a
// warning naming the recorded client frames it waited for.
func (ls *liveSession) waitEnd(r *http.Request, rec *recording, seg *store.Stream) {
	if seg.Kind == store.GetStream || seg.Kind == store.SSEGetStream || ls.srv.wait() < 0 {
		ls.waitCaughtUp(r, rec, seg.Closed)
		return
	}
	if ls.caughtUp(rec, seg.Closed) {
		return
	}
	deadline := ls.srv.clock().After(ls.srv.wait())
	if ls.waitCaughtUpOr(r, rec, seg.Closed, deadline) || r.Context().Err() != nil || ls.srv.closed() {
		return
	}
	var awaited []string
	for _, f := range ls.cur.leader().unsent() {
		if f.Offset < seg.Closed && !script.RefusedFrame(rec.Recording, f) {
			awaited = append(awaited, fmt.Sprintf("seq %d (%s %s)", f.Seq, f.Kind, f.Method))
		}
	}
	ls.srv.logger().Warn("ended a stream after --wait: the recording ends it only after client frames this client has not sent",
		"session", rec.Session.ID, "stream", script.Ordinal(rec.Recording, seg.ID), "awaited", strings.Join(awaited, ", "), "wait", ls.srv.wait().String())
}

// waitCaughtUp waits until caughtUp(t), the client goes away or the
// server closes; it reports whether the session caught up.
func (ls *liveSession) waitCaughtUp(r *http.Request, rec *recording, t time.Duration) bool {
	return ls.waitCaughtUpOr(r, rec, t, nil)
}

// waitCaughtUpOr is waitCaughtUp that also gives up when deadline fires.
func (ls *liveSession) waitCaughtUpOr(r *http.Request, rec *recording, t time.Duration, deadline <-chan time.Time) bool {
	for {
		ls.mu.Lock()
		ch := ls.changed
		ls.mu.Unlock()
		if ls.caughtUp(rec, t) {
			return true
		}
		if ok, late := ls.srv.await(r, ch, deadline); !ok || late {
			return false
		}
	}
}

// waitReleased waits until f is released, the client goes away or the
// server closes.
func (ls *liveSession) waitReleased(r *http.Request, f *store.Frame) (outFrame, bool) {
	for {
		ls.mu.Lock()
		o, ok := ls.released[f]
		ch := ls.changed
		ls.mu.Unlock()
		if ok {
			return o, true
		}
		if ok, _ := ls.srv.await(r, ch, nil); !ok {
			return outFrame{}, false
		}
	}
}
