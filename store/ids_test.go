package store_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/mcpvcr/mcpvcr/store"
)

// TestDB_ManyWriters: DBs opened at the same instant on one file, new or
// existing, each record sessions with streams and frames at once. Every
// session gets an ID of its own, every frame is there, Check is clean,
// and while only one DB writes, IDs stay 1, 2, 3, ...
func TestDB_ManyWriters(t *testing.T) {
	const writers, sessionsEach, streamsEach, framesEach = 6, 3, 4, 5
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "c.db")
	for round, state := range []string{"new", "existing"} {
		t.Run(state, func(t *testing.T) {
			start := make(chan struct{})
			var wg sync.WaitGroup
			errs := make(chan error, writers)
			for w := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					errs <- writeSessions(ctx, path, fmt.Sprintf("r%d-w%d", round, w), sessionsEach, streamsEach, framesEach)
				}()
			}
			close(start)
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Error(err)
				}
			}
			d := openPath(t, path)
			ss, err := d.Sessions(ctx)
			must(t, err)
			if got, want := len(ss), (round+1)*writers*sessionsEach; got != want {
				t.Errorf("Sessions() = %d sessions; want %d", got, want)
			}
			for _, s := range ss {
				fs, err := d.Frames(ctx, s.ID)
				must(t, err)
				if got, want := len(fs), streamsEach*framesEach; got != want || s.EndedAt.IsZero() {
					t.Errorf("session %d (%s): %d frames, ended %v; want %d, ended", s.ID, s.Name, got, s.EndedAt, want)
				}
			}
			rep, err := d.Check(ctx)
			must(t, err)
			if len(rep.Problems) > 0 {
				t.Errorf("Check() problems: %q", rep.Problems)
			}
		})
	}
}

// writeSessions opens path and records n sessions into it, each with
// streams of frames.
func writeSessions(ctx context.Context, path, name string, n, streams, frames int) (err error) {
	d, err := store.Open(ctx, path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := d.Close(); err == nil {
			err = cerr
		}
	}()
	for i := range n {
		s := &store.Session{Name: fmt.Sprintf("%s-s%d", name, i), Transport: store.StreamableHTTP, StartedAt: time.Now()}
		if err := d.CreateSession(ctx, s); err != nil {
			return err
		}
		seq := int64(0)
		for range streams {
			st := &store.Stream{SessionID: s.ID, Kind: store.PostStream, Method: "POST"}
			if err := d.OpenStream(ctx, st); err != nil {
				return err
			}
			for range frames {
				seq++
				f := &store.Frame{SessionID: s.ID, StreamID: st.ID, Seq: seq, Direction: store.ClientToServer,
					Raw: []byte(`{"jsonrpc":"2.0","method":"ping","id":1}`)}
				f.Derive(st.Kind)
				if err := d.Append(ctx, f); err != nil {
					return err
				}
			}
			st.End = store.EndComplete
			if err := d.CloseStream(ctx, st); err != nil {
				return err
			}
		}
		s.EndedAt = time.Now()
		if err := d.UpdateSession(ctx, s); err != nil {
			return err
		}
	}
	return d.Flush(ctx)
}

// TestDB_IDsGivenBack: a DB gives back the IDs it reserved and did not
// use, so that the next one to open the file goes on from the last ID
// used.
func TestDB_IDsGivenBack(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "c.db")
	var last int64
	for i := range 3 {
		d, err := store.Open(ctx, path)
		must(t, err)
		s := &store.Session{Transport: store.Stdio}
		must(t, d.CreateSession(ctx, s))
		st := newStdioStream(t, d, s.ID, store.StdinStream)
		must(t, d.Close())
		if got, want := s.ID, int64(i+1); got != want {
			t.Errorf("run %d: session ID = %d; want %d", i, got, want)
		}
		if i > 0 && st.ID != last+1 {
			t.Errorf("run %d: stream ID = %d; want %d", i, st.ID, last+1)
		}
		last = st.ID
	}
}

// TestOpen_ManyAtOnce: 8 DBs opened at the same instant on a new file, 60
// times: every Open succeeds, whatever point of creating the cassette the
// others are at. (Reading the file's application_id, user_version and
// tables outside one transaction found the tables without the id here,
// about once in 30 rounds.)
func TestOpen_ManyAtOnce(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for round := range 60 {
		path := filepath.Join(dir, fmt.Sprintf("r%d.db", round))
		start := make(chan struct{})
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for range 8 {
			wg.Go(func() {
				<-start
				d, err := store.Open(ctx, path)
				if err == nil {
					err = d.Close()
				}
				errs <- err
			})
		}
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
	}
}
