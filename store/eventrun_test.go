package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/mcpvcr/mcpvcr/internal/sse"
)

// runEvents returns n SSE blocks of notifications a run may hold, from i.
func runEvents(i, n int) []string {
	var bs []string
	for j := i; j < i+n; j++ {
		bs = append(bs, fmt.Sprintf("event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":%d}}\n\n", j))
	}
	return bs
}

// eventFrames returns the frames of blocks as the recorder makes them
// one by one: split, derived, seqs from seq on.
func eventFrames(sid, stream, seq int64, blocks []string) []*Frame {
	var sp sse.Splitter
	var fs []*Frame
	for _, ev := range sp.Feed(nil, []byte(strings.Join(blocks, ""))) {
		f := &Frame{SessionID: sid, StreamID: stream, Seq: seq, Direction: ServerToClient, Raw: ev.Raw, SSE: true,
			Event: ev.Type, Retry: ev.Retry, Data: ev.Data}
		f.Derive(PostStream)
		fs = append(fs, f)
		seq++
	}
	return fs
}

// values returns the frames fs point to.
func values(fs []*Frame) []Frame {
	out := make([]Frame, len(fs))
	for i, f := range fs {
		out[i] = *f
	}
	return out
}

// TestEventRun_Paths appends runs of events where the writer packs them,
// where it must write them as rows (a session it did not create, a run
// alone between client frames, seqs of which a pack holds some), and
// requires each to read back as the frames of its events.
func TestEventRun_Paths(t *testing.T) {
	ctx := context.Background()
	d, path, s, st := postSession(t)
	var want []*Frame
	seq := int64(1)
	add := func(d *DB, blocks []string, asRun bool) {
		t.Helper()
		fs := eventFrames(s.ID, st.ID, seq, blocks)
		want = append(want, fs...)
		if asRun {
			run := &Frame{SessionID: s.ID, StreamID: st.ID, Seq: seq, Direction: ServerToClient, SSE: true,
				Raw: []byte(strings.Join(blocks, "")), Events: len(blocks)}
			if err := d.Append(ctx, run); err != nil {
				t.Fatal(err)
			}
		} else {
			for _, f := range fs {
				if err := d.Append(ctx, f); err != nil {
					t.Fatal(err)
				}
			}
		}
		seq += int64(len(fs))
	}
	client := func(d *DB) {
		t.Helper()
		f := &Frame{SessionID: s.ID, StreamID: st.ID, Seq: seq, Direction: ClientToServer, Raw: []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{}}`)}
		f.Derive(PostStream)
		want = append(want, f)
		if err := d.Append(ctx, f); err != nil {
			t.Fatal(err)
		}
		seq++
	}
	if err := d.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	// Packed: runs among frames of one take of the writer.
	release := holdWriter(t, d)
	add(d, runEvents(0, 5), true)
	add(d, runEvents(5, 2), false)
	add(d, runEvents(7, 1), true)
	add(d, runEvents(8, 30), true)
	release()
	// Alone between client frames, each its own take.
	for i := range 3 {
		if err := d.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		client(d)
		if err := d.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		add(d, runEvents(100+10*i, 4), true)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	// A session this DB did not create: its frames go in rows.
	d, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	add(d, runEvents(200, 6), true)
	client(d)
	add(d, runEvents(206, 3), true)
	if err := d.Flush(ctx); err != nil {
		t.Fatal(err)
	}

	got, err := d.Frames(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(values(want), got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("frames read back differ (-appended +read):\n%s", diff)
	}
	if r, err := d.Check(ctx); err != nil || !r.OK() || r.Frames != int64(len(want)) {
		t.Errorf("Check() = %+v, %v; want OK with %d frames", r, err, len(want))
	}
	if n := countRows(t, d, "SELECT count(*) FROM frames"); n < 9+4 {
		t.Errorf("%d frames in rows; want the runs appended after reopening in rows", n)
	}
}

// postSession opens a new cassette, closed when the test ends, with an
// HTTP session and a POST stream of it, and returns its path too.
func postSession(t *testing.T) (*DB, string, *Session, *Stream) {
	t.Helper()
	ctx := context.Background()
	d, path := openTestDB(t, "c.db")
	s := &Session{Transport: StreamableHTTP}
	if err := d.CreateSession(ctx, s); err != nil {
		t.Fatal(err)
	}
	st := &Stream{SessionID: s.ID, Kind: PostStream}
	if err := d.OpenStream(ctx, st); err != nil {
		t.Fatal(err)
	}
	return d, path, s, st
}

// TestEventRun_SeqGivenTwice: a run some of whose seqs a pack holds
// already has those refused, as frames of them would be, and the rest
// written.
func TestEventRun_SeqGivenTwice(t *testing.T) {
	ctx := context.Background()
	d, _, s, st := postSession(t)
	release := holdWriter(t, d)
	first := runEvents(0, 4)
	if err := d.Append(ctx, &Frame{SessionID: s.ID, StreamID: st.ID, Seq: 1, Direction: ServerToClient, SSE: true,
		Raw: []byte(strings.Join(first, "")), Events: 4}); err != nil {
		t.Fatal(err)
	}
	release()
	if err := d.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	again := runEvents(50, 4)
	if err := d.Append(ctx, &Frame{SessionID: s.ID, StreamID: st.ID, Seq: 3, Direction: ServerToClient, SSE: true,
		Raw: []byte(strings.Join(again, "")), Events: 4}); err != nil {
		t.Fatal(err)
	}
	if err := d.Flush(ctx); err != nil {
		t.Fatalf("Flush() = %v; want nil: a refused frame must not stop the writer", err)
	}
	got, err := d.Frames(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := append(eventFrames(s.ID, st.ID, 1, first), eventFrames(s.ID, st.ID, 5, again[2:])...)
	if diff := cmp.Diff(values(want), got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("frames differ (-want +got):\n%s", diff)
	}
}

// TestEventRun_Invalid: Append refuses what cannot be a run of events,
// and a read reports a run that does not split into its events as a
// damaged pack.
func TestEventRun_Invalid(t *testing.T) {
	ctx := context.Background()
	d, _, s, _ := postSession(t)
	raw := []byte(strings.Join(runEvents(0, 2), ""))
	for name, f := range map[string]*Frame{
		"negative":     {Events: -1, SSE: true, Raw: raw},
		"not SSE":      {Events: 2, Raw: raw},
		"client's":     {Events: 2, SSE: true, Raw: raw, Direction: ClientToServer},
		"data set":     {Events: 2, SSE: true, Raw: raw, Data: raw},
		"empty":        {Events: 2, SSE: true},
		"too long":     {Events: 1, SSE: true, Raw: make([]byte, maxRunBytes+1)},
		"no direction": {Events: 2, SSE: true, Raw: raw, Direction: Direction(0)},
	} {
		if f.Direction == 0 && name != "no direction" {
			f.Direction = ServerToClient
		}
		f.SessionID, f.Seq = s.ID, 1
		if err := d.Append(ctx, f); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: Append() = %v; want %v", name, err, ErrInvalid)
		}
	}
	for name, run := range map[string]*Frame{
		"fewer events":    {Events: 3, Raw: raw},
		"more events":     {Events: 1, Raw: raw},
		"cut short":       {Events: 2, Raw: raw[:len(raw)-1]},
		"not runnable":    {Events: 1, Raw: []byte("id: 1\ndata: {}\n\n")},
		"an answer":       {Events: 1, Raw: []byte(`data: {"jsonrpc":"2.0","id":1,"result":{}}` + "\n\n")},
		"more than seqs":  {Events: 9, Raw: []byte(strings.Join(runEvents(0, 9), ""))},
		"a pack's 0 runs": {Events: 0, Raw: raw},
	} {
		t.Run(name, func(t *testing.T) {
			run.SSE, run.Direction, run.Seq = true, ServerToClient, 1
			b := appendPacked([]byte{packFormat}, run)
			if run.Events == 0 {
				// A run entry that says it holds no event.
				b = append([]byte{packFormat}, appendRunEntry(run)...)
			}
			last := int64(max(run.Events, 1))
			if name == "more than seqs" {
				last = 4
			}
			err := unpack(1, 1, last, b, func(*Frame) error { return nil })
			if !errors.Is(err, errBadPack) {
				t.Errorf("unpack() = %v; want %v", err, errBadPack)
			}
		})
	}
}

// appendRunEntry encodes run as a run entry whatever its Events.
func appendRunEntry(run *Frame) []byte {
	n := run.Events
	run.Events = 1
	b := appendPacked(nil, run)
	run.Events = n
	// The count is the fifth value: flags, stream, direction, offset.
	d := &packDecoder{b: b}
	d.uvarint()
	d.uvarint()
	d.uvarint()
	d.varint()
	head := len(b) - len(d.b)
	return append(append(b[:head:head], byte(n)), d.b[1:]...)
}

// FuzzUnpack: a pack's bytes, from a damaged or hostile file, either
// decode into exactly the frames of its seqs or fail with errBadPack;
// they never panic or take memory they do not hold.
func FuzzUnpack(f *testing.F) {
	run := &Frame{Direction: ServerToClient, SSE: true, Raw: []byte(strings.Join(runEvents(0, 3), "")), Events: 3}
	seed := appendPacked([]byte{packFormat}, run)
	for _, fr := range eventFrames(1, 1, 4, runEvents(3, 2)) {
		seed = appendPacked(seed, fr)
	}
	f.Add(seed, int64(5))
	if z, _ := compressPack(nil, seed); z[0] == packCompressed {
		f.Add(z, int64(5))
	}
	f.Add(appendPacked([]byte{packFormat}, run), int64(3))
	f.Add([]byte{packFormat, packRun | packSSE, 1, 2, 0, 200, 1}, int64(1))
	f.Fuzz(func(t *testing.T, b []byte, n int64) {
		if n < 1 || n > 1000 {
			return
		}
		got := int64(0)
		err := unpack(1, 1, n, b, func(fr *Frame) error {
			got++
			if fr.Seq != got {
				t.Fatalf("frame %d has seq %d", got, fr.Seq)
			}
			return nil
		})
		switch {
		case err != nil && !errors.Is(err, errBadPack):
			t.Fatalf("unpack() = %v; want nil or %v", err, errBadPack)
		case err == nil && got != n:
			t.Fatalf("unpack() gave %d frames for seqs 1 to %d", got, n)
		}
	})
}
