package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/diff"
	"github.com/mcpvcr/mcpvcr/internal/mcptest"
)

// orderScript is the session of the verify flake: after initialize and
// notifications/initialized, logging/setLevel, tools/list and one call.
// (The Go SDK v1.8.0 client sends logging/setLevel at 2026-07-28 without
// its _meta, so a modern session leaves it out.)
func orderScript(ctx context.Context, cs *mcp.ClientSession, modern bool, tool string, args map[string]any) error {
	if !modern {
		if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
			return err
		}
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		return err
	}
	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	return err
}

// orderRuns is how many times TestVerify_RecordedOrder verifies each
// recording against the server that recorded it: 8 in make test (the
// flake it guards against failed 3 runs in 6), MCPVCR_ORDER_RUNS=50 for
// the long loop.
var orderRuns = func() int {
	if n, err := strconv.Atoi(os.Getenv("MCPVCR_ORDER_RUNS")); err == nil && n > 0 {
		return n
	}
	return 8
}()

// TestVerify_RecordedOrder records a session of each real server over
// each transport and verifies it orderRuns times against the server that
// recorded it: every run must send the client frames in the recorded
// causal order (over HTTP a notification's 202 before the next frame, the
// GET stream open before what the server sends on it), so no run differs.
// server-everything registers tools when notifications/initialized
// arrives, so a logging/setLevel or tools/list that overtakes it lists
// fewer tools: verify that POSTed every frame at once failed this within
// a few runs.
func TestVerify_RecordedOrder(t *testing.T) {
	parallel(t)
	// server-everything asks for the client's roots 350 ms after
	// initialization: a one-second call keeps the session open past that
	// in the recording and in every run.
	everything := map[string]any{"duration": 1, "steps": 2}
	sum := map[string]any{"a": 2, "b": 3}
	type target struct {
		transport mcp.Transport // the client's way to mcpvcr record
		verify    []string      // what follows "verify 1 --cassette DB"
		stop      func() int    // ends the recording, returns its exit code; nil for stdio
	}
	http := func(upstream string, sse bool) func(t *testing.T, db string) target {
		return func(t *testing.T, db string) target {
			rec := startServing(t, "record", "--cassette", db, "--upstream", upstream, "--listen", "127.0.0.1:0")
			var tr mcp.Transport = &mcp.StreamableClientTransport{Endpoint: rec.URL}
			if sse {
				tr = &mcp.SSEClientTransport{Endpoint: rec.URL}
			}
			return target{tr, []string{"--upstream", upstream}, rec.Stop}
		}
	}
	stdio := func(server ...string) func(t *testing.T, db string) target {
		return func(t *testing.T, db string) target {
			cmd := exec.Command(mcpvcrBin, append([]string{"record", "--cassette", db, "--"}, server...)...)
			// A stdio server may outlive its closed stdin (server-everything
			// keeps timers after logging/setLevel) and be ended with a
			// signal: the recording is complete either way.
			return target{&mcp.CommandTransport{Command: cmd}, append([]string{"--"}, server...), nil}
		}
	}
	for _, tt := range []struct {
		name    string
		version string // "" for the client's default
		start   func(t *testing.T, db string) target
		tool    string
		args    map[string]any
		runs    int // if 0, orderRuns
	}{
		{"Everything/HTTP", "", func(t *testing.T, db string) target {
			return http(mcptest.EverythingHTTP(t, mcptest.StreamableHTTP), false)(t, db)
		}, "trigger-long-running-operation", everything, 0},
		{"Everything/SSE", mcptest.V20241105, func(t *testing.T, db string) target {
			return http(mcptest.EverythingHTTP(t, mcptest.SSE), true)(t, db)
		}, "trigger-long-running-operation", everything, 0},
		// server-everything outlives its closed stdin, so each stdio run
		// waits verify's stop grace (5 s) before the signal: fewer runs.
		{"Everything/Stdio", "", func(t *testing.T, db string) target { return stdio(mcptest.Everything(t)...)(t, db) }, "trigger-long-running-operation", everything, 5},
		{"GoSDK/HTTP", "", func(t *testing.T, db string) target {
			return http(mcptest.StartServer(t, "-transport", "http"), false)(t, db)
		}, "add", sum, 0},
		{"GoSDK/HTTPJSON", "", func(t *testing.T, db string) target {
			return http(mcptest.StartServer(t, "-transport", "http", "-json"), false)(t, db)
		}, "add", sum, 0},
		{"GoSDK/SSE", mcptest.V20241105, func(t *testing.T, db string) target {
			return http(mcptest.StartServer(t, "-transport", "sse"), true)(t, db)
		}, "add", sum, 0},
		{"GoSDK/Modern", mcptest.V20260728, func(t *testing.T, db string) target {
			return http(mcptest.StartServer(t, "-transport", "http", "-stateless"), false)(t, db)
		}, "add", sum, 0},
		{"GoSDK/Stdio", "", func(t *testing.T, db string) target { return stdio(mcptest.BuildServer(t))(t, db) }, "add", sum, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			parallel(t) // a server of its own; the runs wait on it
			ctx := testCtx(t)
			db := filepath.Join(t.TempDir(), "c.db")
			tg := tt.start(t, db)
			var opts *mcp.ClientSessionOptions
			if tt.version != "" {
				opts = &mcp.ClientSessionOptions{ProtocolVersion: tt.version}
			}
			cs, err := mcptest.NewClient().Connect(ctx, tg.transport, opts)
			if err != nil {
				t.Fatalf("connect through mcpvcr record: %v", err)
			}
			if err := orderScript(ctx, cs, tt.version == mcptest.V20260728, tt.tool, tt.args); err != nil {
				t.Fatalf("script: %v", err)
			}
			if err := cs.Close(); err != nil && tg.stop != nil {
				t.Fatalf("close: %v", err)
			}
			if tg.stop != nil {
				if code := tg.stop(); code != 0 {
					t.Fatalf("mcpvcr record exited %d", code)
				}
			}
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("recording:\n%s", mcpvcr(t, "", "show", "1", "--cassette", db).stdout)
				}
			})
			runs := orderRuns
			if tt.runs > 0 {
				runs = tt.runs
			}
			for i := range runs {
				r := verifyJSON(t, exitOK, append([]string{"verify", "1", "--cassette", db}, tg.verify...)...)
				if diff := cmp.Diff([]found(nil), differences(r)); diff != "" {
					t.Fatalf("verify run %d against the recording server (-want +got):\n%s", i+1, diff)
				}
				// The Go SDK v1.8.0 client is dual-era over Streamable HTTP:
				// its server/discover is refused (HTTP 400), then it
				// initializes. The refusal is compared like any answer.
				if dual := strings.HasSuffix(tt.name, "/HTTP") || strings.HasSuffix(tt.name, "/HTTPJSON"); dual && i == 0 {
					if first := r.Requests[0]; first.Method != "server/discover" || first.Status != diff.StatusSame {
						t.Errorf("first request = %s %s; want server/discover, the same", first.Method, first.Status)
					}
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
	parallel(t)
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
