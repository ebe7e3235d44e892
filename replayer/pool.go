package replayer

import (
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/internal/replayreport"
	"github.com/mcpvcr/mcpvcr/internal/reqshape"
	"github.com/mcpvcr/mcpvcr/internal/script"
	"github.com/mcpvcr/mcpvcr/store"
)

// pool replays 2026-07-28 HTTP traffic, which has no session: each
// request is an exchange of its own, matched on its own against every
// recorded modern exchange of every session, on its body and on its
// protocol shape (see reqshape.Shape), as the exchange index (ix) holds
// them: a request reads the rows of its body and loads the session of
// the one it takes. Among identical recorded exchanges recorded order
// decides: the k-th identical request gets the k-th answer, then the
// last one again. It is safe for concurrent use.
type pool struct {
	srv *Server
	ix  *atOnce

	mu      sync.Mutex // guards everything below
	uses    map[string]int
	served  map[*store.Frame]bool // recorded client frames a live request took
	changed chan struct{}         // closed and replaced when served grows
	rep     Report
}

// poolEntry is one recorded exchange: a request and its answer stream.
type poolEntry struct {
	rec   *recording
	st    *store.Stream
	req   *store.Frame // nil for a request without a body
	body  string       // the match key of the body
	shape reqshape.Shape
}

func (s *Server) pool() *pool {
	s.poolOnce.Do(func() {
		if a := s.atOnce(); a.pool {
			s.pl = &pool{srv: s, ix: a, uses: map[string]int{}, served: map[*store.Frame]bool{}, changed: make(chan struct{})}
		}
	})
	return s.pl
}

// find returns the recorded exchange that answers r, and whether its
// shape is r's exactly; nil when none does. The groups of recorded
// exchanges of r's method and body by shape decide: those of r's shape,
// else those of another that the server did not refuse (a refusal
// answers only its very shape); only the exchange taken is loaded.
func (p *pool) find(r *http.Request, live jsonrpc.Message) (*poolEntry, bool) {
	body := ""
	if live.Kind != jsonrpc.KindEmpty {
		body = p.srv.Match.RequestKey(live)
	}
	sh := reqshape.Live(r)
	key := r.Method + " " + body
	var exact, valid []string
	nExact, nValid := 0, 0
	for _, g := range p.ix.count(script.RowPool, key) {
		rsh, refused, err := reqshape.DecodeInfo(g.Info)
		if err != nil {
			p.srv.logger().Warn("reading the replay exchange index failed", "err", err)
			continue
		}
		if rsh.Same(sh) {
			exact, nExact = append(exact, g.Info), nExact+g.Count
		} else if !refused {
			valid, nValid = append(valid, g.Info), nValid+g.Count
		}
	}
	use := func(k string, n int) int {
		p.mu.Lock()
		defer p.mu.Unlock()
		u := p.uses[k]
		p.uses[k]++
		return min(u, n-1)
	}
	var infos []string
	var n int
	exactly := false
	switch {
	case nExact > 0:
		infos, n, exactly = exact, use(body+"\x00"+sh.String(), nExact), true
	case nValid > 0:
		infos, n = valid, use(body, nValid)
	default:
		return nil, false
	}
	rec, st, ok := p.ix.pick(script.RowPool, key, infos, n)
	if !ok {
		return nil, false
	}
	x := &poolEntry{rec: rec, st: st, req: script.FirstClientFrame(rec.Recording, st.ID), body: body, shape: reqshape.Recorded(st)}
	return x, exactly
}

// serve answers r as x was answered, with the live ids.
func (p *pool) serve(w http.ResponseWriter, r *http.Request, live jsonrpc.Message, x *poolEntry) {
	e := x.rec.rewriter(p.srv.Match)
	if x.req != nil {
		if i, ok := e.index[x.req]; ok {
			e.learn(i, live)
		}
	}
	p.mu.Lock()
	p.rep.Received++
	p.rep.Matched++
	if x.req != nil {
		p.served[x.req] = true
	}
	close(p.changed)
	p.changed = make(chan struct{})
	p.mu.Unlock()

	rp := &reply{srv: p.srv, w: w, r: r}
	sent := 0 // events sent, comments aside (for the Hook)
	rp.at = func(where Where, _ *recording, _ *store.Stream, f *store.Frame) Point {
		return p.point(where, x, live.Raw, f, sent)
	}
	rp.count = func(*store.Stream) int { sent++; return sent }
	rp.head(x.st)
	if x.st.Status == 0 {
		// The recorded client left before any answer: so may this one;
		// a request is answered -32019 after Server.Wait.
		p.holdUntil(w, r, x, live, false)
		return
	}
	answered, sse := false, x.st.SSE()
	events := func(yield func(event) bool) {
		for _, f := range x.rec.serverFrames()[x.st.ID] {
			if sse && !p.waitCauses(r, e, f) {
				rp.done = true
				return
			}
			if !yield(event{rec: x.rec, st: x.st, f: f, b: p.bytesOf(e, f, sse), quiet: f.Comment}) {
				return
			}
			answered = answered || f.Kind.IsResponse()
		}
	}
	if !rp.write(x.rec, x.st, events) || !sse {
		return
	}
	switch x.st.End {
	case store.EndComplete, store.EndServerClosed:
		return
	case store.EndUpstreamError:
		panic(http.ErrAbortHandler)
	}
	// The recorded client closed the stream here (in 2026-07-28, its
	// way to cancel): this one may too. If it waits for an answer the
	// recording does not hold, it gets -32019 on the stream after
	// Server.Wait.
	if answered {
		live = jsonrpc.Message{}
	}
	p.holdUntil(w, r, x, live, true)
}

