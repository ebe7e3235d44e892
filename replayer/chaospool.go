package replayer

import (
	"fmt"
	"net/http"
	"time"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/store"
)

// Chaos replay of 2026-07-28 exchanges (the pool): no session, no GET
// stream and no resumption; a response stream cut or closed early loses
// its request, which the client must send again or give up on.

// modernChaos reports whether chaos injects into exchange x: one of a
// 2026-07-28 session (not a pooled run of initialize-era refusals).
func (p *pool) modernChaos(x *poolEntry) bool {
	s := x.rec.Session
	return p.srv.Chaos.On && s.Transport == store.StreamableHTTP && s.Revision >= "2026-07-28"
}

// chaosLS returns the stand-in live session of the 2026-07-28 exchanges
// in the chaos state, and the chaos state.
func (p *pool) chaosLS() (*liveSession, *chaosState) {
	cs := p.srv.chaos()
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.pool == nil {
		cs.pool = &liveSession{srv: p.srv}
	}
	return cs.pool, cs
}

// chaosTake takes the first fault of x's session that ok accepts, for
// the live request live (body).
func (p *pool) chaosTake(x *poolEntry, live jsonrpc.Message, ok func(Fault) bool) *injection {
	ls, cs := p.chaosLS()
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.poolRecs == nil {
		cs.poolRecs = map[int64]*store.Recording{}
	}
	cs.poolRecs[x.rec.Session.ID] = x.rec.Recording
	inj, taken := cs.takeLocked(p.srv.Chaos, ls, x.rec.Recording, ok)
	if !taken {
		return nil
	}
	inj.pooled = true
	inj.body, inj.rpcMethod, inj.rpcID = string(live.Raw), live.Method, string(live.ID)
	return inj
}

// chaosRequest answers exchange x with 503 when its session's plan says
// so at this POST; the exchange stays unused, for the client's retry.
func (p *pool) chaosRequest(w http.ResponseWriter, r *http.Request, live jsonrpc.Message, x *poolEntry, exact bool) bool {
	if !p.modernChaos(x) || r.Method != http.MethodPost {
		return false
	}
	n := postNumber(x.rec, x.st)
	inj := p.chaosTake(x, live, func(f Fault) bool { return f.Kind == Fault503 && f.Request == n })
	if inj == nil {
		return false
	}
	cs := p.srv.chaos()
	cs.mu.Lock()
	inj.cutAt = p.srv.clock().Now()
	cs.mu.Unlock()
	p.srv.announce(inj)
	p.unuse(r, live, exact)
	write503(w)
	return true
}

// unuse gives back the use find counted for r.
func (p *pool) unuse(r *http.Request, live jsonrpc.Message, exact bool) {
	body := ""
	if live.Kind != jsonrpc.KindEmpty {
		body = p.srv.Match.requestKey(live)
	}
	key := body
	if exact {
		key = body + "\x00" + liveShape(r).String()
	}
	p.mu.Lock()
	if p.uses[key] > 0 {
		p.uses[key]--
	}
	p.mu.Unlock()
}

// postNumber returns the number of st among rec's POSTs, from 1.
func postNumber(rec *recording, st *store.Stream) int {
	n := 0
	for i := range rec.Streams {
		if rec.Streams[i].Kind == store.PostStream {
			n++
		}
		if &rec.Streams[i] == st {
			return n
		}
	}
	return 0
}

// chaosJSON waits a delay planned for x's JSON answer; false when the
// client left first.
func (p *pool) chaosJSON(r *http.Request, live jsonrpc.Message, x *poolEntry) bool {
	if !p.modernChaos(x) {
		return true
	}
	n := ordinalOf(x.rec, x.st.ID)
	inj := p.chaosTake(x, live, func(g Fault) bool { return g.Kind == FaultDelay && g.Stream == n })
	if inj == nil {
		return true
	}
	p.srv.announce(inj)
	return p.chaosPause(r, inj)
}

// chaosPause waits inj's delay and notes whether what followed got to
// the client.
func (p *pool) chaosPause(r *http.Request, inj *injection) bool {
	ok := p.srv.pause(r, inj.Delay)
	cs := p.srv.chaos()
	cs.mu.Lock()
	inj.delivered, inj.left = ok, !ok
	cs.mu.Unlock()
	return ok
}

// chaosEvent is called before the event of x's SSE stream after sent
// events: it waits a planned delay, or closes the stream early (false,
// stop), or cuts it (it panics with http.ErrAbortHandler). With after
// set it is called once that many events were sent, for a cut.
func (p *pool) chaosEvent(r *http.Request, rc *http.ResponseController, live jsonrpc.Message, x *poolEntry, sent int, after bool) bool {
	if !p.modernChaos(x) {
		return true
	}
	n := ordinalOf(x.rec, x.st.ID)
	inj := p.chaosTake(x, live, func(g Fault) bool {
		if g.Stream != n || g.Event != sent {
			return false
		}
		switch g.Kind {
		case FaultCut:
			return after == (sent > 0)
		case FaultDelay, FaultCloseEarly:
			return !after
		}
		return false
	})
	if inj == nil {
		return true
	}
	p.srv.announce(inj)
	switch inj.Kind {
	case FaultCut:
		_ = rc.Flush()
		panic(http.ErrAbortHandler)
	case FaultCloseEarly:
		return false
	}
	return p.chaosPause(r, inj)
}

// pause waits d on the server's clock; false when the client left or
// the server closed first.
func (s *Server) pause(r *http.Request, d time.Duration) bool {
	select {
	case <-s.clock().After(d):
		return true
	case <-r.Context().Done():
		return false
	case <-s.http().done:
		return false
	}
}

// write503 answers with a transient 503 and Retry-After.
// retryAfter503 is the Retry-After a 503 of chaos gives.
const retryAfter503 = time.Second

func write503(w http.ResponseWriter) {
	w.Header().Set("Retry-After", fmt.Sprint(int(retryAfter503/time.Second)))
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusServiceUnavailable)
	_, _ = w.Write([]byte("mcpvcr replay --chaos: service unavailable (an injected fault)\n"))
}
