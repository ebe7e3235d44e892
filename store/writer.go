package store

import (
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/mattn/go-sqlite3"
)

// writer is the goroutine that owns all writes to the file.
type writer struct {
	d       *DB
	c       driverConn // the writer's connection, only inside run
	s       *stmts
	deleted map[int64]bool // sessions deleted while ops for them may still be queued
	timer   *time.Timer    // runs while t is open: commit when it fires
	due     time.Time      // when the timer fires; zero while it is stopped
	last    time.Time      // when the last commit ended

	t       *txn         // the open transaction, nil if none
	n, size int          // ops and estimated bytes in t
	endDue  bool         // t holds a write that asked for a commit (see endGap)
	waiters []chan error // flushes answered when t commits
	logged  int          // estimated bytes committed since the log last restarted
	unckpt  int          // estimated bytes committed since the checkpointer was last asked
	poked   time.Time    // when the checkpointer was last asked

	// shared is set once a transaction had to wait for another process's
	// write lock. From then on the writer holds the lock only while it
	// has writes to apply: it commits when the queue runs dry and at
	// least every sharedInterval, rather than every commitInterval.
	shared bool
	began  time.Time // when t began

	// The writer's priority (see priority.go): low while it runs on a
	// lowered thread; cannotLower without Options.LowPriority, or once
	// the system refused to lower a thread; oldest, late and full, what
	// tells a low writer to come up; calm, how long it stays at normal
	// priority before it goes low again; lowSince and normalSince, when
	// it last went low and up.
	low, cannotLower      bool
	taken                 time.Time // when the first of the ops last taken was put
	oldest                time.Time // when the oldest write in t was put, at the latest
	late                  int       // commits in a row that came late
	full                  bool      // a write waited for room in the queue
	calm                  time.Duration
	lowSince, normalSince time.Time

	// seqs holds, for each session this DB created (and only those have
	// packs, see pack.go) and has not seen ended, the highest seq
	// written: a run of frames above it may go in a pack, a frame at or
	// below it is checked against the packs before it becomes a row, so
	// that no seq is stored twice. A session's entry goes when an update
	// ends it (see ended): frames that come for it after that are rows,
	// which the unique index on frames checks against each other only,
	// as it does those of a session another DB created; a recorder
	// numbers a session's frames upwards, so they never meet its packs.
	seqs map[int64]int64
	// packOf, packOps, rest and packBuf are handleRun's, reused.
	packOf     map[int64]int // session → index in packOps of its open pack
	packOps    [][]*op
	packSize   []int // bytes of the frames of each of packOps
	rest       []op
	packBuf    packBufs
	packFrames []*Frame
	// streamOps and streamDone are putStreams's, reused.
	streamOps  []*op
	streamDone map[int64]bool
	// inRun is set while handleRun applies a run: a commit asked for
	// meanwhile is only noted (runDue), and made once the run is
	// applied (see commitSoon).
	inRun, runDue bool

	// fresh holds the sessions created whose first frame is not yet
	// applied. A session's creation and its first frame are each
	// committed at once, rather than batched for the commit interval:
	// what a recording keeps if the disk fills or the process dies early
	// is then never nothing, and costs a commit or two per session.
	fresh map[int64]bool
}

// Holding the write lock of a cassette that other processes write too.
const (
	// sharedInterval is how long a shared writer keeps a transaction open
	// while writes keep coming. With n writers taking turns, a write
	// waits at most about n-1 of them (and their pauses, yieldGap) for
	// the lock: 5 ms keeps that, and so what a kill -9 loses, well within
	// the 100 ms commit interval for eight busy writers (go run
	// ./scripts/contention).
	sharedInterval = 5 * time.Millisecond
	// yieldGap is how long a shared writer waits after a commit before it
	// begins again, so that a writer that waits for the lock (trying
	// every busyWait) gets it.
	yieldGap = 2 * time.Millisecond
)

// lengthLimit, if positive, lowers SQLite's limit on the length of a
// value (1e9 bytes by default) on the writer's connection: tests reach
// the limit with small frames.
var lengthLimit int

// maxPages, if positive, caps the file's pages for the writer, which then
// fails with SQLITE_FULL as on a full disk: tests fill the "disk" at an
// exact point.
var maxPages int

