// Package lazydb is a cassette opened in the background, so that mcpvcr
// record starts the server and forwards at once while the open may wait
// for other recorders writing to the same file.
package lazydb

import (
	"context"

	"github.com/mcpvcr/mcpvcr/store"
)

// DB is a recorder.Sink whose calls wait for the open; the recorder makes
// its first one (CreateSession) off the forwarding path. Its methods are
// safe for concurrent use. The caller must call Close.
type DB struct {
	done chan struct{}
	db   *store.DB // set when done is closed, nil if the open failed
	err  error
}

// Open calls open in a goroutine of its own and returns at once.
func Open(open func() (*store.DB, error)) *DB {
	l := &DB{done: make(chan struct{})}
	go func() {
		defer close(l.done)
		l.db, l.err = open()
	}()
	return l
}

// wait returns the open cassette, or why it could not be opened.
func (l *DB) wait(ctx context.Context) (*store.DB, error) {
	select {
	case <-l.done:
		return l.db, l.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Close waits for the open and closes the cassette, returning the open's
// error if it failed.
func (l *DB) Close() error {
	<-l.done
	if l.err != nil {
		return l.err
	}
	return l.db.Close()
}

// OpenErr waits for the open and returns its error: nil when the
// cassette opened.
func (l *DB) OpenErr() error {
	<-l.done
	return l.err
}

// CreateSession waits for the open and calls store.DB.CreateSession.
func (l *DB) CreateSession(ctx context.Context, s *store.Session) error {
	db, err := l.wait(ctx)
	if err != nil {
		return err
	}
	return db.CreateSession(ctx, s)
}

// UpdateSession waits for the open and calls store.DB.UpdateSession.
func (l *DB) UpdateSession(ctx context.Context, s *store.Session) error {
	db, err := l.wait(ctx)
	if err != nil {
		return err
	}
	return db.UpdateSession(ctx, s)
}

// OpenStream waits for the open and calls store.DB.OpenStream.
func (l *DB) OpenStream(ctx context.Context, st *store.Stream) error {
	db, err := l.wait(ctx)
	if err != nil {
		return err
	}
	return db.OpenStream(ctx, st)
}

// CloseStream waits for the open and calls store.DB.CloseStream.
func (l *DB) CloseStream(ctx context.Context, st *store.Stream) error {
	db, err := l.wait(ctx)
	if err != nil {
		return err
	}
	return db.CloseStream(ctx, st)
}

// TakesEventRuns reports true: every cassette takes runs of SSE events
// (see recorder.RunSink).
func (l *DB) TakesEventRuns() bool { return true }

// Append waits for the open and calls store.DB.Append.
func (l *DB) Append(ctx context.Context, f *store.Frame) error {
	db, err := l.wait(ctx)
	if err != nil {
		return err
	}
	return db.Append(ctx, f)
}
