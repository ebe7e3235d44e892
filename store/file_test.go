package store_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpvcr/mcpvcr/store"
)

func TestSniff(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "c.db")
	d, err := store.Open(context.Background(), db)
	must(t, err)
	newSession(t, d)
	must(t, d.Close())
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		must(t, os.WriteFile(p, []byte(text), 0o644))
		return p
	}
	tests := []struct {
		name    string
		path    string
		want    store.Format
		wantErr error
	}{
		{"Cassette", db, store.SQLite, nil},
		{"Export", write("a.jsonl", `{"type":"mcpvcr","version":1}`+"\n"), store.JSONL, nil},
		{"ExportAfterWhiteSpace", write("b.jsonl", "\n \t{\"type\":\"mcpvcr\"}\n"), store.JSONL, nil},
		{"Empty", write("empty", ""), store.FormatUnknown, store.ErrEmpty},
		{"Text", write("text", "hello\n"), store.FormatUnknown, store.ErrNotCassette},
		{"Missing", filepath.Join(dir, "none"), store.FormatUnknown, fs.ErrNotExist},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := store.Sniff(tt.path)
			if got != tt.want || !errors.Is(err, tt.wantErr) {
				t.Errorf("Sniff(%s) = %v, %v; want %v, %v", tt.name, got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestCheckFile(t *testing.T) {
	ctx := context.Background()
	export := filepath.Join("..", "cassettes", "gosdk-stdio-2025-06-18.jsonl")
	r, err := store.CheckFile(ctx, export)
	if err != nil {
		t.Fatalf("CheckFile(%s) = %v", export, err)
	}
	if r.Format != store.JSONL || r.Problems() != 0 || !r.Counted || r.Sessions != 1 {
		t.Errorf("CheckFile(%s) = %+v; want a sound JSONL export of 1 session", export, r)
	}

	// Damage inside a frame's bytes passes SQLite's integrity check; the
	// content check, which reads the frames through the JSONL schema,
	// finds it.
	db := filepath.Join(t.TempDir(), "c.db")
	d := openPath(t, db)
	f, err := os.Open(export)
	must(t, err)
	defer f.Close()
	_, err = d.Import(ctx, bufio.NewReader(f))
	must(t, err)
	must(t, d.Close())
	b, err := os.ReadFile(db)
	must(t, err)
	must(t, os.WriteFile(db, bytes.ReplaceAll(b, []byte(`"method":"tools/list"`), []byte(`"method":"tools/lust"`)), 0o644))
	r, err = store.CheckFile(ctx, db)
	if err != nil {
		t.Fatalf("CheckFile(%s) = %v", db, err)
	}
	var text strings.Builder
	must(t, r.WriteText(&text))
	if !r.Failed(store.CheckContents) || r.Failed(store.CheckSQLite) ||
		!strings.Contains(text.String(), `its bytes give method "tools/lust", but it is indexed with method "tools/list"`) {
		t.Errorf("CheckFile of a cassette with damaged frame bytes:\n%s\nwant only the content check to fail, naming the method", text.String())
	}
}
