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
	// swapped maps the recorded seq of a reorder's other response to the
	// held one's injection and bytes, written right after it.
	swapped map[int64]heldLine
	// requests counts the client's requests by id: a second with one id
	// is a request sent again.
	requests map[string]int
	// seen is the seq of the recorded line being written; pinnedAt what
	// it was when the session's plan was pinned (see pinLocked): the
	// faults of that plan before it were not the client's to reach.
	seen, pinnedAt int64
}

// heldLine is a response a reorder over stdio holds back.
type heldLine struct {
	inj  *injection
	line []byte
}

// stdioOfLocked returns the state of stdio session ls. cs.mu is held.
func (cs *Hook) stdioOfLocked(ls *replayer.Session) *stdioState {
	sc := cs.stdio[ls]
	if sc == nil {
		sc = &stdioState{lateFor: map[string]*store.Frame{}, late: map[*store.Frame]*injection{}, swapped: map[int64]heldLine{}, requests: map[string]int{}}
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
	if live.Kind == jsonrpc.KindRequest {
		if sc.requests[a.rpcID]++; sc.requests[a.rpcID] > 1 {
			for _, inj := range cs.injected {
				if inj.Kind == FaultReorder && inj.ls == ls && inj.rpcID == a.rpcID {
					inj.resent = true
				}
			}
		}
	}
	if p.Matched != nil && live.Kind == jsonrpc.KindRequest {
		exited := cs.exited[cs.pinLocked(ls, rec).Session.ID]
		if inj, ok := cs.takeLocked(ls, rec, func(g Fault) bool { return g.Kind == FaultExit && g.Seq == p.Matched.Seq && !exited }); ok {
			cs.exited[inj.session] = true // a restarted server works
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
// waits a delay planned there (Stop when the session ended first), and
// swaps the two responses of a reorder: the held one is skipped, and
// written right after the other.
func (cs *Hook) stdioBefore(p *replayer.Point) replayer.Action {
	cs.mu.Lock()
	sc := cs.stdioOfLocked(p.Session)
	sc.seen = p.Frame.Seq
	if h, ok := sc.swapped[p.Frame.Seq]; ok {
		delete(sc.swapped, p.Frame.Seq)
		h.inj.first, h.inj.delivered, h.inj.at = true, true, len(cs.actions)-1
		// The line that released the pair may be noted only after this:
		// the pair's requests are then no step after it.
		h.inj.pair = []string{h.inj.rpcID, string(jsonrpc.Parse(p.Body).ID)}
		cs.mu.Unlock()
		return replayer.Action{Replace: append(slices.Clip(p.Body), h.line...)}
	}
	if inj, a, ok := cs.lateRequestAtLocked(p); ok {
		cs.mu.Unlock()
		cs.announce(inj)
		return a
	}
	inj, ok := cs.takeLocked(p.Session, p.Recording, func(g Fault) bool {
		return (g.Kind == FaultDelay || g.Kind == FaultReorder) && g.Seq == p.Frame.Seq
	})
	if ok && inj.Kind == FaultReorder {
		sc.swapped[inj.OtherSeq] = heldLine{inj, slices.Clone(p.Body)}
		inj.rpcID = string(jsonrpc.Parse(p.Body).ID) // the live id, to tell its request sent again
		cs.mu.Unlock()
		cs.announce(inj)
		return replayer.Action{Skip: true}
	}
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

// judgeExit judges a client whose server exited at its request. What it
// did then is mostly not on the wire replay sees (the server is gone): a
// client must read the end, fail the request and not wait for its
// answer, which a test of the client, not the verdict, can check. What
// is on the wire is a restart: where one replay serves every stdio
// session (mcpvcrtest.Transport, a Server serving ServeStdio again), the
// exit is taken once per recorded session, so a client that starts its
// server again meets one that works; a new session that begins with
// initialize after the exit, nothing of another session between, is its
// restart. The rule asks for none, so no restart is not observed.
func judgeExit(inj *injection, all []chaosAction) (string, Verdict) {
	met := "met the server's exit at its " + inj.rpcMethod + " (id " + inj.rpcID + ")"
	for _, a := range all {
		switch {
		case a.ls == inj.ls:
			continue
		case a.rpcMethod == "initialize":
			return met + ", then restarted its server: a new session began with initialize", VerdictPass
		default:
			return met + "; another session went on after it (" + describe(a) + "): what this client did next is not on the wire", VerdictNotObserved
		}
	}
	return met + ": what it did next is not on the wire (the server is gone, and no new session began)", VerdictNotObserved
}

// stdioReorderSites returns the pairs of responses of a stdio session
// that may be written in the other order: the answers to two concurrent
// requests the client awaited (neither cancelled), written one right
// after the other (nothing of the session between them).
// Replay releases both at once, so the held one is written right after
// the other, never later.
func stdioReorderSites(rec *store.Recording) []Fault {
	stderr := map[int64]bool{}
	for _, st := range rec.Streams {
		stderr[st.ID] = st.Kind == store.StderrStream
	}
	awaited := awaitedResponses(rec)
	var out []Fault
	var prev *store.Frame
	for i := range rec.Frames {
		f := &rec.Frames[i]
		if stderr[f.StreamID] {
			continue // the server's log, not the session
		}
		if a := prev; a != nil && a.Direction == store.ServerToClient && f.Direction == store.ServerToClient &&
			awaited[a.Seq] && awaited[f.Seq] && !a.Malformed && !f.Malformed && a.ID != f.ID {
			out = append(out, Fault{Kind: FaultReorder, Seq: a.Seq, OtherSeq: f.Seq, Responses: true})
		}
		prev = f
	}
	return out
}
