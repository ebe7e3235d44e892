package mcpvcrtest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpvcr/mcpvcr/internal/upstream"
	"github.com/mcpvcr/mcpvcr/recorder"
	"github.com/mcpvcr/mcpvcr/store"
)

// Proxy returns the server the client under test should talk to, as the
// Mode says (the Mode option, else the -mcpvcr test flag, else
// MCPVCR_MODE, else ModeRecordOnce):
//
//   - ModeRecordOnce replays cassette when it exists and records it when
//     it does not.
//   - ModeReplayOnly serves cassette as NewServer does; upstreamURL is
//     never contacted, a missing cassette fails the test at once and
//     nothing is written.
//   - ModeReplayWithNewEpisodes replays the sessions of cassette named
//     after the test (t.Name()) when there are any; otherwise it records
//     the test and appends its sessions to cassette.
//   - ModeRecordOnly records every session into cassette, replacing it.
//   - ModePassthrough forwards to upstreamURL and keeps nothing.
//
// Recording forwards to upstreamURL (the server's MCP endpoint, or its
// HTTP+SSE stream), names each session after the test, and writes
// cassette at t.Cleanup, after the proxy has closed: a .jsonl path as the
// deterministic export that cassettes/ commits, any other path as a
// cassette file, each through a temporary file renamed into place. When
// the test failed, or a BeforeSave hook says so, the recording is
// discarded and cassette is left as it was. AfterCapture and BeforeSave
// hooks edit what is kept; BeforeReplay hooks edit what a replay answers.
//
// The MCP endpoint is Endpoint(srv): the upstream's path on srv.URL when
// forwarding, the recorded path when replaying.
func Proxy(t testing.TB, cassette, upstreamURL string, opts ...Option) *httptest.Server {
	t.Helper()
	c := newConfig(opts)
	mode, err := c.resolveMode()
	if err != nil {
		t.Fatalf("mcpvcrtest.Proxy: %v\ntry: -mcpvcr=replay-only (or %s=replay-only), or one of %s", err, ModeEnv, modeList)
	}
	_, statErr := os.Stat(cassette)
	exists := statErr == nil
	replay := func(sessions ...int64) *httptest.Server {
		rc := *c
		rc.mode = nil
		rc.via, rc.viaMode = "Proxy", mode
		rc.sessions = append(slices.Clone(c.sessions), sessions...)
		return NewServer(t, cassette, optionFunc(func(dst *config) { *dst = rc }))
	}
	appendTo := false
	switch mode {
	case ModeRecordOnce:
		if exists {
			return replay()
		}
	case ModeReplayOnly:
		if !exists {
			t.Fatalf("mcpvcrtest.Proxy: mode replay-only: cassette %s: %v\ntry: record it once: go test -run '^%s$' -mcpvcr=record-once (or %s=record-once)", cassette, statErr, t.Name(), ModeEnv)
		}
		return replay()
	case ModeReplayWithNewEpisodes:
		if exists {
			if ids := episode(t, cassette); len(ids) > 0 {
				return replay(ids...)
			}
			appendTo = true
		}
	case ModeRecordOnly, ModePassthrough:
	default:
		t.Fatalf("mcpvcrtest.Proxy: %s is not a mode\ntry: one of %s", mode, modeList)
	}
	up, err := url.Parse(upstreamURL)
	if err != nil || up.Scheme == "" || up.Host == "" {
		t.Fatalf("mcpvcrtest.Proxy: upstream %q is not an absolute URL\ntry: http://127.0.0.1:3001/mcp", upstreamURL)
	}
	if err := upstream.Reachable(context.Background(), up); err != nil {
		t.Fatalf("mcpvcrtest.Proxy: %s %s: the upstream %s is not reachable: %v\ntry: start the server before Proxy, or -mcpvcr=replay-only to replay the cassette", mode, cassette, upstreamURL, err)
	}
	ctx := context.Background()
	dbPath := filepath.Join(t.TempDir(), "proxy.db")
	db, err := store.Open(ctx, dbPath)
	if err != nil {
		t.Fatalf("mcpvcrtest.Proxy: open %s: %v", dbPath, err)
	}
	if appendTo {
		// The sessions kept: the new ones are written after them.
		if err := importCassette(ctx, db, cassette); err != nil {
			db.Close()
			t.Fatalf("mcpvcrtest.Proxy: %v", err)
		}
	}
	red := &recorder.Redactor{Headers: c.redactHeaders, Query: c.redactQuery}
	var sink recorder.Sink = db
	hs := &hookSink{Sink: db, hooks: c.afterCapture, red: red}
	if len(c.afterCapture) > 0 {
		sink = hs
	}
	rec := &recorder.HTTP{Upstream: up, Sink: sink, Name: t.Name(), Clock: c.clock, Redactor: red}
	ts := httptest.NewServer(rec)
	endpoints.Store(ts, ts.URL+up.Path)
	t.Cleanup(func() {
		// The recorder first: it ends the streams a client left open
		// (which ts.Close would wait for) and waits for its requests.
		if err := rec.Close(ctx); err != nil {
			t.Errorf("mcpvcrtest.Proxy: close the recorder: %v", err)
		}
		ts.Close()
		endpoints.Delete(ts)
		if err := rec.Err(); err != nil {
			t.Errorf("mcpvcrtest.Proxy: record: %v", err)
		}
		if mode != ModePassthrough {
			if err := save(ctx, t, db, cassette, c, red, hs.rules()); err != nil {
				t.Errorf("mcpvcrtest.Proxy: %v", err)
			}
		}
		if err := db.Close(); err != nil {
			t.Errorf("mcpvcrtest.Proxy: close %s: %v", dbPath, err)
		}
	})
	return ts
}

