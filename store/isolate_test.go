package store

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// syncBuffer is a bytes.Buffer safe for the writer goroutine's log.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// openRefusing opens a new cassette, closed when the test ends, whose
// writer refuses values longer than 4096 bytes (SQLite's length limit,
// lowered for the test), with its log in the returned buffer.
func openRefusing(t *testing.T) (*DB, *syncBuffer) {
	t.Helper()
	lengthLimit = 4096
	t.Cleanup(func() { lengthLimit = 0 })
	logs := new(syncBuffer)
	d, err := OpenWith(context.Background(), filepath.Join(t.TempDir(), "c.db"), Options{Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d, logs
}

// TestWriter_IsolatesRefusedFrame appends, among the frames of two
// sessions, frames SQLite refuses: one longer than its length limit
// (lowered for the test), alone and inside a run of small frames inserted
// with one statement, and one whose seq was given already. Each is dropped
// alone and reported; every other frame of both sessions is stored, the
// writer goes on, and a too-long frame leaves a placeholder in its place.
func TestWriter_IsolatesRefusedFrame(t *testing.T) {
	ctx := context.Background()
	d, logs := openRefusing(t)
	a, b := &Session{Transport: Stdio}, &Session{Transport: Stdio}
	for _, s := range []*Session{a, b} {
		if err := d.CreateSession(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	frame := func(s *Session, seq int64, n int) *Frame {
		// Padding that does not compress, so that the too-long frames
		// stay too long in a pack (see packz.go).
		raw := fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"m","params":{"pad":"%s"}}`+"\n", noise(n))
		f := &Frame{SessionID: s.ID, Seq: seq, Direction: ServerToClient, Raw: raw}
		f.Derive(StdoutStream)
		return f
	}
	// Session a: 1..40 with seq 7 too long (in a run), 20 too long and
	// past the chunk size (alone), and seq 30 given twice.
	var want []int64
	for seq := int64(1); seq <= 40; seq++ {
		n := 10
		switch seq {
		case 7:
			n = 8000
		case 20:
			n = 20000
		}
		for _, f := range []*Frame{frame(a, seq, n), frame(b, seq, 10)} {
			if err := d.Append(ctx, f); err != nil {
				t.Fatal(err)
			}
		}
		if seq == 30 {
			if err := d.Append(ctx, frame(a, 30, 10)); err != nil {
				t.Fatal(err)
			}
		}
		want = append(want, seq)
	}
	if err := d.Flush(ctx); err != nil {
		t.Fatalf("Flush() = %v; want nil: a refused frame must not stop the writer", err)
	}
	for _, s := range []*Session{a, b} {
		fs, err := d.Frames(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		var got []int64
		for _, f := range fs {
			got = append(got, f.Seq)
			switch {
			case s == a && (f.Seq == 7 || f.Seq == 20):
				if len(f.Raw) != 0 || f.Oversize <= 4096 {
					t.Errorf("session %d frame %d: %d bytes, oversize %d; want a placeholder of no bytes with its true length", s.ID, f.Seq, len(f.Raw), f.Oversize)
				}
			case f.Oversize != 0 || len(f.Raw) == 0:
				t.Errorf("session %d frame %d: %d bytes, oversize %d; want it whole", s.ID, f.Seq, len(f.Raw), f.Oversize)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("session %d stores seqs %v; want %v", s.ID, got, want)
		}
	}
	for _, w := range []string{"level=ERROR", "too big", "UNIQUE constraint"} {
		if !strings.Contains(logs.String(), w) {
			t.Errorf("log lacks %q:\n%s", w, logs.String())
		}
	}
	rep, err := d.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		t.Errorf("Check() =\n%s", rep)
	}
}

// TestWriter_FirstCommitAtOnce fills the file (capped at a few pages, as
// a full disk would) with the second frame of a new session, queued right
// after the session and its first frame, well within one commit interval.
// The session and its first frame were committed at once, so they are
// kept; before, the one batch holding them all was rolled back whole.
func TestWriter_FirstCommitAtOnce(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "c.db")
	d, err := Open(ctx, path) // the schema, before the cap
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	maxPages = 40
	d, err = Open(ctx, path)
	maxPages = 0
	if err != nil {
		t.Fatal(err)
	}
	s := &Session{Transport: Stdio}
	st := &Stream{Kind: StdoutStream}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(d.CreateSession(ctx, s))
	st.SessionID = s.ID
	must(d.OpenStream(ctx, st))
	first := &Frame{SessionID: s.ID, StreamID: st.ID, Seq: 1, Direction: ServerToClient, Raw: []byte(`{"jsonrpc":"2.0","method":"m"}` + "\n")}
	first.Derive(StdoutStream)
	big := &Frame{SessionID: s.ID, StreamID: st.ID, Seq: 2, Direction: ServerToClient, Raw: bytes.Repeat([]byte("x"), 4<<20)}
	big.Derive(StdoutStream)
	must(d.Append(ctx, first))
	must(d.Append(ctx, big))
	if err := d.Flush(ctx); err == nil {
		t.Fatal("Flush() = nil; want the full file's error")
	}
	d.Close()
	d, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ss, err := d.Sessions(ctx)
	must(err)
	if len(ss) != 1 {
		t.Fatalf("the file holds %d sessions; want the one whose creation was committed at once", len(ss))
	}
	fs, err := d.Frames(ctx, ss[0].ID)
	must(err)
	if len(fs) != 1 || !bytes.Equal(fs[0].Raw, first.Raw) {
		t.Errorf("the session holds %d frames; want its first, committed at once", len(fs))
	}
}

// TestOpen_ReserveIDs: a DB opened with ReserveIDs holds session and
// stream IDs before its first session asks, and gives back what it did
// not use: the next DB numbers its first session 1.
func TestOpen_ReserveIDs(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "c.db")
	d, err := OpenWith(ctx, path, Options{ReserveIDs: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	d.mu.Lock()
	sessions, streams := d.sessionIDs.left(), d.streamIDs.left()
	d.mu.Unlock()
	if sessions == 0 || streams == 0 {
		t.Errorf("after Open with ReserveIDs: %d session and %d stream IDs reserved; want blocks of both", sessions, streams)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	s := &Session{Transport: Stdio}
	if err := d.CreateSession(ctx, s); err != nil {
		t.Fatal(err)
	}
	if s.ID != 1 {
		t.Errorf("first session ID after a DB that reserved and used none = %d; want 1", s.ID)
	}
}
