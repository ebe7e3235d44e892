package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
)

// TestHTTP_Modern records the Go SDK's stateless Streamable HTTP server at
// 2026-07-28 (server/discover, per-request _meta and headers, MRTR for
// sampling, elicitation and roots, cancellation by closing the response
// stream), then replays it with --strict. (In JSON-answer mode a stateless
// SDK server has no stream for notifications, so the script cannot run
// there; that is the SDK's limit, not mcpvcr's.)
func TestHTTP_Modern(t *testing.T) {
	parallel(t)
	for _, mode := range [][]string{nil} {
		t.Run(strings.Join(append([]string{"sse"}, mode...), ""), func(t *testing.T) {
			ctx := testCtx(t)
			upstream := mcptest.StartServer(t, append([]string{"-transport", "http", "-stateless"}, mode...)...)
			db := recordThenReplay(t, upstream, "/mcp", []string{"--strict"}, func(url string) mcptest.Transcript {
				tr := mcptest.Run(ctx, t, &mcp.StreamableClientTransport{Endpoint: url}, mcptest.V20260728)
				if tr.Negotiated != mcptest.V20260728 {
					t.Fatalf("negotiated %s; want 2026-07-28", tr.Negotiated)
				}
				return tr
			})
			ls := mcpvcr(t, "", "ls", "--cassette", db)
			if !strings.Contains(ls.stdout, "2026-07-28") || !strings.Contains(ls.stdout, "modern") {
				t.Errorf("ls does not show a modern 2026-07-28 session:\n%s", ls.stdout)
			}
		})
	}
}

// TestDualEra: a 2026-07-28 client probes a server that speaks only the
// legacy revisions with server/discover, is refused, and falls back to
// initialize. Recorded and replayed over stdio and Streamable HTTP; the
// session is marked dual-era.
func TestDualEra(t *testing.T) {
	parallel(t)
	legacyOnly := "-versions=2025-11-25,2025-06-18,2025-03-26,2024-11-05"
	t.Run("stdio", func(t *testing.T) {
		ctx := testCtx(t)
		server := mcptest.BuildServer(t)
		db := filepath.Join(t.TempDir(), "c.db")
		dumpOnFailure(t, db)
		rec := exec.Command(mcpvcrBin, "record", "--cassette", db, "--", server, legacyOnly)
		live := mcptest.Run(ctx, t, &mcp.CommandTransport{Command: rec}, mcptest.V20260728)
		if live.Negotiated != mcptest.V20251125 {
			t.Fatalf("negotiated %s; want the fallback to 2025-11-25", live.Negotiated)
		}
		checkDual(t, db)
		var stderr syncBuffer
		rep := exec.Command(mcpvcrBin, "replay", "--stdio", "--cassette", db)
		rep.Stderr = &stderr
		replayed := mcptest.Run(ctx, t, &mcp.CommandTransport{Command: rep}, mcptest.V20260728)
		if diff := cmp.Diff(live, replayed); diff != "" {
			t.Errorf("replay differs (-live +replay):\n%s\n%s", diff, stderr.String())
		}
		if !strings.Contains(stderr.String(), " 0 unmatched") {
			t.Errorf("replay report:\n%s", stderr.String())
		}
	})
	t.Run("http", func(t *testing.T) {
		ctx := testCtx(t)
		upstream := mcptest.StartServer(t, "-transport", "http", legacyOnly)
		db := recordThenReplay(t, upstream, "/mcp", nil, func(url string) mcptest.Transcript {
			tr := mcptest.Run(ctx, t, &mcp.StreamableClientTransport{Endpoint: url}, mcptest.V20260728)
			if tr.Negotiated != mcptest.V20251125 {
				t.Fatalf("negotiated %s; want the fallback to 2025-11-25", tr.Negotiated)
			}
			return tr
		})
		checkDual(t, db)
	})
}

// checkDual requires the recording to show the refused discover and the
// fallback, in one dual-era session.
func checkDual(t *testing.T, db string) {
	t.Helper()
	show := mcpvcr(t, "", "show", "1", "--cassette", db)
	for _, want := range []string{"era=dual", "server/discover", "initialize"} {
		if !strings.Contains(show.stdout, want) {
			t.Errorf("show lacks %q:\n%s", want, head(show.stdout, 12))
		}
	}
}
