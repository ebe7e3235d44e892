package mcpvcrtest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpvcr/mcpvcr/recorder"
	"github.com/mcpvcr/mcpvcr/store"
)

// Proxy returns the server the client under test should talk to, as the
// Mode says (the Mode option, else the -mcpvcr test flag, else MCPVCR_MODE,
// else Replay):
//
//   - Replay serves cassette as NewServer does; upstreamURL is not
//     contacted.
//   - Record forwards to upstreamURL (the server's MCP endpoint, or its
//     HTTP+SSE stream) and records every session into cassette, replacing
//     it: a .jsonl path is written as the deterministic export that
//     cassettes/ commits, any other path as a cassette file.
//   - ReplayOrRecord replays when cassette exists and records it when not.
//   - Off forwards to upstreamURL and keeps nothing.
//
// The MCP endpoint is Endpoint(srv), the upstream's path on srv.URL when
// forwarding. Recording is written at t.Cleanup, after the proxy has
// closed, and only if t has not failed.
func Proxy(t testing.TB, cassette, upstreamURL string, opts ...Option) *httptest.Server {
	t.Helper()
	c := newConfig(opts)
	mode, err := c.resolveMode()
	if err != nil {
		t.Fatalf("mcpvcrtest.Proxy: %v\ntry: -mcpvcr=replay, record, replay-or-record or off", err)
	}
	if mode == ReplayOrRecord {
		mode = Record
		if _, err := os.Stat(cassette); err == nil {
			mode = Replay
		}
	}
	if mode == Replay {
		if _, err := os.Stat(cassette); errors.Is(err, os.ErrNotExist) {
			t.Fatalf("mcpvcrtest.Proxy: replay %s: no such cassette yet\ntry: go test -run '^%s$' -mcpvcr=record (or MCPVCR_MODE=record) to record it from %s", cassette, t.Name(), upstreamURL)
		}
		c.mode = nil
		return NewServer(t, cassette, optionFunc(func(dst *config) { *dst = *c }))
	}
	up, err := url.Parse(upstreamURL)
	if err != nil || up.Scheme == "" || up.Host == "" {
		t.Fatalf("mcpvcrtest.Proxy: upstream %q is not an absolute URL\ntry: http://127.0.0.1:3001/mcp", upstreamURL)
	}
	if mode == Record {
		if err := reachable(up); err != nil {
			t.Fatalf("mcpvcrtest.Proxy: record %s: the upstream %s is not reachable: %v\ntry: start the server before Proxy, or -mcpvcr=replay to replay the cassette", cassette, upstreamURL, err)
		}
	}
	ctx := context.Background()
	dbPath := filepath.Join(t.TempDir(), "proxy.db")
	if mode == Record && !isJSONL(cassette) {
		if err := os.Remove(cassette); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("mcpvcrtest.Proxy: replace %s: %v", cassette, err)
		}
		if err := os.MkdirAll(filepath.Dir(cassette), 0o755); err != nil {
			t.Fatalf("mcpvcrtest.Proxy: %v", err)
		}
		dbPath = cassette
	}
	db, err := store.Open(ctx, dbPath)
	if err != nil {
		t.Fatalf("mcpvcrtest.Proxy: open %s: %v", dbPath, err)
	}
	rec := &recorder.HTTP{Upstream: up, Sink: db, Name: t.Name(), Clock: c.clock}
	ts := httptest.NewServer(rec)
	endpoints.Store(ts, ts.URL+up.Path)
	t.Cleanup(func() {
		if err := rec.Close(ctx); err != nil {
			t.Errorf("mcpvcrtest.Proxy: close the recorder: %v", err)
		}
		ts.Close()
		endpoints.Delete(ts)
		if err := rec.Err(); err != nil {
			t.Errorf("mcpvcrtest.Proxy: record: %v", err)
		}
		if mode == Record && isJSONL(cassette) && !t.Failed() {
			if err := writeJSONL(ctx, db, cassette); err != nil {
				t.Errorf("mcpvcrtest.Proxy: %v", err)
			}
		}
		if err := db.Close(); err != nil {
			t.Errorf("mcpvcrtest.Proxy: close %s: %v", dbPath, err)
		}
	})
	return ts
}

// reachable reports why a TCP connection to u's host fails, if it does.
func reachable(u *url.URL) error {
	host := u.Host
	if u.Port() == "" {
		port := "80"
		if u.Scheme == "https" {
			port = "443"
		}
		host = net.JoinHostPort(u.Hostname(), port)
	}
	conn, err := net.DialTimeout("tcp", host, 5*time.Second)
	if err != nil {
		return err
	}
	return conn.Close()
}

func isJSONL(path string) bool { return strings.EqualFold(filepath.Ext(path), ".jsonl") }

// writeJSONL exports every session of db to path, through a temporary file
// renamed into place, so that a failed export leaves the old cassette.
func writeJSONL(ctx context.Context, db *store.DB, path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".mcpvcrtest-*.jsonl")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(f.Name())
	if err := db.Flush(ctx); err != nil {
		f.Close()
		return fmt.Errorf("record %s: %w", path, err)
	}
	bw := bufio.NewWriter(f)
	if err := db.Export(ctx, bw); err != nil {
		f.Close()
		return fmt.Errorf("export to %s: %w", path, err)
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
