package recorder

import (
	"context"
	"maps"
	"net/http"
	"slices"
	"time"

	"github.com/mcpvcr/mcpvcr/store"
)

// A recorder in front of a client all day sees session after session:
// what it keeps of each is let go when the session ends (its client's
// DELETE was answered 2xx, or the SSE stream of an HTTP+SSE session
// ended) or has idled for sessionIdle, once none of its
// exchanges is under way. Its record is closed in the sink then, as Close
// would close it, and a later request naming it starts a session of its
// own, as one the proxy did not see start. Within a session, the SSE
// event ids a resumption may name are kept for the last eventWindow
// events only, and the requests owed by cut streams for the last
// pendingWindow such streams.

// sessionIdle is how long a session may have no exchange under way
// before the recorder lets it go, as replay does (a server expires an
// idle session the same way).
const sessionIdle = 10 * time.Minute

// sweepEvery is how often the recorder looks for idle sessions.
const sweepEvery = time.Minute

// eventWindow is how many of a session's latest SSE event ids are kept
// for a client's Last-Event-ID: a client resumes from the last event it
// read, which is among the last the proxy forwarded. A resumption from an
// older one is recorded without the stream it resumes (as one from an id
// the proxy never saw).
const eventWindow = 1024

// pendingWindow is how many cut streams' unanswered requests a session
// keeps for the streams that resume them.
const pendingWindow = 256

// eventRef is the stream an event id leads to: the stream itself while
// its exchange is under way, then only its ID, so that a session's event
// ids do not keep the streams' headers in memory. Guarded by
// httpSession.mu.
type eventRef struct {
	st *store.Stream
	id int64
}

// stream returns the stream r leads to (only its ID once its exchange
// has ended), or nil for a nil r.
func (r *eventRef) stream() *store.Stream {
	switch {
	case r == nil:
		return nil
	case r.st != nil:
		return r.st
	}
	return &store.Stream{ID: r.id}
}

// settle lets the event ids of x's stream lead to its ID alone, once the
// exchange has ended.
func (hs *httpSession) settle(x *exchange) {
	hs.mu.Lock()
	ref := x.ref
	hs.mu.Unlock()
	if ref == nil {
		return
	}
	hs.session.mu.Lock() // the sink sets the stream's ID under it
	id := x.st.ID
	hs.session.mu.Unlock()
	hs.mu.Lock()
	ref.st, ref.id = nil, id
	hs.mu.Unlock()
}

// noteEventID remembers that x's stream carried event id, forgetting the
// oldest id beyond eventWindow. hs.mu is held.
func (hs *httpSession) noteEventID(id string, x *exchange) {
	if x.ref == nil {
		x.ref = &eventRef{st: x.st}
	}
	if _, ok := hs.eventTo[id]; !ok {
		if len(hs.eventIDs) < eventWindow {
			hs.eventIDs = append(hs.eventIDs, id)
		} else {
			// A ring: the oldest id is at eventNext.
			delete(hs.eventTo, hs.eventIDs[hs.eventNext])
			hs.eventIDs[hs.eventNext] = id
			hs.eventNext = (hs.eventNext + 1) % eventWindow
		}
	}
	hs.eventTo[id] = x.ref
}

// notePending keeps the request ids stream owed, forgetting the oldest
// stream's beyond pendingWindow. hs.mu is held.
func (hs *httpSession) notePending(stream int64, ids map[string]bool) {
	if _, ok := hs.pending[stream]; !ok {
		if len(hs.pendingOrder) == pendingWindow {
			delete(hs.pending, hs.pendingOrder[0])
			hs.pendingOrder = append(hs.pendingOrder[:0], hs.pendingOrder[1:]...)
		}
		hs.pendingOrder = append(hs.pendingOrder, stream)
	}
	hs.pending[stream] = ids
}