// cancelReason says why the recording holds no answer to x's request
// when its client cancelled it (a notifications/cancelled, or a closed
// response stream), and "" when it did not.
func cancelReason(e *engine, x *poolEntry) string {
	if x.req != nil {
		if i, ok := e.index[x.req]; ok {
			if c, ok := e.cancelOf[script.Ref{Frame: i, ID: string(e.frames[i].Msg.ID)}]; ok {
				return fmt.Sprintf("the recording holds no answer to it: the recorded client cancelled it (notifications/cancelled, seq %d) and this client has not", e.frames[c].F.Seq)
			}
		}
	}
	if x.st.End == store.EndClientAborted {
		return "the recording holds no answer to it: the recorded client closed the response stream (a 2026-07-28 cancellation) and this client has not"
	}
	return ""
}

// holdUntil keeps an exchange the recorded client left open until this
// client leaves too, the server closes, or Server.Wait passes; a request
// not answered yet (w not nil) then gets -32019.
// With sse set, the answer's headers went out already and -32019 goes as
// an event of the stream. A request whose recorded client cancelled it is
// not reported until its wait is over: that wait is the recorded one.
func (p *pool) holdUntil(w http.ResponseWriter, r *http.Request, x *poolEntry, live jsonrpc.Message, sse bool) {
	var wait <-chan time.Time
	if p.srv.wait() > 0 {
		wait = p.srv.clock().After(p.srv.wait())
	}
	// Something is owed when a request waits for its answer; a stream
	// whose answers went out (a listen the recorded client closed, its
	// way to cancel) owes nothing and is held quietly.
	owed := w != nil && live.Kind == jsonrpc.KindRequest
	reason := cancelReason(x.rec.rewriter(p.srv.Match), x)
	if reason == "" {
		reason = "the recording holds no answer to it (the recorded client left before the answer came)"
		if owed {
			p.srv.logger().Warn("a request waits: the recorded client left before this exchange ended", "stream", x.st.ID, "wait", p.srv.waitText())
		}
	}
	if _, late := p.srv.await(r, nil, wait); late && owed {
		mm := &Mismatch{Live: live.Raw, Closest: x.req, Reason: reason}
		p.mu.Lock()
		p.rep.Mismatches = append(p.rep.Mismatches, mm)
		p.mu.Unlock()
		p.srv.logger().Warn("answered a stalled request with -32019", "request", mm.Error())
		writeOwn(w, replayreport.NoMatchAnswer(live.ID, mm), sse)
	}
}

// waitCauses waits until the client frames that caused f, in other
// exchanges (a listen stream's notifications), were served.
func (p *pool) waitCauses(r *http.Request, e *engine, f *store.Frame) bool {
	i, ok := e.index[f]
	if !ok {
		return true
	}
	for {
		p.mu.Lock()
		ch := p.changed
		missing := false
		seen := map[int]bool{}
		var walk func(j int)
		walk = func(j int) {
			if j < 0 || seen[j] || missing {
				return
			}
			seen[j] = true
			fr := &e.frames[j]
			if fr.C2S {
				missing = !p.served[fr.F]
				return
			}
			walk(fr.Prev)
			walk(fr.Extra)
		}
		walk(i)
		p.mu.Unlock()
		if !missing {
			return true
		}
		if ok, _ := p.srv.await(r, ch, nil); !ok {
			return false
		}
	}
}

// bytesOf returns f's payload with the live ids; with sse, its event
// block.
func (p *pool) bytesOf(e *engine, f *store.Frame, sse bool) []byte {
	i, ok := e.index[f]
	if !ok {
		return f.Raw
	}
	data, changed := e.rewrite(&e.frames[i])
	switch {
	case !sse:
		return data
	case !changed:
		return f.Raw
	}
	return rewriteEvent(f, data)
}

// mismatch records a request the pool refused.
func (p *pool) mismatch(mm *Mismatch) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rep.Received++
	p.rep.Mismatches = append(p.rep.Mismatches, mm)
}

// report returns what the pool replayed, or nil if it replayed nothing.
func (p *pool) report() *Report {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.rep.Received == 0 {
		return nil
	}
	rep := p.rep
	rep.Mismatches = slices.Clone(p.rep.Mismatches)
	return &rep
}

// point is the Hook's point where of exchange x, answering body, at its
// event f (nil for a JSON answer) after sent events.
func (p *pool) point(where Where, x *poolEntry, body []byte, f *store.Frame, sent int) Point {
	return Point{Where: where, Pooled: true, Body: body, Recording: x.rec.Recording, Stream: x.st, StreamNumber: script.Ordinal(x.rec.Recording, x.st.ID), Frame: f, Events: sent}
}

// unuse gives back the use find counted for r.
func (p *pool) unuse(r *http.Request, live jsonrpc.Message, exact bool) {
	body := ""
	if live.Kind != jsonrpc.KindEmpty {
		body = p.srv.Match.RequestKey(live)
	}
	key := body
	if exact {
		key = body + "\x00" + reqshape.Live(r).String()
	}
	p.mu.Lock()
	if p.uses[key] > 0 {
		p.uses[key]--
	}
	p.mu.Unlock()
}
