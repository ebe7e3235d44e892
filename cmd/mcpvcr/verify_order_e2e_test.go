package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
)

// orderScript is the session of the verify flake: after initialize and
// notifications/initialized, logging/setLevel, tools/list and one call.
func orderScript(ctx context.Context, cs *mcp.ClientSession, tool string, args map[string]any) error {
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		return err
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		return err
	}
	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	return err
}

// TestVerify_RecordedOrder records a Streamable HTTP session of a real
// server and verifies it 20 times against the server that recorded it:
// every run must send the client frames in the recorded causal order (a
// notification's 202 before the next frame), so no run differs.
// server-everything registers tools when notifications/initialized
// arrives, so a logging/setLevel or tools/list that overtakes it lists
// fewer tools.
func TestVerify_RecordedOrder(t *testing.T) {
	for _, tt := range []struct {
		name  string
		start func(testing.TB) string
		tool  string
		args  map[string]any
	}{
		{"Everything", func(tb testing.TB) string { return mcptest.EverythingHTTP(tb, mcptest.StreamableHTTP) }, "echo", map[string]any{"message": "hi"}},
		{"GoSDK", func(tb testing.TB) string { return mcptest.StartServer(tb, "-transport", "http") }, "add", map[string]any{"a": 2, "b": 3}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testCtx(t)
			upstream := tt.start(t)
			db := filepath.Join(t.TempDir(), "c.db")
			rec := startServing(t, "record", "--cassette", db, "--upstream", upstream, "--listen", "127.0.0.1:0")
			cs, err := mcptest.NewClient().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: rec.URL}, nil)
			if err != nil {
				t.Fatalf("connect through mcpvcr record: %v", err)
			}
			if err := orderScript(ctx, cs, tt.tool, tt.args); err != nil {
				t.Fatalf("script: %v", err)
			}
			if err := cs.Close(); err != nil {
				t.Fatalf("close: %v", err)
			}
			if code := rec.Stop(); code != 0 {
				t.Fatalf("mcpvcr record exited %d:\n%s", code, rec.stderr)
			}
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("recording:\n%s", mcpvcr(t, "", "show", "1", "--cassette", db).stdout)
				}
			})
			for i := range 20 {
				r := verifyJSON(t, exitOK, "verify", "1", "--cassette", db, "--upstream", upstream)
				if diff := cmp.Diff([]found(nil), differences(r)); diff != "" {
					t.Fatalf("verify run %d against the recording server (-want +got):\n%s", i+1, diff)
				}
			}
		})
	}
}

// TestVerify_RevisionHTTP verifies a 2026-07-28 session recorded over
// Streamable HTTP against a server that speaks only 2025-11-25: as over
// stdio, the message names the revision and how the server refused
// server/discover, and the hint makes sense for a URL.
func TestVerify_RevisionHTTP(t *testing.T) {
	ctx := testCtx(t)
	db := filepath.Join(t.TempDir(), "c.db")
	upstream := mcptest.StartServer(t, "-transport", "http", "-stateless")
	rec := startServing(t, "record", "--cassette", db, "--upstream", upstream, "--listen", "127.0.0.1:0")
	mcptest.Run(ctx, t, &mcp.StreamableClientTransport{Endpoint: rec.URL}, mcptest.V20260728)
	if code := rec.Stop(); code != 0 {
		t.Fatalf("mcpvcr record exited %d:\n%s", code, rec.stderr)
	}
	old := mcptest.StartServer(t, "-transport", "http", "-stateless", "-versions", mcptest.V20251125)
	res := mcpvcr(t, "", "verify", "1", "--cassette", db, "--upstream", old)
	if res.code != exitFailure {
		t.Fatalf("verify against a 2025-11-25 server = exit %d; want %d\n%s", res.code, exitFailure, res.stderr)
	}
	for _, want := range []string{"does not speak protocol revision 2026-07-28", "server/discover", "try: run a server that speaks 2026-07-28"} {
		if !strings.Contains(res.stderr, want) {
			t.Errorf("verify stderr lacks %q:\n%s", want, res.stderr)
		}
	}
	if strings.Contains(res.stderr, "on its own") {
		t.Errorf("verify stderr hints at running a URL:\n%s", res.stderr)
	}
}