// opened notes an exchange of x's session beginning. A session let go
// between the lookup that found it and now is listed again, to be let go
// (its record closed anew) when this exchange ends. h.mu is held.
func (h *HTTP) opened(x *exchange) {
	if x.hs.at < 0 {
		h.listLocked(x.hs)
	}
	x.hs.open++
	x.hs.used = h.Clock.Now()
}

// closed notes x's exchange ending, and returns the sessions to retire
// now: x's own when it has ended (its client's DELETE was answered 2xx,
// or its HTTP+SSE stream ended) and nothing else of it is under way,
// and, once every sweepEvery, those idle for sessionIdle. h.mu is held.
func (h *HTTP) closed(x *exchange) []*httpSession {
	now := h.Clock.Now()
	hs := x.hs
	hs.open--
	hs.used = now
	switch {
	case x.st.Kind == store.DeleteStream && x.st.Status >= 200 && x.st.Status < 300:
		hs.ended = true
	case x.st.Kind == store.SSEGetStream && len(hs.endpoints) > 0:
		// An HTTP+SSE session lives as long as its SSE stream. (A GET
		// that gave no endpoint event, such as one a Streamable HTTP
		// server refused with 405, ends nothing.)
		hs.ended = true
	}
	var out []*httpSession
	if hs.ended && hs.open == 0 {
		out = append(out, h.unlistLocked(hs)...)
	}
	if now.Sub(h.swept) < sweepEvery {
		return out
	}
	h.swept = now
	for _, s := range slices.Clone(h.all) {
		if s.open == 0 && now.Sub(s.used) >= sessionIdle {
			out = append(out, h.unlistLocked(s)...)
		}
	}
	return out
}

// listLocked adds hs to h.all. h.mu is held.
func (h *HTTP) listLocked(hs *httpSession) {
	hs.at = len(h.all)
	h.all = append(h.all, hs)
}

// unlistLocked drops hs from every place a request may find it, and
// returns it, or nothing when it was dropped already. h.mu is held.
func (h *HTTP) unlistLocked(hs *httpSession) []*httpSession {
	i := hs.at
	if i < 0 || i >= len(h.all) || h.all[i] != hs {
		return nil
	}
	// The last session takes hs's place: a removal costs the same however
	// many sessions are live.
	last := h.all[len(h.all)-1]
	h.all[i], last.at = last, i
	h.all[len(h.all)-1] = nil
	h.all = h.all[:len(h.all)-1]
	hs.at = -1
	for _, sid := range hs.ids {
		if h.byID[sid] == hs {
			delete(h.byID, sid)
		}
	}
	for _, uri := range hs.endpoints {
		if h.byEndpoint[uri] == hs {
			delete(h.byEndpoint, uri)
		}
	}
	maps.DeleteFunc(h.pendingInit, func(_ *http.Request, s *httpSession) bool { return s == hs })
	if h.sessionless == hs {
		h.sessionless = nil
	}
	if h.modern == hs {
		h.modern = nil
	}
	if h.lastRefused == hs {
		h.lastRefused = nil
	}
	h.links.forget(hs)
	return []*httpSession{hs}
}

// retire closes the records of the sessions closed returned, and lets go
// of what they kept. The first error is kept for Err.
func (h *HTTP) retire(ctx context.Context, out []*httpSession) {
	for _, hs := range out {
		hs.endAtLast(ctx, -1)
		if err := hs.Err(); err != nil {
			h.mu.Lock()
			if h.err == nil {
				h.err = err
			}
			h.mu.Unlock()
		}
		hs.mu.Lock()
		hs.eventTo, hs.eventIDs, hs.eventNext, hs.pending, hs.pendingOrder = map[string]*eventRef{}, nil, 0, map[int64]map[string]bool{}, nil
		hs.mu.Unlock()
	}
}

// forget drops every link to hs.
func (l *authLinks) forget(hs *httpSession) {
	l.mu.Lock()
	defer l.mu.Unlock()
	maps.DeleteFunc(l.bound, func(_ string, s *httpSession) bool { return s == hs })
	l.waiting = slices.DeleteFunc(l.waiting, func(d *waitingDance) bool { return d.hs == hs })
}