// run prepares the writer's statements on conn, reports the outcome on
// started, then runs loop on conn until Close.
func (w *writer) run(conn *sql.Conn, started chan<- error) {
	defer w.d.wg.Done()
	var err error
	reported := false
	rerr := conn.Raw(func(dc any) error {
		c, ok := dc.(driverConn)
		if !ok {
			err = fmt.Errorf("driver connection %T lacks methods the writer needs", dc)
			return nil
		}
		if lengthLimit > 0 {
			if sc, ok := dc.(*sqlite3.SQLiteConn); ok {
				sc.SetLimit(sqlite3.SQLITE_LIMIT_LENGTH, lengthLimit)
			}
		}
		if maxPages > 0 {
			if _, err := c.ExecContext(bg, fmt.Sprintf("PRAGMA max_page_count = %d", maxPages), nil); err != nil {
				return err
			}
		}
		if w.s, err = prepare(c); err != nil {
			return nil
		}
		w.s.db = sqliteHandle(dc)
		defer w.s.close()
		w.c = c
		reported = true
		started <- nil
		w.drive()
		return nil
	})
	if !reported {
		started <- errors.Join(rerr, err)
	}
}

// loop applies queued ops until Close closes the queue and it is drained,
// and then reports true. It reports false, with nothing taken and not
// applied, when the writer should move to a thread of the other priority
// (see hop), which it asks after each wait.
// Ops go into one transaction until the commit interval has passed, an op
// asks for a commit, or the transaction is big.
//
// While writes keep coming, the writer takes them every pollInterval
// rather than being woken for each: a wake-up costs both sides a context
// switch, and on a busy machine the writer's work then lands between the
// proxy's read and its write. Batches also let frames share one INSERT.
// Once a poll finds nothing the writer sleeps, and the next write wakes it.
func (w *writer) loop() bool {
	poll := time.NewTimer(pollInterval)
	poll.Stop()
	var ops []op
	for first := true; ; first = false {
		if !first && w.hop() {
			return false
		}
		var open, full bool
		ops, open, w.taken, full = w.d.q.take(ops)
		w.full = w.full || full
		for i := 0; i < len(ops); {
			if n := w.runLen(ops[i:]); n > 1 {
				w.handleRun(ops[i : i+n])
				i += n
			} else {
				w.handle(&ops[i])
				i++
			}
			if w.t != nil && w.expired() {
				w.commit()
			}
		}
		n := len(ops)
		clear(ops) // drop the frames for the collector
		switch {
		case !open && n == 0:
			w.releaseIDs()
			w.commit()
			return true
		case !open:
			// Drain what is left.
		case n > 0:
			poll.Reset(pollInterval)
			w.wait(poll.C)
			poll.Stop()
		case w.d.q.sleep():
			switch {
			case w.shared:
				w.commitShared()
			case w.endDue:
				w.commit() // the traffic paused: see endGap
			}
			w.pokeCheckpointer()
			w.wait(nil)
		}
	}
}

// wait waits for the queue's signal, poll (if not nil), or the commit
// timer, which commits.
func (w *writer) wait(poll <-chan time.Time) {
	var commit <-chan time.Time
	if w.t != nil {
		commit = w.timer.C
	}
	select {
	case <-w.d.q.ready:
	case <-poll:
	case <-commit:
		w.commit()
	}
}

// expired reports whether the commit interval has passed.
func (w *writer) expired() bool {
	select {
	case <-w.timer.C:
		return true
	default:
		return false
	}
}

// commitSoon commits the open transaction now, or at the end of the run
// being applied (see inRun).
func (w *writer) commitSoon() {
	if w.inRun {
		w.runDue = true
		return
	}
	w.commit()
}

