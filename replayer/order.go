package replayer

import "time"

// Recorded order over one stream (stdio).
//
// An engine releases a server frame as soon as what caused it has
// happened, so a client that sends two requests back to back gets the
// answer to the second as soon as it arrives, even where the recorded
// server answered the first before it: the first's answer may wait for a
// client frame still to come (a notifications/cancelled sent just after
// the second request, say). Over stdio the client reads one stream, and
// the recorded order of that stream is what it must see when it does
// what the recorded client did. So an ordered engine holds a ready
// server frame back while an earlier recorded server frame is still
// owed: one whose causes the live client has not reached yet.
//
// Holding never waits for the client to do what it will not do. An owed
// frame stops holding others once the live client has sent a client
// frame recorded after one it waits for (the client went past it), and
// when the client sends nothing for orderGrace while frames are held
// (it may wait for them before it sends more: giveUp).

// orderGrace is how long the client may stay silent while frames are
// held behind an owed one before they go out of recorded order.
const orderGrace = DefaultSettle

// holdState is an ordered engine's bookkeeping.
type holdState struct {
	// ordered makes the engine keep recorded order over its one stream.
	ordered bool
	// held are the ready server frames held back, by index.
	held []int
	// waived are the server frames that no longer hold others back.
	waived marks
	// owedLo is the first frame that may still hold others back.
	owedLo int
	// lastC2S is the index of the latest client frame received, -1
	// before any.
	lastC2S int
}

// holds reports whether ready server frame i must wait for an earlier
// recorded server frame.
func (e *engine) holds(i int) bool {
	if !e.order.ordered {
		return false
	}
	o := e.owed()
	return o >= 0 && o < i
}

// owed returns the first recorded server frame not yet sent that the
// live client may still cause, or -1.
func (e *engine) owed() int {
	h := &e.order
	if h.waived == nil {
		h.waived = newMarks(len(e.frames))
	}
	for ; h.owedLo < len(e.frames); h.owedLo++ {
		j := h.owedLo
		if e.frames[j].C2S || e.done.has(j) || h.waived.has(j) {
			continue
		}
		if e.passed(j) {
			h.waived.set(j)
			continue
		}
		return j
	}
	return -1
}

// passed reports whether the live client went past what server frame j
// waits for: a client frame it waits for was recorded well before (by
// more than orderGrace) one the client sent, or a server frame it waits
// for no longer holds others. Client frames recorded closer together
// were sent concurrently, and may arrive in either order.
func (e *engine) passed(j int) bool {
	fr := &e.frames[j]
	for _, d := range []int{fr.Prev, fr.Extra} {
		if d < 0 || e.done.has(d) {
			continue
		}
		if last := e.order.lastC2S; e.frames[d].C2S && d < last && e.frames[last].F.Offset-e.frames[d].F.Offset > orderGrace {
			return true
		}
		if !e.frames[d].C2S && e.order.waived != nil && e.order.waived.has(d) {
			return true
		}
	}
	return false
}

// holding reports whether the engine holds frames back.
func (e *engine) holding() bool { return len(e.order.held) > 0 }

// giveUp stops every owed frame before the last held one from holding
// others: the client was silent for orderGrace, and may be waiting for
// what is held. The caller releases next.
func (e *engine) giveUp() {
	h := &e.order
	last := -1
	for _, i := range h.held {
		last = max(last, i)
	}
	for j := h.owedLo; j < last; j++ {
		if !e.frames[j].C2S && !e.done.has(j) {
			h.waived.set(j)
		}
	}
	e.ready = append(e.ready, h.held...)
	h.held = nil
}

// holding reports whether the leader holds frames back in recorded
// order, and so when the client's silence should release them.
func (c *cursor) holding() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.cands {
		if e.holding() {
			return true
		}
	}
	return false
}

// giveUpOrder releases what the candidates hold back in recorded order
// (see giveUp) and queues it; emit returns it.
func (c *cursor) giveUpOrder() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.cands {
		if !e.holding() {
			continue
		}
		e.giveUp()
		if o := e.release(); c.queued {
			e.queue = append(e.queue, o...)
		}
	}
	c.notify()
}

// orderTimer returns a channel that fires after orderGrace when the
// cursor holds frames back, and nil otherwise.
func (s *Server) orderTimer(cur *cursor) <-chan time.Time {
	if !cur.holding() {
		return nil
	}
	return s.clock().After(orderGrace)
}
