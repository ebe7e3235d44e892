package store_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpvcr/mcpvcr/store"
)

// hostileCassette records a sample into a new cassette and then, behind
// the store's back, runs stmts on it, as a stranger's cassette would
// come. It returns the path and the rows of frames, sessions and packs.
func hostileCassette(t *testing.T, stmts ...string) (path string, before string) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "stranger.db")
	d := openPath(t, path)
	recordSample(t, d)
	must(t, d.Close())
	db, err := sql.Open("sqlite3", path)
	must(t, err)
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	return path, rawCounts(t, path)
}

// rawCounts reads what a cassette holds with plain SQL, past any view:
// the rows of its tables and their names.
func rawCounts(t *testing.T, path string) string {
	t.Helper()
	db, err := sql.Open("sqlite3", path+"?mode=ro")
	must(t, err)
	defer db.Close()
	var s string
	err = db.QueryRow(`SELECT (SELECT count(*) || '/' || coalesce(sum(length(raw)), 0) FROM frames) || ' ' ||
		(SELECT count(*) || '/' || coalesce(sum(length(frames)), 0) FROM frame_packs) || ' ' ||
		(SELECT count(*) FROM streams) || ' ' ||
		(SELECT group_concat(name, ',') FROM (SELECT name FROM sqlite_schema ORDER BY name))`).Scan(&s)
	must(t, err)
	return s
}

// everyTableTriggers returns an AFTER INSERT, UPDATE and DELETE trigger on
// each of the cassette's tables, each of which deletes session 1's frames
// and renames the sessions.
func everyTableTriggers() []string {
	var stmts []string
	for _, table := range []string{"sessions", "streams", "frames", "frame_members", "frame_packs", "cache"} {
		for _, ev := range []string{"INSERT", "UPDATE", "DELETE"} {
			stmts = append(stmts, "CREATE TRIGGER evil_"+table+"_"+strings.ToLower(ev)+" AFTER "+ev+" ON "+table+
				" BEGIN DELETE FROM frames WHERE session_id = 1; UPDATE sessions SET name = 'renamed'; END")
		}
	}
	return stmts
}

// TestForeignSchema: a cassette with a trigger, view or object mcpvcr
// never creates is refused at Open, fast, with an error that names each,
// before anything of it is read or written; Check reports them; the
// file is left as it was.
func TestForeignSchema(t *testing.T) {
	// A recursive CTE that takes minutes to count, as a view.
	slow := "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 200000000) SELECT max(x) FROM c"
	for _, tc := range []struct {
		name  string
		stmts []string
		want  []string // in the error
	}{
		{"triggers on every table", everyTableTriggers(),
			[]string{"trigger evil_frames_insert on frames", "trigger evil_sessions_update on sessions", "trigger evil_cache_delete on cache"}},
		{"a trigger on the cache", []string{"CREATE TRIGGER slow AFTER INSERT ON cache BEGIN SELECT (" + slow + "); END"},
			[]string{"trigger slow on cache"}},
		{"a view named sessions", []string{
			"PRAGMA foreign_keys = OFF", "DROP INDEX sessions_transport", "DROP INDEX sessions_labelled",
			"ALTER TABLE sessions RENAME TO real_sessions",
			"CREATE VIEW sessions AS SELECT real_sessions.* FROM real_sessions, (" + slow + ")"},
			[]string{"table real_sessions", "view sessions"}},
		{"a view of its own", []string{"CREATE VIEW slow AS " + slow}, []string{"view slow"}},
		{"a unique index of its own", []string{"CREATE UNIQUE INDEX one_frame ON frames (id, method)"}, []string{"index one_frame on frames"}},
		{"a partial index", []string{"CREATE INDEX some ON frames (method) WHERE seq > 1"}, []string{"index some on frames"}},
		{"an index on an expression", []string{"CREATE INDEX expr ON frames (length(raw))"}, []string{"index expr on frames"}},
		{"an index on a table of its own", []string{"CREATE TABLE notes (x)", "CREATE INDEX notes_x ON notes (x)"}, []string{"table notes", "index notes_x on notes"}},
		{"a table of its own", []string{"CREATE TABLE notes (x)"}, []string{"table notes"}},
		{"a changed index", []string{"DROP INDEX frames_session_seq", "CREATE UNIQUE INDEX frames_session_seq ON frames (session_id, seq, id)"},
			[]string{"index frames_session_seq on frames (defined otherwise than mcpvcr defines it)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			path, before := hostileCassette(t, tc.stmts...)
			start := time.Now()
			_, err := store.Open(ctx, path)
			if !errors.Is(err, store.ErrForeignSchema) {
				t.Fatalf("Open = %v; want ErrForeignSchema", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Open error %q does not name %q", err, w)
				}
			}
			if err := store.Probe(path); !errors.Is(err, store.ErrForeignSchema) {
				t.Errorf("Probe = %v; want ErrForeignSchema", err)
			}
			r, err := store.CheckFile(ctx, path)
			must(t, err)
			if !r.Failed(store.CheckSchema) || r.Foreign == nil || r.Problems() == 0 {
				var b strings.Builder
				r.WriteText(&b)
				t.Errorf("CheckFile reports no foreign schema:\n%s", b.String())
			}
			if time.Since(start) > 10*time.Second {
				t.Errorf("Open, Probe and CheckFile took %v", time.Since(start))
			}
			if after := rawCounts(t, path); after != before {
				t.Errorf("the cassette changed: %s, then %s", before, after)
			}
		})
	}
}

// TestForeignSchema_Own: a cassette that ANALYZE ran on, or with an index
// on columns made for ad-hoc SQL, is still mcpvcr's.
func TestForeignSchema_Own(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "c.db")
	d := openPath(t, path)
	recordSample(t, d)
	must(t, d.Close())
	db, err := sql.Open("sqlite3", path)
	must(t, err)
	for _, s := range []string{"ANALYZE",
		// schema.sql's migrations 2 and 4 suggest these for ad-hoc SQL.
		"CREATE INDEX frames_session_method ON frames (session_id, method)",
		"CREATE INDEX IF NOT EXISTS frames_stream ON frames(stream_id DESC)"} {
		_, err = db.Exec(s)
		must(t, err)
	}
	must(t, db.Close())
	d, err = store.Open(ctx, path)
	must(t, err)
	must(t, d.Close())
	r, err := store.CheckFile(ctx, path)
	must(t, err)
	if r.Problems() != 0 || r.Failed(store.CheckSchema) {
		var b strings.Builder
		r.WriteText(&b)
		t.Errorf("CheckFile of an analyzed cassette:\n%s", b.String())
	}
}

// TestTrustedSchemaOff: every connection of a DB distrusts the schema.
func TestTrustedSchemaOff(t *testing.T) {
	ctx := context.Background()
	d := openDB(t)
	w, r, err := store.TrustedSchema(ctx, d)
	must(t, err)
	if w != 0 || r != 0 {
		t.Errorf("PRAGMA trusted_schema = %d for the writer, %d for a reader; want 0", w, r)
	}
}
