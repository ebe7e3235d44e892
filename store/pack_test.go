package store

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// holdWriter keeps d's writer busy until the returned func is called, so
// that the writes queued meanwhile reach it in one take, as they do under
// load: then runs of frames go in packs.
func holdWriter(t *testing.T, d *DB) (release func()) {
	t.Helper()
	entered, rel, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		done <- d.exclusive(context.Background(), op{fn: func(*txn) error {
			close(entered)
			<-rel
			return nil
		}})
	}()
	<-entered
	return func() {
		close(rel)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

func openTestDB(t *testing.T, name string) (*DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	d, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d, path
}

func countRows(t *testing.T, d *DB, q string, args ...any) int {
	t.Helper()
	var n int
	if err := d.rdb.QueryRowContext(context.Background(), q, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// packTestFrames are frames of every shape for session sid: client
// requests, SSE events with and without ids, types, retry and data, a
// comment, empty data, a malformed event, an oversize one, a frame too
// big for a pack, a batch with members, frames without a stream.
func packTestFrames(sid, get, post int64) []*Frame {
	var fs []*Frame
	add := func(f *Frame, kind StreamKind) {
		f.SessionID, f.Seq = sid, int64(len(fs)+1)
		f.Offset = time.Duration(f.Seq) * time.Microsecond
		f.Derive(kind)
		fs = append(fs, f)
	}
	sse := func(raw, data string) *Frame {
		f := &Frame{StreamID: get, Direction: ServerToClient, Raw: []byte(raw), SSE: true, Retry: -1}
		if data != "" || strings.Contains(raw, "data") {
			f.Data = []byte(data)
		}
		return f
	}
	note := `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}`
	add(&Frame{StreamID: post, Direction: ClientToServer, Raw: []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`)}, PostStream)
	for range 3 {
		f := sse("event: message\ndata: "+note+"\n\n", note)
		f.Event = "message"
		add(f, GetStream)
	}
	f := sse("id: 7\nretry: 300\ndata: "+note+"\n\n", note)
	f.EventID, f.HasEventID, f.Retry = "7", true, 300
	add(f, GetStream)
	f = sse(": keep-alive\n\n", "")
	f.Comment = true
	add(f, GetStream)
	add(sse("data:\n\n", ""), GetStream)
	add(sse("data: {not json\n\n", "{not json"), GetStream)
	f = sse("data: "+note[:20], note[:14])
	f.Oversize = 5000
	add(f, GetStream)
	f = sse("data: a\r\ndata: b\r\n\r\n", "a\nb")
	add(f, GetStream)
	add(&Frame{StreamID: get, Direction: ServerToClient, Raw: []byte("data: " + strings.Repeat("x", maxChunked+10) + "\n\n"),
		Data: []byte(strings.Repeat("x", maxChunked+10)), SSE: true, Retry: -1}, GetStream)
	add(&Frame{StreamID: get, Direction: ServerToClient, Raw: []byte("data: " + note + "\n\n"), Data: []byte(note), SSE: true, Retry: -1}, GetStream)
	add(&Frame{StreamID: get, Direction: ServerToClient, Raw: []byte("data: " + note + "\n\n"), Data: []byte(note), SSE: true, Retry: -1}, GetStream)
	add(&Frame{Direction: ServerToClient, Raw: []byte(`[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","method":"m"}]`)}, PostStream)
	for range 3 {
		add(&Frame{StreamID: post, Direction: ServerToClient, Raw: []byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`)}, PostStream)
	}
	add(&Frame{Direction: ServerToClient, Raw: []byte(note + "\n")}, StdoutStream)
	add(&Frame{Direction: ServerToClient, Raw: nil}, StdoutStream)
	add(&Frame{StreamID: post, Direction: ClientToServer, Raw: []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)}, PostStream)
	add(&Frame{StreamID: post, Direction: ServerToClient, Raw: []byte(`{"jsonrpc":"2.0","id":2,"result":{}}`)}, PostStream)
	return fs
}

// record writes the frames of packTestFrames into d: all at once into a
// held writer (packed), or one by one with a flush after each (rows).
func record(t *testing.T, d *DB, packed bool) int64 {
	t.Helper()
	ctx := context.Background()
	s := &Session{Transport: StreamableHTTP, Name: "s"}
	if err := d.CreateSession(ctx, s); err != nil {
		t.Fatal(err)
	}
	get, post := &Stream{SessionID: s.ID, Kind: GetStream}, &Stream{SessionID: s.ID, Kind: PostStream}
	for _, st := range []*Stream{get, post} {
		if err := d.OpenStream(ctx, st); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	release := func() {}
	if packed {
		release = holdWriter(t, d)
	}
	for _, f := range packTestFrames(s.ID, get.ID, post.ID) {
		if err := d.Append(ctx, f); err != nil {
			t.Fatal(err)
		}
		if !packed {
			if err := d.Flush(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	release()
	if err := d.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	return s.ID
}

// TestPack_ReadsAsRows: frames written in packs read back, through
// Frames, Export and Check, exactly as the same frames written as rows.
func TestPack_ReadsAsRows(t *testing.T) {
	ctx := context.Background()
	rowsDB, _ := openTestDB(t, "rows.db")
	packDB, _ := openTestDB(t, "packs.db")
	rs, ps := record(t, rowsDB, false), record(t, packDB, true)

	if n := countRows(t, rowsDB, "SELECT count(*) FROM frame_packs"); n != 0 {
		t.Fatalf("the cassette written frame by frame has %d packs; want none", n)
	}
	packs := countRows(t, packDB, "SELECT count(*) FROM frame_packs")
	packed := countRows(t, packDB, "SELECT coalesce(sum(last_seq - first_seq + 1), 0) FROM frame_packs")
	rows := countRows(t, packDB, "SELECT count(*) FROM frames")
	clientRows := countRows(t, packDB, "SELECT count(*) FROM frames WHERE direction = 'c2s'")
	if packs < 2 || rows+packed != len(packTestFrames(1, 1, 1)) || clientRows != 2 || rows < 4 {
		t.Fatalf("packed cassette: %d packs of %d frames, %d rows (%d of the client); want packs, every client frame, the batch and the big frame in rows", packs, packed, rows, clientRows)
	}

	want, err := rowsDB.Frames(ctx, rs)
	if err != nil {
		t.Fatal(err)
	}
	got, err := packDB.Frames(ctx, ps)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Frames of the packed cassette differ from the rows' (-rows +packs):\n%s", diff)
	}
	var wx, gx bytes.Buffer
	if err := rowsDB.Export(ctx, &wx); err != nil {
		t.Fatal(err)
	}
	if err := packDB.Export(ctx, &gx); err != nil {
		t.Fatal(err)
	}
	if wx.String() != gx.String() {
		t.Errorf("Export of the packed cassette differs:\n%s\nwant\n%s", gx.String(), wx.String())
	}
	for _, d := range []*DB{rowsDB, packDB} {
		r, err := d.Check(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !r.OK() || r.Frames != int64(len(want)) {
			t.Errorf("Check() = %+v; want OK with %d frames", r, len(want))
		}
	}
}

// TestPack_SeqGivenTwice: a frame whose seq is in a pack already is
// refused alone, as a second row of the same seq is.
func TestPack_SeqGivenTwice(t *testing.T) {
	ctx := context.Background()
	var logs strings.Builder
	path := filepath.Join(t.TempDir(), "c.db")
	d, err := OpenWith(ctx, path, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	sid := record(t, d, true)
	var packedSeq int64
	if err := d.rdb.QueryRowContext(ctx, "SELECT first_seq + 1 FROM frame_packs LIMIT 1").Scan(&packedSeq); err != nil {
		t.Fatal(err)
	}
	before, err := d.Frames(ctx, sid)
	if err != nil {
		t.Fatal(err)
	}
	dup := &Frame{SessionID: sid, Seq: packedSeq, Direction: ServerToClient, Raw: []byte(`{"jsonrpc":"2.0","method":"dup"}`)}
	dup.Derive(StdoutStream)
	if err := d.Append(ctx, dup); err != nil {
		t.Fatal(err)
	}
	if err := d.Flush(ctx); err != nil {
		t.Fatalf("Flush() = %v; want nil: a refused frame must not stop the writer", err)
	}
	after, err := d.Frames(ctx, sid)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("frames changed by a seq given twice (-before +after):\n%s", diff)
	}
	if !strings.Contains(logs.String(), "UNIQUE constraint") {
		t.Errorf("log lacks the refused frame:\n%s", logs.String())
	}
}

// TestPack_Check: check reports a pack whose bytes do not decode, and the
// frames of a pack on a stream that does not exist.
func TestPack_Check(t *testing.T) {
	ctx := context.Background()
	d, path := openTestDB(t, "c.db")
	record(t, d, true)
	var first, last, stream int64
	var b []byte
	if err := d.rdb.QueryRowContext(ctx, "SELECT first_seq, last_seq, frames FROM frame_packs ORDER BY first_seq LIMIT 1").Scan(&first, &last, &b); err != nil {
		t.Fatal(err)
	}
	if err := unpack(1, first, last, b, func(f *Frame) error { stream = f.StreamID; return nil }); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"UPDATE frame_packs SET frames = x'01ff' WHERE first_seq = (SELECT max(first_seq) FROM frame_packs)",
		"DELETE FROM frames WHERE stream_id = " + strconv.FormatInt(stream, 10),
		"DELETE FROM streams WHERE id = " + strconv.FormatInt(stream, 10),
	} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	raw.Close()
	d, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	r, err := d.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(r.Problems, "\n")
	for _, w := range []string{"damaged pack", "frame " + strconv.FormatInt(first, 10) + " is on stream " + strconv.FormatInt(stream, 10) + ", which does not exist"} {
		if !strings.Contains(all, w) {
			t.Errorf("Check().Problems lack %q:\n%s", w, all)
		}
	}
	if _, err := d.Frames(ctx, 1); err == nil || !damaged(err) {
		t.Errorf("Frames() of a damaged pack = %v; want an error that says the file is damaged", err)
	}
}

// TestPack_DeleteSession: deleting a session deletes its packs.
func TestPack_DeleteSession(t *testing.T) {
	ctx := context.Background()
	d, _ := openTestDB(t, "c.db")
	sid := record(t, d, true)
	keep := record(t, d, true)
	if err := d.DeleteSession(ctx, sid); err != nil {
		t.Fatal(err)
	}
	if n, m := countRows(t, d, "SELECT count(*) FROM frame_packs WHERE session_id = ?", sid),
		countRows(t, d, "SELECT count(*) FROM frame_packs WHERE session_id = ?", keep); n != 0 || m == 0 {
		t.Errorf("after deleting session %d: %d packs of it and %d of session %d; want 0 and some", sid, n, m, keep)
	}
}

// TestPack_ReadOnlyOlder: cassettes of the schemas before frame_packs (5),
// before replay's exchange index (6), before runs of events (7), before
// compressed packs (8) and before the cache (10), opened read-only (they
// cannot be upgraded), read as they are: every frame a row, an empty
// cache (replay keeps its index in memory).
func TestPack_ReadOnlyOlder(t *testing.T) {
	for _, version := range []int{packsVersion - 1, 6, runsVersion - 1, compressedVersion - 1, cacheVersion - 1} {
		t.Run(fmt.Sprint("version", version), func(t *testing.T) {
			ctx := context.Background()
			path := filepath.Join(t.TempDir(), "old.db")
			raw, err := sql.Open("sqlite3", path)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := raw.Exec("PRAGMA journal_mode = DELETE"); err != nil {
				t.Fatal(err)
			}
			for _, m := range migrations[:version] {
				if err := applyMigration(ctx, raw, m); err != nil {
					t.Fatal(err)
				}
			}
			for _, q := range []string{
				`INSERT INTO sessions (id, transport) VALUES (1, 'stdio')`,
				`INSERT INTO frames (session_id, seq, direction, offset_ns, kind, method, raw) VALUES (1, 1, 's2c', 0, 'notification', 'm', '{"jsonrpc":"2.0","method":"m"}')`,
			} {
				if _, err := raw.Exec(q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			raw.Close()
			d, err := openReadOnly(ctx, path)
			if err != nil {
				t.Fatalf("open a version %d cassette read-only: %v", version, err)
			}
			defer d.Close()
			fs, err := d.Frames(ctx, 1)
			if err != nil || len(fs) != 1 || fs[0].Method != "m" {
				t.Fatalf("Frames() = %+v, %v; want the one frame", fs, err)
			}
			r, err := d.Check(ctx)
			if err != nil || !r.OK() || r.Frames != 1 {
				t.Errorf("Check() = %+v, %v; want OK with 1 frame", r, err)
			}
			var x bytes.Buffer
			if err := d.Export(ctx, &x); err != nil || !strings.Contains(x.String(), `"method":"m"`) {
				t.Errorf("Export() = %v:\n%s", err, x.String())
			}
			if es, err := d.CacheRange(ctx, "any", nil, 0, 0); err != nil || len(es) != 0 {
				t.Errorf("CacheRange() = %v, %v; want none, nil", es, err)
			}
		})
	}
}

// TestPack_Bounds: a long run of big frames is cut into packs of at most
// maxPackFrames frames and maxPackBytes bytes, rather than left in rows.
func TestPack_Bounds(t *testing.T) {
	ctx := context.Background()
	d, _ := openTestDB(t, "c.db")
	s := &Session{Transport: Stdio}
	if err := d.CreateSession(ctx, s); err != nil {
		t.Fatal(err)
	}
	st := &Stream{SessionID: s.ID, Kind: StdoutStream}
	if err := d.OpenStream(ctx, st); err != nil {
		t.Fatal(err)
	}
	if err := d.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	release := holdWriter(t, d)
	const n = 600
	var want []string
	for i := range n {
		size := 2 << 10
		if i >= n/2 {
			size = 100 // small frames: cut by count
		}
		raw := `{"jsonrpc":"2.0","method":"m","params":{"i":` + strconv.Itoa(i) + `,"x":"` + strings.Repeat("x", size) + `"}}` + "\n"
		f := &Frame{SessionID: s.ID, StreamID: st.ID, Seq: int64(i + 1), Direction: ServerToClient, Raw: []byte(raw)}
		f.Derive(StdoutStream)
		if err := d.Append(ctx, f); err != nil {
			t.Fatal(err)
		}
		want = append(want, raw)
	}
	release()
	if err := d.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	rows := countRows(t, d, "SELECT count(*) FROM frames")
	big := countRows(t, d, "SELECT count(*) FROM frame_packs WHERE length(frames) > ? OR last_seq - first_seq + 1 > ?", maxPackBytes+maxChunked, maxPackFrames)
	if rows > 1 || big != 0 {
		t.Errorf("%d frames in rows, %d packs over the bounds; want (but for the session's first frame) every frame in packs within them", rows, big)
	}
	fs, err := d.Frames(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range fs {
		got = append(got, string(f.Raw))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("frames read back differ (-want +got):\n%s", diff)
	}
}