// ensureTxn begins a transaction if none is open. It reports false if
// that failed, which makes the failure sticky.
func (w *writer) ensureTxn() bool {
	if w.t != nil {
		return true
	}
	if w.shared {
		if wait := yieldGap - time.Since(w.last); wait > 0 {
			time.Sleep(wait)
		}
	}
	t, held, err := begin(w.c, w.s)
	if err != nil {
		w.abort(err)
		return false
	}
	w.t, w.began = t, time.Now()
	w.oldest = w.taken
	// Found held, not a slow BEGIN: a low writer's may be slow because it
	// waited for a CPU.
	w.shared = w.shared || held
	// The oldest write in t may have waited a poll already.
	switch {
	case w.shared:
		w.schedule(sharedInterval)
	case w.low:
		// It may wait for a CPU meanwhile (see priority.go).
		w.schedule(lowCommit)
	default:
		w.schedule(commitWait)
	}
	return true
}

// commitShared commits t, if open, when the writer runs out of writes and
// shares the file with other writers, so that they need not wait for the
// commit interval to take the lock. Commits stay commitGap apart.
func (w *writer) commitShared() {
	if w.t == nil {
		return
	}
	if wait := commitGap - time.Since(w.last); wait > 0 {
		w.schedule(wait)
		return
	}
	w.commit()
}

// releaseIDs gives back the IDs reserved and not used, before the last
// commit.
func (w *writer) releaseIDs() {
	if w.d.Err() != nil {
		return
	}
	for _, p := range []*idPool{w.d.sessionIDs, w.d.streamIDs} {
		w.d.mu.Lock()
		unused := p.reserved > p.used
		w.d.mu.Unlock()
		if !unused || !w.ensureTxn() {
			continue
		}
		if err := w.d.release(w.t, p); err != nil {
			w.abort(err)
			return
		}
	}
}

// handle applies one op, and reports whether a frame, session or stream
// op was written. After the writer has failed, ops are dropped and those
// that wait are told the error.
func (w *writer) handle(o *op) (written bool) {
	if o.kind == opReserve {
		w.reserve(o.pool)
		return false
	}
	if err := w.d.Err(); err != nil {
		if o.done != nil {
			o.done <- err
		}
		return false
	}
	switch o.kind {
	case opFlush:
		if w.t == nil {
			o.done <- nil
			return false
		}
		w.waiters = append(w.waiters, o.done)
		w.commit()
		return false
	case opExclusive:
		w.commit() // everything queued before it
		if err := w.d.Err(); err != nil {
			o.done <- err
			return false
		}
		o.done <- w.exclusive(o)
		return false
	}
	if o.kind == opFrame && o.frame.Events > 0 {
		return w.handleEventRun(o)
	}
	if !w.ensureTxn() {
		return false
	}
	if err := w.apply(w.t, o); err != nil {
		if errors.Is(err, errSeqPacked) {
			w.d.log.Error("a write was refused and dropped; the other frames and sessions are still recorded", "session", o.sessionID, "err", err)
			return false
		}
		if !w.isolable(err) {
			w.abort(err)
			return false
		}
		w.skip(o, err)
		return false
	}
	first := false
	switch {
	case o.kind == opSession && o.first:
		w.fresh[o.sessionID], first = true, true
		if _, ok := w.seqs[o.sessionID]; !ok {
			w.seqs[o.sessionID] = 0
		}
	case o.kind == opSession && o.commit:
		w.ended(o.sessionID)
	case o.kind == opFrame:
		first = w.firstFrame(o.sessionID)
		w.wrote(o.frame)
	}
	w.n++
	w.size += o.size()
	switch {
	case first || w.n >= maxBatchOps || w.size >= maxBatchBytes:
		w.commitSoon()
	case o.commit:
		if wait := endGap - time.Since(w.last); wait > 0 {
			w.schedule(wait)
			w.endDue = true
		} else {
			w.commitSoon()
		}
	}
	return true
}

// firstFrame reports whether a frame of sessionID is its first (see
// fresh), which is to be committed at once.
func (w *writer) firstFrame(sessionID int64) bool {
	if !w.fresh[sessionID] {
		return false
	}
	delete(w.fresh, sessionID)
	return true
}

// ended lets go of what the writer keeps of session sessionID, which an
// update has just ended (see UpdateSession): a recorder that runs all
// day ends session after session. A frame that comes for it later is
// still written, as a row (see seqs).
func (w *writer) ended(sessionID int64) {
	delete(w.seqs, sessionID)
	delete(w.fresh, sessionID)
}

