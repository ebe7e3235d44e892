package chaos

import (
	"net/http"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/replayer"
	"github.com/mcpvcr/mcpvcr/store"
)

// Chaos replay of 2026-07-28 exchanges (the pool): no session, no GET
// stream and no resumption; a response stream cut or closed early loses
// its request, which the client must send again or give up on.

// modern reports whether chaos injects into the exchange at p: one of a
// 2026-07-28 session (not a pooled run of initialize-era refusals).
func modern(p *replayer.Point) bool {
	s := p.Recording.Session
	return s.Transport == store.StreamableHTTP && s.Revision >= "2026-07-28"
}

// poolTake takes the first fault of p's session that ok accepts, for the
// live request p.Body.
func (cs *Hook) poolTake(p *replayer.Point, ok func(Fault) bool) *injection {
	live := jsonrpc.Parse(p.Body)
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.poolRecs == nil {
		cs.poolRecs = map[int64]*store.Recording{}
	}
	cs.poolRecs[p.Recording.Session.ID] = p.Recording
	inj, taken := cs.takeLocked(cs.pool, p.Recording, ok)
	if !taken {
		return nil
	}
	inj.pooled = true
	inj.body, inj.rpcMethod, inj.rpcID = string(live.Raw), live.Method, string(live.ID)
	return inj
}

// poolRequest answers the exchange at p with 503 when its session's plan
// says so at this POST; the core leaves the exchange unused, for the
// client's retry.
func (cs *Hook) poolRequest(p *replayer.Point) replayer.Action {
	if !modern(p) || p.Request.Method != http.MethodPost {
		return replayer.Action{}
	}
	n := postNumber(p.Recording, p.Stream)
	inj := cs.poolTake(p, func(f Fault) bool { return f.Kind == Fault503 && f.Request == n })
	if inj == nil {
		return replayer.Action{}
	}
	cs.mu.Lock()
	inj.cutAt = p.At
	cs.mu.Unlock()
	cs.announce(inj)
	return unavailable503()
}

// postNumber returns the number of st among rec's POSTs, from 1.
func postNumber(rec *store.Recording, st *store.Stream) int {
	n := 0
	for i := range rec.Streams {
		if rec.Streams[i].Kind == store.PostStream {
			n++
		}
		if rec.Streams[i].ID == st.ID {
			return n
		}
	}
	return 0
}

// poolEvent is called before the event of the exchange's SSE stream
// after p.Events events (before its JSON answer, when p.Frame is nil):
// it waits a planned delay, or closes the stream early (Stop), or cuts
// it. With after set it is called once that many events were sent, for
// a cut.
func (cs *Hook) poolEvent(p *replayer.Point, after bool) replayer.Action {
	if !modern(p) {
		return replayer.Action{}
	}
	n, sent := p.StreamNumber, p.Events
	if p.Frame == nil { // a JSON answer
		inj := cs.poolTake(p, func(g Fault) bool { return g.Kind == FaultDelay && g.Stream == n })
		if inj == nil {
			return replayer.Action{}
		}
		cs.announce(inj)
		return cs.poolPause(p, inj)
	}
	inj := cs.poolTake(p, func(g Fault) bool {
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
		return replayer.Action{}
	}
	cs.announce(inj)
	switch inj.Kind {
	case FaultCut:
		return replayer.Action{Cut: true}
	case FaultCloseEarly:
		return replayer.Action{Stop: true}
	}
	return cs.poolPause(p, inj)
}

// poolPause waits inj's delay and notes whether what followed got to the
// client.
func (cs *Hook) poolPause(p *replayer.Point, inj *injection) replayer.Action {
	ok := p.Wait(inj.Delay)
	cs.mu.Lock()
	inj.delivered, inj.left = ok, !ok
	cs.mu.Unlock()
	return replayer.Action{Stop: !ok}
}
