package replayer

import (
	"fmt"
	"slices"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/internal/mcpwire"
	"github.com/mcpvcr/mcpvcr/internal/replayreport"
	"github.com/mcpvcr/mcpvcr/store"
)

// A stall: a request of the live client that waits for an answer the
// chosen recording gives only after frames the client has not sent
// (replayreport.Stall says what it waits for).

// stall is how replay reports a stalled request.
type stall = replayreport.Stall

// stalls returns the outstanding requests that are stalled in every
// candidate, as the leader sees them. Requests still in play elsewhere
// (released but not sent, or undecided between candidates) are not
// stalled.
func (c *cursor) stalls() []stall {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []stall
	for id := range c.outstanding {
		if c.selfAnswered[id] {
			continue
		}
		var st *stall
		for n, e := range c.cands {
			s, ok := e.stalled(id)
			if !ok {
				st = nil
				break
			}
			if n == 0 {
				st = &s
			}
		}
		if st != nil {
			out = append(out, *st)
		}
	}
	slices.SortFunc(out, func(a, b stall) int {
		if a.Request == nil || b.Request == nil {
			return 0
		}
		return int(a.Request.Seq - b.Request.Seq)
	})
	return out
}

// waive is for a stalled request whose recorded answer came only after
// the recorded client cancelled it, where this client has not: in every
// candidate that cancellation is taken as received, so that what the
// server sent after it (progress, log lines, the late answer) is
// released, as the recording has it. It returns the frames it released
// (queued too on stdio; over HTTP the caller publishes them) and whether
// it waived anything; when it did not (the stall waits for more than the
// cancellation), nothing changes.
func (c *cursor) waive(st stall) ([]outFrame, bool) {
	if st.Cancel == nil || len(st.Awaited) != 1 || st.Awaited[0] != st.Cancel {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	released := false
	var outs []outFrame
	for _, e := range c.cands {
		rec, ok := e.rids[st.ID]
		if !ok {
			continue
		}
		i, ok := e.cancelOf[e.ref(rec)]
		if !ok || e.done.has(i) {
			continue
		}
		e.done.set(i)
		e.touched = max(e.touched, i+1)
		e.ready = append(e.ready, e.dependents[i]...)
		o := e.release()
		if c.queued {
			e.queue = append(e.queue, o...)
		}
		outs = append(outs, o...)
		released = true
	}
	if released {
		c.notify()
	}
	return outs, released
}

// isOutstanding reports whether live request id awaits its answer.
func (c *cursor) isOutstanding(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.outstanding[id] && !c.selfAnswered[id]
}

// behind describes why answer f of e's HTTP+SSE stream waits: the stream
// gives it only after head, which waits for client frames this client
// has not sent. It returns the recorded request f answers too (the
// causal model's pairing), nil when none.
func (c *cursor) behind(e *engine, head, f *store.Frame) (*store.Frame, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	i, ok := e.index[f]
	if !ok || e.frames[i].Asks < 0 {
		return nil, ""
	}
	req := e.frames[e.frames[i].Asks].F
	return req, fmt.Sprintf("request %s (recorded seq %d): the recording answers it on the HTTP+SSE stream only after seq %d, which waits for client frames this client has not sent:", req.Method, req.Seq, head.Seq) +
		replayreport.FrameList(e.awaited(e.index[head]))
}

// stalled reports whether e answers live request id only after client
// frames not yet received (or not at all), and which.
func (e *engine) stalled(id string) (stall, bool) {
	rec, ok := e.rids[id]
	if !ok {
		return stall{}, false
	}
	st := stall{ID: id, Request: e.reqAt[rec]}
	ref := e.ref(rec)
	a, ok := e.answerOf[ref]
	if !ok {
		if c, cancelled := e.cancelOf[ref]; cancelled {
			if e.done.has(c) {
				// Cancelled here as in the recording, which holds no
				// answer: nothing is owed.
				return stall{}, false
			}
			st.Cancel, st.Expected = e.frames[c].F, true
		}
		return st, true
	}
	if c, cancelled := e.cancelOf[ref]; cancelled && !e.done.has(c) && c < a {
		// The recording answers only after the client's cancellation:
		// a late answer.
		st.Cancel = e.frames[c].F
	}
	if e.done.has(a) {
		return stall{}, false
	}
	st.Awaited = e.awaited(a)
	if len(st.Awaited) == 0 {
		return stall{}, false
	}
	st.Expected = true
	for _, f := range st.Awaited {
		fr := &e.frames[e.index[f]]
		switch {
		case fr.Msg.Kind.IsResponse():
			st.Expected = st.Expected && fr.Asks >= 0 && e.done.has(fr.Asks)
		case fr.Msg.Kind == jsonrpc.KindNotification && fr.Msg.Method == "notifications/cancelled":
			st.Expected = st.Expected && string(mcpwire.CancelledRequestID(fr.Msg.Params)) == rec
		default:
			st.Expected = false
		}
	}
	slices.SortFunc(st.Awaited, func(a, b *store.Frame) int { return int(a.Seq - b.Seq) })
	return st, true
}

// awaited returns the client frames not yet received that server frame
// i waits for, directly or through the server frames before it in its
// causal group, in recorded order.
func (e *engine) awaited(i int) []*store.Frame {
	var out []*store.Frame
	seen := map[int]bool{}
	var walk func(i int)
	walk = func(i int) {
		if i < 0 || seen[i] || e.done.has(i) {
			return
		}
		seen[i] = true
		if e.frames[i].C2S {
			out = append(out, e.frames[i].F)
			return
		}
		walk(e.frames[i].Prev)
		walk(e.frames[i].Extra)
	}
	walk(i)
	slices.SortFunc(out, func(a, b *store.Frame) int { return int(a.Seq - b.Seq) })
	return out
}

// unanswered reports whether id is a server request that replay has sent
// and the recorded client never answered (no client answer asks it, by
// the causal model's pairing).
func (e *engine) unanswered(id []byte) bool {
	sent := false
	for i, fr := range e.frames {
		switch {
		case fr.C2S && fr.Asks >= 0 && string(e.frames[fr.Asks].Msg.ID) == string(id):
			return false
		case !fr.C2S && fr.Msg.Kind == jsonrpc.KindRequest && string(fr.Msg.ID) == string(id) && e.done.has(i):
			sent = true
		}
	}
	return sent
}
