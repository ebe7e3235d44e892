package verify

import (
	"context"
	"time"

	"github.com/mcpvcr/mcpvcr/store"
)

// What a step waits for before it sends (see plan.go's wait), and when a
// wait gives up.

// lateGrace is how long, over Streamable HTTP, a Verifier still waits for
// the server messages a request's handling sent (its progress, say) after
// the request's answer came. A server sends them before it answers, but
// it may send them on another stream than the answer (the GET stream,
// while the answer is a POST's JSON body), and then they can arrive after
// it. On stdio and HTTP+SSE one stream carries both, in order.
const lateGrace = 2 * time.Second

// await blocks until every wait is satisfied or given up on.
func (d *driver) await(ctx context.Context, waits []wait) error {
	for {
		d.mu.Lock()
		if d.gone != nil || d.abort != nil {
			d.mu.Unlock()
			return nil
		}
		var w *wait
		for i := range waits {
			if !d.satisfied(waits[i]) {
				w = &waits[i]
				break
			}
		}
		if w == nil {
			d.mu.Unlock()
			return nil
		}
		var wake time.Time
		switch w.kind {
		case waitServer, waitLinger:
			wake, _ = d.until(*w) // satisfied once it passes
		case waitTask:
			wake, _ = d.taskWake(*w)
		default:
			id := w.id
			if w.kind == waitCount {
				id = w.owner
			}
			deadline := d.deadline(id)
			if !deadline.After(d.clock.Now()) {
				d.timedOut[id] = true
				d.log.Warn("no answer in time", "request", id, "after", d.timeout)
				d.signal()
				d.mu.Unlock()
				continue
			}
			wake = deadline
			if at, ok := d.answered[id]; ok && w.kind == waitCount && at.Add(lateGrace).Before(wake) {
				wake = at.Add(lateGrace) // see lateGrace
			}
		}
		changed := d.changed
		d.mu.Unlock()
		select {
		case <-changed:
		case <-d.clock.At(wake):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// satisfied reports whether w holds or is given up on. The caller holds
// d.mu.
func (d *driver) satisfied(w wait) bool {
	over := func(id string) bool {
		_, sent := d.sent[id]
		return !sent || d.isAnswered(id) || d.ended[id] || d.timedOut[id]
	}
	switch w.kind {
	case waitAnswer:
		return over(w.id)
	case waitExchange:
		if _, sent := d.sent[w.id]; !sent || d.done[w.id] || d.timedOut[w.id] {
			return true
		}
		for _, id := range w.ids {
			if !over(id) {
				return false
			}
		}
		return len(w.ids) > 0
	case waitServer:
		if d.counts[w.key] >= w.n {
			return true
		}
		t, ok := d.until(w)
		return !ok || !d.clock.Now().Before(t)
	case waitLinger:
		t, ok := d.until(w)
		return !ok || !d.clock.Now().Before(t)
	case waitTask:
		_, ok := d.taskWake(w)
		return ok
	}
	if d.counts[w.key] >= w.n {
		return true
	}
	if at, ok := d.answered[w.owner]; ok && d.v.Recording.Session.Transport == store.StreamableHTTP && !d.ended[w.owner] && !d.timedOut[w.owner] {
		return !d.clock.Now().Before(at.Add(lateGrace)) // see lateGrace
	}
	return over(w.owner)
}

// isAnswered reports whether request id's answer came. The caller holds
// d.mu.
func (d *driver) isAnswered(id string) bool {
	_, ok := d.answered[id]
	return ok
}

// deadline is when the wait for request id's answer gives up. The caller
// holds d.mu.
func (d *driver) deadline(id string) time.Time {
	t := d.sent[id].Add(d.timeout)
	if c, ok := d.cancelled[id]; ok && c.Add(cancelGrace).Before(t) {
		t = c.Add(cancelGrace)
	}
	return t
}

// until is when a server or linger wait (see wait) is over: the live
// time the step it counts from was sent, plus its recorded time, plus
// lateGrace for a server wait, the whole bounded by the timeout. It
// reports false if that step was not sent (the write guard kept it back):
// then there is nothing to wait for. The caller holds d.mu.
func (d *driver) until(w wait) (time.Time, bool) {
	at, ok := d.sent[w.id]
	if !ok {
		return time.Time{}, false
	}
	after := w.after
	if w.kind == waitServer {
		after += lateGrace
	}
	return at.Add(min(after, d.timeout)), true
}
