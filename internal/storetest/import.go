package storetest

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpvcr/mcpvcr/store"
)

// Import imports the JSONL cassette jsonl into a new cassette file,
// closed when the test ends, and returns it with its session ids.
func Import(tb testing.TB, jsonl string) (*store.DB, []int64) {
	tb.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(tb.TempDir(), "c.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	if _, err := db.Import(ctx, strings.NewReader(jsonl)); err != nil {
		tb.Fatal(err)
	}
	ids, err := db.SessionIDs(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	return db, ids
}
