// The faults chaos injects at a request of a live session: an expiry, a
// 503, a request never answered, a refused GET stream, and what a
// resumption of a cut stream is answered.

package chaos

import (
	"net/http"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/replayer"
)

// request injects the faults at a request of p.Session: an expired
// session (404 from its POST n on) and a 503 (its POST n).
func (cs *Hook) request(p *replayer.Point) replayer.Action {
	r, ls, body, live := p.Request, p.Session, p.Body, jsonrpc.Parse(p.Body)
	rec := ls.Recording()
	cs.mu.Lock()
	n := 0
	if r.Method == http.MethodPost {
		cs.posts[ls]++
		n = cs.posts[ls]
	}
	if r.Method == http.MethodPost && isPingAnswer(body) {
		// The answer to chaos's own ping: the recording expects none.
		cs.posts[ls]--
		cs.answered[r] = true
		cs.mu.Unlock()
		return replayer.Action{Status: http.StatusAccepted}
	}
	if cs.posts[ls] <= 1 {
		// The opening request (or a GET before it): no fault goes
		// there, and the session it follows is not known until it is
		// matched, so nothing is taken (which would pin the plan).
		cs.mu.Unlock()
		return replayer.Action{}
	}
	exp := cs.expired[ls]
	if exp == nil && n > 0 {
		if inj, ok := cs.takeLocked(ls, rec, func(f Fault) bool { return f.Kind == FaultExpire && f.Request == n }); ok {
			cs.expired[ls], exp = inj, inj
			defer cs.announce(inj)
		}
	}
	if exp != nil {
		cs.goneLocked(r, ls)
		cs.answered[r] = true
	}
	var unavailable, lost *injection
	if exp == nil && r.Method == http.MethodPost {
		if lost = cs.noAnswerLocked(ls, rec, n, body); lost != nil {
			cs.answered[r] = true // announced below, before a timeout holds it
		}
	}
	if exp == nil && lost == nil && r.Method == http.MethodPost {
		if inj, ok := cs.takeLocked(ls, rec, func(f Fault) bool { return f.Kind == Fault503 && f.Request == n }); ok {
			inj.body, inj.rpcMethod, inj.rpcID = string(body), live.Method, string(live.ID)
			unavailable = inj
			inj.cutAt = p.At
			cs.answered[r] = true
			cs.posts[ls]-- // not a POST of the conversation: it is to come again
			defer cs.announce(inj)
		}
	}
	cs.mu.Unlock()
	switch {
	case exp != nil:
		return jsonError(http.StatusNotFound, -32001, "Session not found")
	case unavailable != nil:
		return unavailable503()
	case lost != nil && lost.Kind == FaultTimeout:
		cs.announce(lost) // now, not once the client has left
		return cs.hang(p, lost)
	case lost != nil:
		cs.announce(lost)
		return noAnswer(lost)
	}
	return replayer.Action{}
}

// refuseGetAt answers a standalone GET of p.Session with 405 when its
// plan refuses them: every one from the first planned on.
func (cs *Hook) refuseGetAt(p *replayer.Point) replayer.Action {
	ls := p.Session
	cs.mu.Lock()
	inj := cs.refuseGet[ls]
	if inj == nil && cs.posts[ls] > 0 { // a GET before any POST opens an HTTP+SSE stream
		if i, ok := cs.takeLocked(ls, ls.Recording(), func(f Fault) bool { return f.Kind == FaultRefuseGet }); ok {
			cs.refuseGet[ls], inj = i, i
			defer cs.announce(i)
		}
	}
	cs.mu.Unlock()
	if inj == nil {
		return replayer.Action{}
	}
	return replayer.Action{Status: http.StatusMethodNotAllowed, Header: http.Header{"Allow": {"POST, DELETE"}}}
}

// resume answers a resumption of a stream chaos cut: 404 for a
// resume-404, the rest late for a resume-late (Stop when the client left
// while it waited).
func (cs *Hook) resume(p *replayer.Point) replayer.Action {
	ls, lastID := p.Session, p.LastEventID
	cs.mu.Lock()
	var cut *injection
	for _, inj := range cs.injected {
		if inj.ls == ls && inj.lastID == lastID && (inj.Kind == FaultResume404 || inj.Kind == FaultResumeLate) {
			cut = inj
		}
	}
	if cut != nil && cut.Kind == FaultResumeLate {
		if cut.delivered || cut.left {
			cut = nil // its resumption was answered late once
		} else {
			cs.awaiting[liveStream{ls, cut.Stream}] = cut
		}
	}
	cs.mu.Unlock()
	switch {
	case cut == nil:
		return replayer.Action{}
	case cut.Kind == FaultResume404:
		// The session is gone, as a 404 to its id says: every request
		// of it is answered 404 from now on.
		cs.mu.Lock()
		if cs.expired[ls] == nil {
			cs.expired[ls] = cut
		}
		cs.goneLocked(p.Request, ls)
		cs.mu.Unlock()
		return jsonError(http.StatusNotFound, -32001, "mcpvcr replay --chaos: unknown Last-Event-ID "+lastID+" (an injected fault)")
	}
	if !p.Wait(cut.Delay) {
		cs.mu.Lock()
		cut.left = true
		cs.mu.Unlock()
		return replayer.Action{Stop: true}
	}
	return replayer.Action{}
}

// resumedEmpty notes that the resumption of a stream cut after its last
// event was served: nothing was left to send, so what the client asked
// for it got.
func (cs *Hook) resumedEmpty(p *replayer.Point) {
	ls, lastID := p.Session, p.LastEventID
	cs.mu.Lock()
	defer cs.mu.Unlock()
	for key, inj := range cs.awaiting {
		if key.ls == ls && inj.lastID == lastID && (inj.Kind == FaultCutResumable || inj.Kind == FaultRetry) {
			inj.delivered = true
			delete(cs.awaiting, key)
		}
	}
}
