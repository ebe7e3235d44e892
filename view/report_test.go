package view_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpvcr/mcpvcr/diff"
	"github.com/mcpvcr/mcpvcr/store"
	"github.com/mcpvcr/mcpvcr/view"
)

// importDB imports committed cassettes into a new cassette.
func importDB(t testing.TB, names ...string) *store.DB {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	for _, name := range names {
		in, err := os.ReadFile(filepath.Join("..", "cassettes", name))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Import(ctx, bytes.NewReader(in)); err != nil {
			t.Fatal(err)
		}
	}
	return db
}

// TestExport: each format writes what its own writer writes, and an
// unknown one is refused.
func TestExport(t *testing.T) {
	ctx := context.Background()
	db := importDB(t, "gosdk-stdio-2025-06-18.jsonl")
	var jsonl, har, page bytes.Buffer
	for _, tt := range []struct {
		format string
		w      *bytes.Buffer
		want   string
	}{
		{"jsonl", &jsonl, `"transport":"stdio"`},
		{"har", &har, `"log"`},
		{"html", &page, "<!doctype html>"},
	} {
		if err := view.Export(ctx, db, tt.w, tt.format, 1); err != nil {
			t.Fatalf("Export(%s): %v", tt.format, err)
		}
		if !strings.Contains(tt.w.String(), tt.want) {
			t.Errorf("Export(%s) wrote no %s:\n%.300s", tt.format, tt.want, tt.w.String())
		}
	}
	var want bytes.Buffer
	if err := db.Export(ctx, &want, 1); err != nil || want.String() != jsonl.String() {
		t.Errorf("Export(jsonl) differs from DB.Export (err %v)", err)
	}
	if err := view.Export(ctx, db, &jsonl, "xml"); err == nil {
		t.Error("Export(xml) = nil; want an error")
	}
}

// TestWriteReports: html is a page over the compared sessions, other
// formats are diff.Write's.
func TestWriteReports(t *testing.T) {
	ctx := context.Background()
	db := importDB(t, "gosdk-stdio-2025-06-18.jsonl", "gosdk-stdio-2025-11-25.jsonl")
	r, err := diff.Sessions(ctx, db, 1, 2, diff.Noise{})
	if err != nil {
		t.Fatal(err)
	}
	var got, want bytes.Buffer
	if err := view.WriteReports(ctx, &got, db, "json", r); err != nil {
		t.Fatal(err)
	}
	if err := diff.Write(&want, "json", r); err != nil || got.String() != want.String() {
		t.Errorf("WriteReports(json) differs from diff.Write (err %v)", err)
	}
	got.Reset()
	if err := view.WriteReports(ctx, &got, db, "html", r); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{`"name":"gosdk-stdio-2025-06-18"`, `"name":"gosdk-stdio-2025-11-25"`, `"diffs":[{`} {
		if !strings.Contains(got.String(), name) {
			t.Errorf("WriteReports(html) holds no %s", name)
		}
	}
}

// TestWriteTempHTML: the report lands in mcpvcr's own folder of the
// temporary directory, one file per session of a cassette, rewritten by
// each view; old reports are removed.
func TestWriteTempHTML(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	db := importDB(t, "gosdk-stdio-2025-06-18.jsonl")
	name, err := view.WriteTempHTML(context.Background(), db, 1, "some/bug.db")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(name)
	if err != nil || !strings.Contains(string(b), "<!doctype html>") || !strings.HasPrefix(filepath.Base(name), "bug-session-1-") {
		t.Errorf("WriteTempHTML wrote %s (%v), not a session report", name, err)
	}
	dir := filepath.Dir(name)
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 || filepath.Dir(dir) != tmp {
		t.Errorf("report folder %s: %v, %v; want a 0700 folder in $TMPDIR", dir, fi.Mode(), err)
	}
	old := filepath.Join(dir, "old-session-1-00000000.html")
	if err := os.WriteFile(old, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	past := time.Now().Add(-48 * time.Hour)
	if err := os.Chtimes(old, past, past); err != nil {
		t.Fatal(err)
	}
	again, err := view.WriteTempHTML(context.Background(), db, 1, "some/bug.db")
	if err != nil || again != name {
		t.Errorf("a second view of the session wrote %s (%v); want %s again", again, err, name)
	}
	other, _ := view.WriteTempHTML(context.Background(), db, 1, "other/bug.db")
	if other == name {
		t.Errorf("two cassettes' session 1 share the report %s", name)
	}
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if len(names) != 2 {
		t.Errorf("report folder holds %q; want the two cassettes' reports only (the old one removed, nothing half-written)", names)
	}
	if name, err := view.WriteTempHTML(context.Background(), db, 9, "some/bug.db"); err == nil || name == "" {
		t.Errorf("WriteTempHTML(missing session) = %q, %v; want the file named and an error", name, err)
	}
	if view.IsTerminal(&bytes.Buffer{}) {
		t.Error("IsTerminal(a buffer) = true")
	}
}
