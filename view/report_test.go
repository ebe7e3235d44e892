package view_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

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

// TestWriteTempHTML: the report lands in a new file the caller owns.
func TestWriteTempHTML(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	db := importDB(t, "gosdk-stdio-2025-06-18.jsonl")
	name, err := view.WriteTempHTML(context.Background(), db, 1)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(name)
	if err != nil || !strings.Contains(string(b), "<!doctype html>") || !strings.Contains(filepath.Base(name), "mcpvcr-session-1-") {
		t.Errorf("WriteTempHTML wrote %s (%v), not a session report", name, err)
	}
	if name, err := view.WriteTempHTML(context.Background(), db, 9); err == nil || name == "" {
		t.Errorf("WriteTempHTML(missing session) = %q, %v; want the file named and an error", name, err)
	}
	if view.IsTerminal(&bytes.Buffer{}) {
		t.Error("IsTerminal(a buffer) = true")
	}
}
