package chaos

import (
	"slices"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/replayer"
	"github.com/mcpvcr/mcpvcr/store"
)

// Chaos replay over stdio: delays before server frames, late results,
// and the server exiting at a request. Stdio has no streams to cut or
// resume: the cut there is the server exiting (exit), after which nothing
// of the client is on the wire.

// stdioState is what chaos keeps of one stdio session.
type stdioState struct {
	// lateFor maps a live request id to the recorded request it matched,
	// for the requests a late-result fault may hit.
	lateFor map[string]*store.Frame
	// late maps the recorded answer of an injected late result (when the
	// recording holds one after the cancellation) to its injection.
	late map[*store.Frame]*injection
}

// stdioOfLocked returns the state of stdio session ls. cs.mu is held.
func (cs *Hook) stdioOfLocked(ls *replayer.Session) *stdioState {
	sc := cs.stdio[ls]
	if sc == nil {
		sc = &stdioState{lateFor: map[string]*store.Frame{}, late: map[*store.Frame]*injection{}}
		cs.stdio[ls] = sc
	}
	return sc
}

// stdioLine records a client line as it arrives and, for a cancellation
// of a request a late-result fault is planned for, injects it: the
// result the recording holds after the cancellation goes out as recorded
// (it is noted when written), or, when it holds none, one of replay's
// own, which it returns to send now.
func (cs *Hook) stdioLine(p *replayer.Point) replayer.Action {
	ls, rec, live := p.Session, p.Recording, jsonrpc.Parse(p.Body)
	a := chaosAction{ls: ls, rpcMethod: live.Method, rpcID: string(live.ID), body: string(live.Raw), cancels: cancelsID(live), at: p.At}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	sc := cs.stdioOfLocked(ls)
	if p.Matched != nil && live.Kind == jsonrpc.KindRequest {
		sc.lateFor[string(live.ID)] = p.Matched // the leader's: the plan is drawn from it
	}
	cs.actions = append(cs.actions, a)
	if p.Matched != nil && live.Kind == jsonrpc.KindRequest {
		if inj, ok := cs.takeLocked(ls, rec, func(g Fault) bool { return g.Kind == FaultExit && g.Seq == p.Matched.Seq }); ok {
			inj.rpcMethod, inj.rpcID = live.Method, string(live.ID)
			defer cs.announce(inj)
			return replayer.Action{Stop: true}
		}
	}
	req := sc.lateFor[a.cancels]
	if a.cancels == "" || req == nil {
		return replayer.Action{}
	}
	inj, ok := cs.takeLocked(ls, rec, func(g Fault) bool { return g.Kind == FaultLateResult && g.Seq == req.Seq })
	if !ok {
		return replayer.Action{}
	}
	inj.rpcID = a.cancels
	defer cs.announce(inj)
	if ans := answerAfter(rec, req); ans != nil {
		sc.late[ans] = inj // the recorded late result, sent as recorded
		return replayer.Action{}
	}
	inj.delivered = true
	return replayer.Action{Send: lateResult(a.cancels, req.Method)}
}

// answerAfter returns the recorded answer to request req, nil when the
// recording holds none.
func answerAfter(rec *store.Recording, req *store.Frame) *store.Frame {
	i := slices.IndexFunc(rec.Frames, func(f store.Frame) bool {
		return f.Direction == store.ServerToClient && f.Kind.IsResponse() && f.ID == req.ID && f.Seq > req.Seq
	})
	if i < 0 {
		return nil
	}
	return &rec.Frames[i]
}

// stdioBefore is called before recorded frame p.Frame is written: it
// waits a delay planned there (Stop when the session ended first).
func (cs *Hook) stdioBefore(p *replayer.Point) replayer.Action {
	cs.mu.Lock()
	inj, ok := cs.takeLocked(p.Session, p.Recording, func(g Fault) bool { return g.Kind == FaultDelay && g.Seq == p.Frame.Seq })
	cs.mu.Unlock()
	if !ok {
		return replayer.Action{}
	}
	cs.announce(inj)
	if !p.Wait(inj.Delay) {
		cs.mu.Lock()
		inj.left = true
		cs.mu.Unlock()
		return replayer.Action{Stop: true}
	}
	cs.mu.Lock()
	inj.delivered = true
	cs.mu.Unlock()
	return replayer.Action{}
}

// stdioAfter is called once p.Frame was written: a recorded late result
// is then delivered.
func (cs *Hook) stdioAfter(p *replayer.Point) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	sc := cs.stdioOfLocked(p.Session)
	if inj := sc.late[p.Frame]; inj != nil {
		inj.delivered, inj.at = true, len(cs.actions)-1
		delete(sc.late, p.Frame)
	}
}

// exitSites returns the requests of a stdio session, initialize aside,
// that the recorded server answered: where it can exit instead.
func exitSites(rec *store.Recording) []Fault {
	var out []Fault
	for i := range rec.Frames {
		f := &rec.Frames[i]
		if f.Direction == store.ClientToServer && f.Kind == store.KindRequest && f.Method != "initialize" && answerAfter(rec, f) != nil {
			out = append(out, Fault{Kind: FaultExit, Seq: f.Seq})
		}
	}
	return out
}

// judgeExit judges a client whose server exited at its request: what it
// did then is not on the wire replay sees (the server is gone); a client
// must read the end, fail the request and not wait for its answer, which
// a test of the client, not the verdict, can check.
func judgeExit(inj *injection) (string, Verdict) {
	return "met the server's exit at its " + inj.rpcMethod + " (id " + inj.rpcID + "): what it did next is not on the wire (the server is gone)", VerdictNotObserved
}
