// Package recordtest records fresh sessions inside a test: an upstream
// handler (or a server over stdio pipes) behind mcpvcr's recorder, a
// client run against the recorder, and the sessions it stored. Tests of replay, chaos and probes
// use it to work on what a user would record today, not on a committed
// cassette.
package recordtest

import (
	"context"
	"io"
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

// Stdio records a stdio session: server (run with r and w, its stdin and
// stdout; it must return once r ends) behind recorder.Stdio, over pipes,
// with client given the other ends. It returns the session recorded once
// client returned (closing its w) and the server's output ended.
func Stdio(ctx context.Context, tb testing.TB, server func(r io.ReadCloser, w io.WriteCloser), client func(r io.ReadCloser, w io.WriteCloser)) *store.Recording {
	tb.Helper()
	db, err := store.Open(ctx, filepath.Join(tb.TempDir(), "fresh.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return StdioIn(ctx, tb, db, server, client)
}

// StdioIn is Stdio recording into db, beside the sessions it holds (a
// cassette of several sessions, each with an id of its own).
func StdioIn(ctx context.Context, tb testing.TB, db *store.DB, server func(r io.ReadCloser, w io.WriteCloser), client func(r io.ReadCloser, w io.WriteCloser)) *store.Recording {
	tb.Helper()
	toClientR, toClientW := io.Pipe()
	fromClientR, fromClientW := io.Pipe()
	toServerR, toServerW := io.Pipe()
	fromServerR, fromServerW := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		server(toServerR, fromServerW)
		fromServerW.Close()
	}()
	type result struct {
		id  int64
		err error
	}
	recorded := make(chan result, 1)
	go func() {
		res, err := (&recorder.Stdio{Sink: db}).Run(ctx, pipeEnds{fromClientR, toClientW}, pipeEnds{fromServerR, toServerW}, nil)
		toClientW.Close()
		if err != nil {
			recorded <- result{err: err}
			return
		}
		res.End(ctx, 0)
		recorded <- result{id: res.SessionID}
	}()
	client(toClientR, fromClientW)
	fromClientW.Close()
	r := <-recorded
	toServerW.Close()
	<-done
	if r.err != nil {
		tb.Fatalf("record: %v", r.err)
	}
	if err := db.Flush(ctx); err != nil {
		tb.Fatal(err)
	}
	rec, err := db.Recording(ctx, r.id)
	if err != nil {
		tb.Fatal(err)
	}
	return rec
}

// pipeEnds is one side of a stdio connection: what it reads and writes.
type pipeEnds struct {
	io.Reader
	io.WriteCloser
}
