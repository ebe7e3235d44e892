package replayer

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/mcpvcr/mcpvcr/store"
)

// LoadInitialize loads session 1 of cassettes/name and returns it with
// its client's initialize request, which a test sends to start a
// session: for the tests of this package and of replayer_test.
func LoadInitialize(tb testing.TB, name string) ([]*store.Recording, string) {
	tb.Helper()
	recs, err := store.LoadFile(context.Background(), filepath.Join("..", "cassettes", name), 1)
	if err != nil {
		tb.Fatal(err)
	}
	for _, f := range recs[0].Frames {
		if f.Method == "initialize" {
			return recs, string(f.Raw)
		}
	}
	tb.Fatalf("session 1 of %s has no initialize", name)
	return nil, ""
}
