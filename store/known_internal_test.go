package store

import (
	"context"
	"testing"
	"time"
)

// endedSession records one session of a recorder's kind through d: a
// POST answered with two server frames, then the session's end.
func endedSession(t *testing.T, d *DB) (*Session, *Stream) {
	t.Helper()
	ctx := context.Background()
	s := &Session{Transport: StreamableHTTP, StartedAt: time.Now()}
	if err := d.CreateSession(ctx, s); err != nil {
		t.Fatal(err)
	}
	st := &Stream{SessionID: s.ID, Kind: PostStream, Method: "POST"}
	if err := d.OpenStream(ctx, st); err != nil {
		t.Fatal(err)
	}
	for i, raw := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}`,
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
	} {
		dir := ServerToClient
		if i == 0 {
			dir = ClientToServer
		}
		f := &Frame{SessionID: s.ID, StreamID: st.ID, Seq: int64(i + 1), Direction: dir, Raw: []byte(raw), Retry: -1}
		f.Derive(PostStream)
		if err := d.Append(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	st.End, st.Status = EndComplete, 200
	if err := d.CloseStream(ctx, st); err != nil {
		t.Fatal(err)
	}
	s.EndedAt = time.Now()
	if err := d.UpdateSession(ctx, s); err != nil {
		t.Fatal(err)
	}
	return s, st
}

// writerKeeps returns how many sessions d's writer keeps state for.
func writerKeeps(t *testing.T, d *DB) (seqs, fresh int) {
	t.Helper()
	err := d.exclusive(context.Background(), op{fn: func(*txn) error {
		seqs, fresh = len(d.w.seqs), len(d.w.fresh)
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	return seqs, fresh
}

// TestDB_ForgetsEndedSessions: a DB that records session after session,
// as a recorder in front of a client all day does, keeps a bounded number
// of the sessions and streams it knows exist, and its writer nothing of
// those that ended; writes for a session and a stream it has let go of
// are still checked and stored.
func TestDB_ForgetsEndedSessions(t *testing.T) {
	gen := knownGeneration
	knownGeneration = 32
	t.Cleanup(func() { knownGeneration = gen })
	d, _ := openTestDB(t, "all-day.db")
	ctx := context.Background()
	const n = 400
	first, firstStream := endedSession(t, d)
	for range n - 1 {
		endedSession(t, d)
	}
	if err := d.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	d.mu.Lock()
	sessions, streams := d.sessions.len(), d.streams.len()
	d.mu.Unlock()
	if sessions > 2*knownGeneration || streams > 2*knownGeneration {
		t.Errorf("after %d sessions the DB knows %d sessions and %d streams; want at most %d of each", n, sessions, streams, 2*knownGeneration)
	}
	if seqs, fresh := writerKeeps(t, d); seqs != 0 || fresh != 0 {
		t.Errorf("after %d sessions ended the writer keeps seqs of %d and fresh of %d; want none", n, seqs, fresh)
	}

	// The first session, long forgotten, gets a frame on its old stream
	// and a stream of its own; a stream of another session is refused.
	late := &Frame{SessionID: first.ID, StreamID: firstStream.ID, Seq: 4, Direction: ServerToClient,
		Raw: []byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{}}`), Retry: -1}
	late.Derive(PostStream)
	if err := d.Append(ctx, late); err != nil {
		t.Fatalf("Append to session %d's stream %d, let go of: %v", first.ID, firstStream.ID, err)
	}
	st := &Stream{SessionID: first.ID, Kind: PostStream, Method: "POST"}
	if err := d.OpenStream(ctx, st); err != nil {
		t.Fatal(err)
	}
	for seq := int64(5); seq <= 6; seq++ {
		f := &Frame{SessionID: first.ID, StreamID: st.ID, Seq: seq, Direction: ServerToClient, Raw: []byte(`{"jsonrpc":"2.0","method":"x"}`), Retry: -1}
		f.Derive(PostStream)
		if err := d.Append(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	wrong := &Frame{SessionID: first.ID + 1, StreamID: firstStream.ID, Seq: 9, Direction: ServerToClient, Raw: []byte(`{}`), Retry: -1}
	if err := d.Append(ctx, wrong); err == nil {
		t.Errorf("Append of a frame of session %d on stream %d of session %d: no error", first.ID+1, firstStream.ID, first.ID)
	}
	if err := d.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	fs, err := d.Frames(ctx, first.ID)
	if n := len(fs); err != nil || n != 6 || fs[n-3].Seq != 4 || fs[n-1].Seq != 6 {
		t.Errorf("session %d has %d frames (%v); want 6, the last three written after it was let go of", first.ID, n, err)
	}
}

// TestDB_LooksUpAgainWhatItForgot: a stream the DB let go of before its
// row was committed is still known to exist: the lookup that finds no row
// waits for the writer and looks again.
func TestDB_LooksUpAgainWhatItForgot(t *testing.T) {
	d, s := httpSession(t)
	ctx := context.Background()
	release := holdWriter(t, d)
	st := &Stream{SessionID: s.ID, Kind: PostStream, Method: "POST"}
	if err := d.OpenStream(ctx, st); err != nil {
		release()
		t.Fatal(err)
	}
	d.mu.Lock()
	d.streams.forget(st.ID) // as a full generation would
	d.mu.Unlock()
	released := false
	lookedUp = func() {
		if !released {
			released = true
			release() // the row is not in the file: only the writer has it
		}
	}
	t.Cleanup(func() { lookedUp = nil })
	f := &Frame{SessionID: s.ID, StreamID: st.ID, Seq: 1, Direction: ClientToServer, Raw: []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), Retry: -1}
	f.Derive(PostStream)
	err := d.Append(ctx, f)
	if !released {
		release()
		t.Fatal("the stream was found in the file while the writer still held it")
	}
	if err != nil {
		t.Fatalf("Append to stream %d, queued and let go of: %v", st.ID, err)
	}
}
