package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"sync"
	"sync/atomic"
	"time"
)

// WAL checkpoints copy committed pages from the write-ahead log into the
// database file. SQLite would run them in the writer's connection after a
// commit, which stalls ingest for the copy and its fsyncs. Instead the
// writer's connection has wal_autocheckpoint off, and a checkpointer
// goroutine with a connection of its own runs passive checkpoints, which
// never block the writer, after commits.
//
// A checkpoint cannot finish while the writer keeps committing, and the
// log starts again from the beginning only after one has finished, so
// under sustained load the log would grow without bound. So once it has
// committed maxWALBytes since the log last restarted, the writer runs a
// checkpoint itself between two transactions (see writer.checkpoint).
// What a commit adds to the log is whole pages: at least commitPages of
// them, however few bytes its rows hold (a recorder in front of many
// short sessions commits small transactions all day), and the length
// the checkpointer last found the log at counts too.

// maxWALBytes is roughly how long the log may grow. A variable for tests.
var maxWALBytes = 256 << 20

// commitPages is how many pages a commit adds to the log at least: the
// last page of the frames table and of its index (measured: two 16 KiB
// pages for a commit of one small frame).
const commitPages = 2

// The writer asks for a checkpoint once it has committed ckptBytes since
// it last asked, or ckptInterval has passed (see writer.pokeCheckpointer).
const (
	ckptBytes    = 8 << 20
	ckptInterval = time.Second
)

// checkpointer runs checkpoints when the writer asks, until stop.
type checkpointer struct {
	db   *sql.DB       // one connection of its own
	kick chan struct{} // capacity 1: a commit happened
	// mu is held while a checkpoint runs, by the checkpointer or the
	// writer: SQLite runs one at a time and fails the others at once.
	mu sync.Mutex
	// logPages is how many pages the log held at the last checkpoint
	// (the checkpointer's or the writer's); 0 once it restarted.
	logPages atomic.Int64
	ctx      context.Context    // lifecycle: done once stop is called
	cancel   context.CancelFunc // ends run and any running checkpoint
	done     chan struct{}      // closed when run returns
}

func newCheckpointer(db *sql.DB) *checkpointer {
	ctx, cancel := context.WithCancel(context.Background())
	return &checkpointer{db: db, kick: make(chan struct{}, 1), ctx: ctx, cancel: cancel, done: make(chan struct{})}
}

// poke asks for a checkpoint without waiting for it.
func (c *checkpointer) poke() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

func (c *checkpointer) run() {
	defer close(c.done)
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-c.kick:
		}
		// Errors (SQLITE_BUSY, mostly, or the cancellation at stop) are
		// left for the next try: the pages stay safe in the log meanwhile,
		// and SQLite checkpoints all of them when the last connection
		// closes.
		var busy, logPages, done int64
		c.mu.Lock()
		if c.db.QueryRowContext(c.ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &logPages, &done) == nil {
			c.logPages.Store(logPages)
		}
		c.mu.Unlock()
	}
}

// stop ends run and waits for it.
func (c *checkpointer) stop() {
	c.cancel()
	<-c.done
}

// pokeCheckpointer asks the checkpointer for a passive checkpoint once
// ckptBytes have been committed since the last ask, or ckptInterval has
// passed with something committed. A checkpoint copies each page once
// however many commits changed it since the last: committing stream
// ends every endGap rewrites the same few pages (the last of the frames
// table and of its index, the streams'), and a checkpoint after each
// commit copied them every time. What a writer that falls idle within
// ckptInterval leaves in the log is checkpointed by its next commit or
// at Close; readers see it in the log meanwhile.
func (w *writer) pokeCheckpointer() {
	if w.unckpt == 0 {
		return
	}
	if w.unckpt >= ckptBytes || time.Since(w.poked) >= ckptInterval {
		w.unckpt, w.poked = 0, time.Now()
		w.d.ckpt.poke()
	}
}

// checkpoint runs a passive checkpoint on the writer's connection, between
// transactions. With no transaction running it can copy the whole log
// (the checkpointer has copied most of it already), and then the next
// transaction starts the log again from the beginning. A reader still
// using an old snapshot can keep it from finishing; it is tried again
// after the next commit.
func (w *writer) checkpoint() {
	w.d.ckpt.mu.Lock()
	defer w.d.ckpt.mu.Unlock()
	rows, err := w.c.QueryContext(bg, "PRAGMA wal_checkpoint(PASSIVE)", nil)
	if err != nil {
		return
	}
	defer rows.Close()
	res := make([]driver.Value, 3) // busy, pages in the log, pages copied
	if rows.Next(res) != nil {
		return
	}
	if res[0] == int64(0) && res[1] == res[2] {
		w.logged = 0
		w.d.ckpt.logPages.Store(0) // the next transaction starts the log again
	} else if n, ok := res[1].(int64); ok {
		w.d.ckpt.logPages.Store(n)
	}
}
