package replayer

import (
	"net/http"
	"time"
)

// Faults add to an HTTP replay what the recording lacks, for testing a
// client's recovery.
type Faults struct {
	// CutAfter cuts a recorded SSE stream after that many events: the
	// key is the stream's number within its session, as mcpvcr show
	// prints it (post#3 is 3). The connection drops as if the network
	// failed; the client may resume with Last-Event-ID.
	CutAfter map[int]int
	// ExpireAfter answers 404 (session expired) to every request of a
	// session after that many requests; 0 never expires.
	ExpireAfter int
	// Delay is waited before every SSE event and JSON answer.
	Delay time.Duration
}

// Act is the hand faults as a Hook, over HTTP: a session's request after
// ExpireAfter is answered 404, Delay is waited before each event and
// JSON answer, and a stream of CutAfter is cut after its count of
// events. 2026-07-28 exchanges and stdio get none of them.
func (f Faults) Act(p *Point) Action {
	if p.Pooled || p.Request == nil {
		return Action{}
	}
	switch p.Where {
	case AtRequest:
		if f.ExpireAfter > 0 && p.Session != nil && p.Requests > f.ExpireAfter {
			return jsonErrorAction(http.StatusNotFound, nil, -32001, "Session not found")
		}
	case AtBefore:
		if !p.Wait(f.Delay) {
			return Action{Stop: true}
		}
	case AtAfter:
		if n := f.CutAfter[p.StreamNumber]; n > 0 && p.Frame != nil && !p.Frame.Comment && p.Events == n {
			return Action{Cut: true}
		}
	}
	return Action{}
}

// zero reports whether f injects nothing.
func (f Faults) zero() bool { return f.ExpireAfter == 0 && f.Delay == 0 && len(f.CutAfter) == 0 }
