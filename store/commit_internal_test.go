package store

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

// TestWriter_CommitsStreamEndOnPause: a stream's end is on disk once the
// writes pause, without waiting for endGap or the commit interval, both
// stretched to an hour here.
func TestWriter_CommitsStreamEndOnPause(t *testing.T) {
	wait, gap := commitWait, endGap
	commitWait, endGap = time.Hour, time.Hour
	t.Cleanup(func() { commitWait, endGap = wait, gap })
	ctx := context.Background()
	d, s := httpSession(t)
	// The session's first frame is committed at once (see writer.fresh);
	// the stream below comes after it.
	st0 := &Stream{SessionID: s.ID, Kind: PostStream, Method: "POST"}
	if err := d.OpenStream(ctx, st0); err != nil {
		t.Fatal(err)
	}
	if err := d.Append(ctx, &Frame{SessionID: s.ID, StreamID: st0.ID, Seq: 1, Direction: ClientToServer, Raw: []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), Retry: -1}); err != nil {
		t.Fatal(err)
	}
	st := &Stream{SessionID: s.ID, Kind: PostStream, Method: "POST"}
	if err := d.OpenStream(ctx, st); err != nil {
		t.Fatal(err)
	}
	st.End = EndComplete
	if err := d.CloseStream(ctx, st); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		sts, err := d.Streams(ctx, s.ID)
		if err != nil && !errors.Is(err, ErrNotFound) {
			t.Fatal(err)
		}
		if len(sts) == 2 && sts[1].End == EndComplete {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the stream's end is not on disk 10 s after the writes paused: %+v", sts)
		}
	}
}

// httpSession opens a new cassette, closed when the test ends, with one
// Streamable HTTP session in it.
func httpSession(t *testing.T) (*DB, *Session) {
	t.Helper()
	d, err := Open(context.Background(), filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	s := &Session{Transport: StreamableHTTP}
	if err := d.CreateSession(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	return d, s
}
