package main

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/mcpvcr/mcpvcr/store"
)

// lazyDB is a cassette opened in the background: mcpvcr record starts
// the server and forwards at once, while Open may wait for other
// recorders writing to the same file. It is a recorder.Sink whose calls
// wait for the open; the recorder makes its first one (CreateSession) off
// the forwarding path.
type lazyDB struct {
	done chan struct{}
	db   *store.DB // set when done is closed, nil if the open failed
	err  error
}

// openLazy probes the cassette (so that a wrong file is refused before the
// server starts) and opens it in the background.
func openLazy(c *cli.Context, e *env) (*lazyDB, error) {
	path := cassettePath(c)
	if err := cassetteName(c, path); err != nil {
		return nil, err
	}
	if err := store.Probe(path); err != nil {
		return nil, openErr(path, err)
	}
	l := &lazyDB{done: make(chan struct{})}
	go func() {
		defer close(l.done)
		l.db, l.err = openForWrite(c, e)
	}()
	return l, nil
}

// wait returns the open cassette, or why it could not be opened.
func (l *lazyDB) wait(ctx context.Context) (*store.DB, error) {
	select {
	case <-l.done:
		return l.db, l.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Close waits for the open and closes the cassette, returning the open's
// error if it failed.
func (l *lazyDB) Close() error {
	<-l.done
	if l.err != nil {
		return l.err
	}
	return l.db.Close()
}

func (l *lazyDB) CreateSession(ctx context.Context, s *store.Session) error {
	db, err := l.wait(ctx)
	if err != nil {
		return err
	}
	return db.CreateSession(ctx, s)
}

func (l *lazyDB) UpdateSession(ctx context.Context, s *store.Session) error {
	db, err := l.wait(ctx)
	if err != nil {
		return err
	}
	return db.UpdateSession(ctx, s)
}

func (l *lazyDB) OpenStream(ctx context.Context, st *store.Stream) error {
	db, err := l.wait(ctx)
	if err != nil {
		return err
	}
	return db.OpenStream(ctx, st)
}

func (l *lazyDB) CloseStream(ctx context.Context, st *store.Stream) error {
	db, err := l.wait(ctx)
	if err != nil {
		return err
	}
	return db.CloseStream(ctx, st)
}

// TakesEventRuns reports true: every cassette takes runs of SSE events
// (see recorder.RunSink).
func (l *lazyDB) TakesEventRuns() bool { return true }

func (l *lazyDB) Append(ctx context.Context, f *store.Frame) error {
	db, err := l.wait(ctx)
	if err != nil {
		return err
	}
	return db.Append(ctx, f)
}
