// Package recordtest records fresh HTTP sessions inside a test: an
// upstream handler behind mcpvcr's recorder, a client run against the
// recorder, and the sessions it stored. Tests of replay, chaos and probes
// use it to work on what a user would record today, not on a committed
// cassette.
package recordtest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"testing"

	"github.com/mcpvcr/mcpvcr/recorder"
	"github.com/mcpvcr/mcpvcr/store"
)

// HTTP serves upstream at path, records through recorder.HTTP into a new
// cassette in tb's temporary directory, calls client with the recorder's
// URL of path, and returns every session recorded once client returns.
func HTTP(ctx context.Context, tb testing.TB, upstream http.Handler, path string, client func(endpoint string)) []*store.Recording {
	tb.Helper()
	up := httptest.NewServer(upstream)
	tb.Cleanup(up.Close)
	u, err := url.Parse(up.URL + path)
	if err != nil {
		tb.Fatal(err)
	}
	db, err := store.Open(ctx, filepath.Join(tb.TempDir(), "fresh.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	rec := &recorder.HTTP{Upstream: u, Sink: db}
	ts := httptest.NewServer(rec)
	client(ts.URL + "/mcp")
	ts.Close()
	if err := rec.Close(ctx); err != nil {
		tb.Fatal(err)
	}
	if err := db.Flush(ctx); err != nil {
		tb.Fatal(err)
	}
	recs, err := db.Recordings(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	return recs
}