// episode returns the sessions of cassette that the test recorded: those
// named t.Name().
func episode(t testing.TB, cassette string) []int64 {
	t.Helper()
	recs, err := loadFile(cassette, nil)
	if err != nil {
		t.Fatalf("mcpvcrtest.Proxy: %v", err)
	}
	var ids []int64
	for _, r := range recs {
		if r.Session.Name == t.Name() {
			ids = append(ids, r.Session.ID)
		}
	}
	return ids
}

// importCassette copies every session of cassette (a .db or a .jsonl
// export) into db.
func importCassette(ctx context.Context, db *store.DB, cassette string) error {
	src, err := store.OpenFile(ctx, cassette)
	if err != nil {
		return fmt.Errorf("read %s: %w", cassette, err)
	}
	defer src.Close()
	var b bytes.Buffer
	if err := src.Export(ctx, &b); err != nil {
		return fmt.Errorf("read %s: %w", cassette, err)
	}
	if _, err := db.Import(ctx, &b); err != nil {
		return fmt.Errorf("read %s: %w", cassette, err)
	}
	return nil
}

// save writes what db holds to cassette, unless the test failed or a
// BeforeSave hook discards the recording.
func save(ctx context.Context, t testing.TB, db *store.DB, cassette string, c *config, red *recorder.Redactor, rules map[int64][]string) error {
	if t.Failed() {
		t.Logf("mcpvcrtest.Proxy: the test failed: the recording is discarded and %s left as it was", cassette)
		return nil
	}
	if err := db.Flush(ctx); err != nil {
		return fmt.Errorf("record %s: %w", cassette, err)
	}
	if len(c.beforeSave) > 0 || len(rules) > 0 {
		saved, err := runBeforeSave(ctx, t, db, c.beforeSave, red, rules)
		if err != nil {
			return fmt.Errorf("before save: %w", err)
		}
		if saved == nil {
			t.Logf("mcpvcrtest.Proxy: a BeforeSave hook discarded the recording; %s left as it was", cassette)
			return nil
		}
		defer saved.Close()
		db = saved
	}
	if isJSONL(cassette) {
		return writeJSONL(ctx, db, cassette)
	}
	return writeDB(ctx, db, cassette)
}

// writeDB writes every session of db to a new cassette file renamed to
// path, so that a failed write leaves the old cassette.
func writeDB(ctx context.Context, db *store.DB, path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	var b bytes.Buffer
	if err := db.Export(ctx, &b); err != nil {
		return fmt.Errorf("export to %s: %w", path, err)
	}
	tmp := filepath.Join(filepath.Dir(path), fmt.Sprintf(".mcpvcrtest-%d-%s", os.Getpid(), filepath.Base(path)))
	defer func() {
		for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
			os.Remove(tmp + suffix)
		}
	}()
	out, err := store.Open(ctx, tmp)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := out.Import(ctx, &b); err != nil {
		out.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	// A journal left beside the old cassette must not be applied to the
	// new one.
	for _, suffix := range []string{"-wal", "-shm", "-journal"} {
		os.Remove(path + suffix)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
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