// reserve reserves a block of IDs for p in the open transaction. The
// other table's IDs are reserved first, if they run low and no one asked
// for them yet, while the lock is held: a new session opens streams next,
// and the lock may have passed to another process by the time it asks.
func (w *writer) reserve(p *idPool) {
	if w.d.Err() != nil || !w.ensureTxn() {
		w.d.wakeIDWaiters(p)
		return
	}
	other := w.d.streamIDs
	if p == other {
		other = w.d.sessionIDs
	}
	w.d.mu.Lock()
	low := !other.asking && other.left() < other.block/2
	if low {
		other.asking = true // a newID meanwhile waits for this block
	}
	w.d.mu.Unlock()
	if low {
		if err := w.d.reserve(w.t, other); err != nil {
			w.abort(err)
			w.d.wakeIDWaiters(p)
			return
		}
	}
	if err := w.d.reserve(w.t, p); err != nil {
		w.abort(err)
	}
}

// schedule makes the timer fire within d, unless it fires sooner already.
func (w *writer) schedule(d time.Duration) {
	due := time.Now().Add(d)
	if !w.due.IsZero() && !due.Before(w.due) {
		return
	}
	w.timer.Stop()
	w.timer.Reset(d)
	w.due = due
}

// stopTimer stops the commit timer.
func (w *writer) stopTimer() {
	w.timer.Stop()
	w.due = time.Time{}
}

// commit commits the open transaction, if any, and answers the flushes
// waiting for it.
func (w *writer) commit() {
	if w.t == nil {
		return
	}
	w.stopTimer()
	w.endDue = false
	err := w.t.commit()
	w.last = time.Now()
	w.noteAge()
	size := w.size
	w.t, w.n, w.size = nil, 0, 0
	if err != nil {
		w.abort(fmt.Errorf("commit: %w", err))
		return
	}
	w.logged += size + commitPages*w.d.pageSize
	if w.logged > maxWALBytes || int(w.d.ckpt.logPages.Load())*w.d.pageSize > maxWALBytes {
		w.checkpoint()
	}
	w.unckpt += size
	w.pokeCheckpointer()
	w.answer(nil)
}

// abort rolls back the open transaction, if any, and makes err the sticky
// error.
func (w *writer) abort(err error) {
	if w.t != nil {
		w.stopTimer()
		w.t.rollback()
		w.t, w.n, w.size = nil, 0, 0
	}
	w.d.fail(err)
	w.answer(w.d.Err())
}

func (w *writer) answer(err error) {
	for _, c := range w.waiters {
		c <- err
	}
	w.waiters = w.waiters[:0]
}

// apply runs one op inside t. Ops for sessions deleted since they were
// queued are dropped.
func (w *writer) apply(t *txn, o *op) error {
	if w.deleted[o.sessionID] {
		return nil
	}
	switch o.kind {
	case opFrame:
		if err := w.checkPacked(o); err != nil {
			return err
		}
		return t.putFrame(o.frame)
	case opSession:
		return t.putSession(o.args)
	case opStream:
		return t.putStream(o.args)
	}
	return fmt.Errorf("unknown op %d", o.kind)
}

// exclusive runs an exclusive op in a transaction of its own. Its failure
// is returned to its caller and is not sticky: the transaction is rolled
// back whole.
func (w *writer) exclusive(o *op) error {
	if o.deletes == 0 {
		// Imports and index writes go through no checks of the DB's:
		// SQLite enforces the foreign keys for them. A delete runs
		// without (see migration 4 in schema.sql: it deletes children
		// before parents, and the checks would scan the frames per
		// stream).
		if _, err := w.c.ExecContext(bg, "PRAGMA foreign_keys = ON", nil); err != nil {
			return err
		}
		defer w.c.ExecContext(bg, "PRAGMA foreign_keys = OFF", nil)
	}
	t, _, err := begin(w.c, w.s)
	if err != nil {
		return err
	}
	if err := o.fn(t); err != nil {
		t.rollback()
		return err
	}
	if err := t.commit(); err != nil {
		t.rollback()
		return fmt.Errorf("commit: %w", err)
	}
	if o.deletes != 0 {
		w.deleted[o.deletes] = true
		delete(w.seqs, o.deletes)
	}
	w.d.ckpt.poke()
	return nil
}
