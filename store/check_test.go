package store_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpvcr/mcpvcr/store"
)

func TestDB_Check(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "c.db")
	d, err := store.Open(ctx, path)
	must(t, err)
	s := &store.Session{Transport: store.Stdio}
	must(t, d.CreateSession(ctx, s))
	st := newStdioStream(t, d, s.ID, store.StdoutStream)
	// Frame 1 is the client's, a row of frames; 4 and 5 are the
	// server's with consecutive seqs, a pack (the order is checked
	// across both).
	for _, f := range []struct {
		seq    int64
		dir    store.Direction
		offset time.Duration
	}{{1, store.ClientToServer, 0}, {2, store.ServerToClient, 5 * time.Millisecond}, {4, store.ServerToClient, 3 * time.Millisecond},
		{5, store.ServerToClient, 3 * time.Millisecond}, {9, store.ServerToClient, 4 * time.Millisecond}} {
		must(t, d.Append(ctx, frame(f.seq, st, f.dir, f.offset, "{}\n")))
	}
	must(t, d.Close())

	// Break references behind the store's back.
	db, err := sql.Open("sqlite3", path)
	must(t, err)
	_, err = db.Exec("UPDATE frames SET stream_id = 99 WHERE seq = 1")
	must(t, err)
	must(t, db.Close())

	d = openPath(t, path)
	r, err := d.Check(ctx)
	must(t, err)
	want := []string{
		"frames row 1 refers to a missing row of streams",
		"session 1: frame 1 is on stream 99, which does not exist",
		"session 1: frame 3 is missing",
		"session 1: frame 4 is at 3ms, before frame 2 at 5ms",
		"session 1: frames 6 to 8 are missing",
	}
	if diff := cmp.Diff(want, r.Problems); diff != "" {
		t.Errorf("Check().Problems mismatch (-want +got):\n%s", diff)
	}
	if r.OK() || len(r.Integrity) != 0 || r.Frames != 5 {
		t.Errorf("Check() = %+v; want 5 frames, problems, no integrity damage", r)
	}
	if got, want := strings.SplitN(r.String(), "\n", 2)[0], "5 problems in 1 session, 1 stream, 5 frames:"; got != want {
		t.Errorf("Check().String() first line = %q; want %q", got, want)
	}
}

func TestReport_String(t *testing.T) {
	tests := []struct {
		name string
		r    store.Report
		want string
	}{
		{"OK", store.Report{Sessions: 2, Streams: 3, Frames: 40}, "ok: 2 sessions, 3 streams, 40 frames"},
		{"Problems", store.Report{Frames: 1, Integrity: []string{"page 4 is never used"}, Problems: []string{"session 1: frame 1 is missing"}, Omitted: 3},
			"5 problems in 0 sessions, 0 streams, 1 frame:\n  integrity: page 4 is never used\n  session 1: frame 1 is missing\n  and 3 more"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.r.String(); got != tt.want {
				t.Errorf("String() = %q; want %q", got, tt.want)
			}
		})
	}
}
