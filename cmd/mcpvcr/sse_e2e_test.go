package main

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
)

// TestSSE_GoSDK records the Go SDK's 2024-11-05 HTTP+SSE handler through
// mcpvcr record (which detects the transport from the endpoint event and
// points the client's POSTs back through itself), then replays it to the
// SDK's HTTP+SSE client.
func TestSSE_GoSDK(t *testing.T) {
	parallel(t)
	ctx := testCtx(t)
	upstream := mcptest.StartServer(t, "-transport", "sse")
	db := recordThenReplay(t, upstream, "/sse", nil, func(url string) mcptest.Transcript {
		return mcptest.Run(ctx, t, &mcp.SSEClientTransport{Endpoint: url}, mcptest.V20241105)
	})
	if ls := mcpvcr(t, "", "ls", "--cassette", db); !strings.Contains(ls.stdout, " sse ") {
		t.Errorf("ls does not show an HTTP+SSE session:\n%s", ls.stdout)
	}
}

// TestSSE_Everything records @modelcontextprotocol/server-everything in
// its sse mode with the Go SDK's HTTP+SSE client and replays it.
func TestSSE_Everything(t *testing.T) {
	parallel(t)
	ctx := testCtx(t)
	upstream := mcptest.EverythingHTTP(t, mcptest.SSE)
	recordThenReplay(t, upstream, "/sse", nil, func(url string) map[string]any {
		out, err := everythingScript(ctx, t, &mcp.SSEClientTransport{Endpoint: url})
		if err != nil {
			t.Errorf("close session: %v", err)
		}
		return out
	})
}

// TestSSE_Fallback: a client tries Streamable HTTP first (POST initialize
// to the HTTP+SSE server's URL), is refused, and falls back to the GET
// stream. The recording keeps both in one session, and replay answers the
// same way: the refusal first, then the HTTP+SSE session.
func TestSSE_Fallback(t *testing.T) {
	parallel(t)
	upstream := mcptest.StartServer(t, "-transport", "sse")
	db := filepath.Join(t.TempDir(), "c.db")
	dumpOnFailure(t, db)
	run := func(base string) (string, mcptest.Transcript) {
		s := &rawSession{tb: t, url: base}
		code, _, body := s.post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"mcptest-client","version":"1.0.0"}}}`)
		if code < 400 {
			t.Fatalf("POST initialize to the HTTP+SSE URL = %d %s; want a 4xx refusal", code, body)
		}
		return http.StatusText(code), mcptest.Run(testCtx(t), t, &mcp.SSEClientTransport{Endpoint: base}, mcptest.V20241105)
	}
	rec := startServing(t, "record", "--cassette", db, "--upstream", upstream, "--listen", "127.0.0.1:0")
	liveStatus, live := run(rec.URL)
	if code := rec.Stop(); code != 0 {
		t.Fatalf("record exited %d:\n%s", code, rec.stderr)
	}
	if ls := mcpvcr(t, "", "ls", "--cassette", db); strings.Count(ls.stdout, "\n") != 2 || !strings.Contains(ls.stdout, " sse ") {
		t.Errorf("want one HTTP+SSE session holding the refused POST and the stream:\n%s", ls.stdout)
	}
	rep := startServing(t, "replay", "--cassette", db, "--listen", "127.0.0.1:0")
	repStatus, replayed := run(rep.URL + "/sse")
	code := rep.Stop()
	if liveStatus != repStatus {
		t.Errorf("refusal: live %s, replay %s", liveStatus, repStatus)
	}
	if diff := cmp.Diff(live, replayed); diff != "" {
		t.Errorf("replay differs from the live server (-live +replay):\n%s\n%s", diff, rep.stderr)
	}
	if code != 0 {
		t.Errorf("replay exited %d:\n%s", code, rep.stderr)
	}
}
