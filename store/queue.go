package store

import (
	"context"
	"sync"
	"time"
)

// opKind says what a queued write does.
type opKind uint8

const (
	opFrame     opKind = iota + 1 // insert frame
	opSession                     // insert or update a session (args)
	opStream                      // insert or update a stream (args)
	opFlush                       // reply on done once everything before is committed
	opExclusive                   // run fn alone in a transaction, reply on done
	opReserve                     // reserve a block of IDs for pool
)

// op is one queued write.
type op struct {
	kind      opKind
	commit    bool  // commit as soon as this op is applied
	first     bool  // opSession: the session's creation (see writer.fresh)
	newSeq    bool  // opFrame: above every seq its session wrote when handleRun took it, so in no pack
	sessionID int64 // the session it belongs to; 0 for flush and exclusive
	frame     *Frame
	args      []any // session or stream row, in upsert column order
	fn        func(t *txn) error
	deletes   int64   // opExclusive: the session fn deletes, 0 if none
	pool      *idPool // opReserve: the pool to fill
	done      chan error
}

// size estimates the bytes an op adds to a transaction.
func (o *op) size() int {
	if o.frame != nil {
		n := len(o.frame.Raw) + 200
		if o.frame.SSE {
			n += len(o.frame.Data)
		}
		return n
	}
	return 500
}

// Bounds of the queue of writes accepted but not yet taken by the writer.
// When either is reached, write calls block (backpressure); none are
// dropped.
const (
	queueLen   = 8192
	queueBytes = 8 << 20
)

// queue hands writes from callers to the writer goroutine. Callers put
// ops one at a time; the writer takes all that are queued at once, so that
// under load neither side wakes the other for every op, which costs a
// context switch each.
type queue struct {
	// ready holds a token when ops became non-empty or the queue closed.
	ready chan struct{}

	mu     sync.Mutex // guards the fields below
	ops    []op
	since  time.Time     // when the first of ops was put
	size   int           // estimated bytes of ops
	room   chan struct{} // closed when the writer takes ops; nil if no one waits
	closed bool
	// asleep is set while the writer waits for a signal rather than
	// polling: the next put wakes it.
	asleep bool
}

// A put wakes a polling writer early once this many ops or bytes are
// queued, so that batches stay small enough to apply quickly.
const (
	wakeLen   = 512
	wakeBytes = 1 << 20
)

func newQueue() *queue { return &queue{ready: make(chan struct{}, 1), asleep: true} }

// put appends o, waiting while the queue is full. It fails with ErrClosed
// once the queue is closed, or with ctx's error.
func (q *queue) put(ctx context.Context, o op) error {
	q.mu.Lock()
	for !q.closed && (len(q.ops) >= queueLen || q.size >= queueBytes) {
		if q.room == nil {
			q.room = make(chan struct{})
		}
		room := q.room
		q.mu.Unlock()
		select {
		case <-room:
		case <-ctx.Done():
			return ctx.Err()
		}
		q.mu.Lock()
	}
	defer q.mu.Unlock()
	if q.closed {
		return ErrClosed
	}
	if len(q.ops) == 0 {
		q.since = time.Now()
	}
	q.ops = append(q.ops, o)
	q.size += o.size()
	if q.asleep || o.done != nil || len(q.ops) >= wakeLen || q.size >= wakeBytes {
		q.asleep = false
		q.signal()
	}
	return nil
}

// sleep marks the writer asleep, so that the next put wakes it, unless
// ops are queued or the queue is closed: then it reports false and the
// writer takes them instead.
func (q *queue) sleep() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.ops) > 0 || q.closed {
		return false
	}
	q.asleep = true
	return true
}

// signal leaves a token in ready, if there is none. Callers hold mu.
func (q *queue) signal() {
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// take returns every queued op, leaving spare (emptied) as the new queue,
// whether the queue is still open, when the first of ops was put, and
// whether a put had to wait for room. The writer passes back the slice of
// the previous take as spare, so that the two slices alternate.
func (q *queue) take(spare []op) (ops []op, open bool, since time.Time, full bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	ops, q.ops, q.size = q.ops, spare[:0], 0
	full = q.room != nil
	if full {
		close(q.room)
		q.room = nil
	}
	return ops, !q.closed, q.since, full
}

// close stops the queue from accepting ops and wakes the writer to drain
// it. It reports false if the queue was already closed.
func (q *queue) close() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return false
	}
	q.closed = true
	q.signal()
	return true
}

// isClosed reports whether close was called.
func (q *queue) isClosed() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.closed
}
