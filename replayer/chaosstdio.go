package replayer

import (
	"context"
	"slices"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/store"
)

// stdioChaos is chaos replay over stdio: delays before server frames and
// late results. Stdio has no streams to cut or resume: a cut there would
// be the server exiting, which is not a fault a client can recover from.
type stdioChaos struct {
	srv *Server
	ls  *liveSession // stands for the stdio session in the chaos state
	cur *cursor
	// lateFor maps a live request id to the recorded request it matched,
	// for the requests a late-result fault may hit.
	lateFor map[string]*store.Frame
	// late maps the recorded answer of an injected late result (when the
	// recording holds one after the cancellation) to its injection.
	late map[*store.Frame]*injection
}

// newStdioChaos returns the chaos of one stdio session on cur; nil when
// chaos is off.
func (s *Server) newStdioChaos(cur *cursor) *stdioChaos {
	if !s.Chaos.On {
		return nil
	}
	cs := s.chaos()
	sc := &stdioChaos{srv: s, ls: &liveSession{srv: s, cur: cur}, cur: cur, lateFor: map[string]*store.Frame{}, late: map[*store.Frame]*injection{}}
	cs.mu.Lock()
	cs.stdio = append(cs.stdio, sc.ls)
	cs.mu.Unlock()
	return sc
}

// note records a client line as it arrives and, for a cancellation of a
// request a late-result fault is planned for, injects it: the result
// the recording holds after the cancellation goes out as recorded (it
// is noted when written), or, when it holds none, one of replay's own.
// It returns what to send now.
func (sc *stdioChaos) note(live jsonrpc.Message, rc receipt) []outFrame {
	if sc == nil {
		return nil
	}
	s := sc.srv
	cs := s.chaos()
	rec := sc.cur.leader().rec.Recording
	a := chaosAction{ls: sc.ls, rpcMethod: live.Method, rpcID: string(live.ID), body: string(live.Raw), cancels: cancelsID(live), at: s.clock().Now()}
	if f := rc.matched[sc.cur.leader()]; f != nil && live.Kind == jsonrpc.KindRequest {
		sc.lateFor[string(live.ID)] = f // the leader's: the plan is drawn from it
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.actions = append(cs.actions, a)
	req := sc.lateFor[a.cancels]
	if a.cancels == "" || req == nil {
		return nil
	}
	inj, ok := cs.takeLocked(s.Chaos, sc.ls, rec, func(g Fault) bool { return g.Kind == FaultLateResult && g.Seq == req.Seq })
	if !ok {
		return nil
	}
	inj.rpcID = a.cancels
	defer s.announce(inj)
	if ans := answerAfter(rec, req); ans != nil {
		sc.late[ans] = inj // the recorded late result, sent as recorded
		return nil
	}
	inj.delivered = true
	return []outFrame{{Data: append(lateResult(a.cancels, req.Method), '\n')}}
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

// before is called before o is written: it waits a delay planned at o's
// frame. It reports false when ctx ended the wait.
func (sc *stdioChaos) before(ctx context.Context, o outFrame) bool {
	if sc == nil || o.Frame == nil {
		return true
	}
	s := sc.srv
	cs := s.chaos()
	rec := sc.cur.leader().rec.Recording
	cs.mu.Lock()
	inj, ok := cs.takeLocked(s.Chaos, sc.ls, rec, func(g Fault) bool { return g.Kind == FaultDelay && g.Seq == o.Frame.Seq })
	cs.mu.Unlock()
	if !ok {
		return true
	}
	s.announce(inj)
	select {
	case <-s.clock().After(inj.Delay):
	case <-ctx.Done():
		cs.mu.Lock()
		inj.left = true
		cs.mu.Unlock()
		return false
	}
	cs.mu.Lock()
	inj.delivered = true
	cs.mu.Unlock()
	return true
}

// after is called once o was written: a recorded late result is then
// delivered.
func (sc *stdioChaos) after(o outFrame) {
	if sc == nil || o.Frame == nil {
		return
	}
	cs := sc.srv.chaos()
	cs.mu.Lock()
	if inj := sc.late[o.Frame]; inj != nil {
		inj.delivered, inj.at = true, len(cs.actions)-1
		delete(sc.late, o.Frame)
	}
	cs.mu.Unlock()
}
