package main

import (
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
)

// everythingScript drives @modelcontextprotocol/server-everything through
// a few of its features and returns what the client saw, as JSON values.
// The error of closing the session is returned: a server that does not
// exit on EOF is terminated, and the closing reports its exit status.
func everythingScript(ctx context.Context, tb testing.TB, transport mcp.Transport) (map[string]any, error) {
	tb.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "mcpvcr-test", Version: "1.0.0"}, nil)
	cs, err := c.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: mcptest.V20251125})
	if err != nil {
		tb.Fatalf("connect: %v", err)
	}
	out := map[string]any{}
	record := func(name string, v any, err error) {
		if err != nil {
			out[name] = "error: " + err.Error()
			return
		}
		b, _ := json.Marshal(v)
		var x any
		_ = json.Unmarshal(b, &x)
		out[name] = x
	}
	tools, err := cs.ListTools(ctx, nil)
	record("tools/list", tools, err)
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hello"}})
	record("echo", r, err)
	r, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "get-sum", Arguments: map[string]any{"a": 2, "b": 40}})
	record("get-sum", r, err)
	r, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "get-structured-content", Arguments: map[string]any{"location": "New York"}})
	record("get-structured-content", r, err)
	res, err := cs.ListResources(ctx, nil)
	record("resources/list", res, err)
	prompts, err := cs.ListPrompts(ctx, nil)
	record("prompts/list", prompts, err)
	return out, cs.Close()
}

// TestStdio_Everything records the reference TypeScript server over stdio
// through mcpvcr record and replays it with mcpvcr replay --stdio.
func TestStdio_Everything(t *testing.T) {
	parallel(t)
	argv := mcptest.Everything(t)
	ctx := testCtx(t)
	db := filepath.Join(t.TempDir(), "c.db")
	dumpOnFailure(t, db)
	rec := exec.Command(mcpvcrBin, append([]string{"record", "--cassette", db, "--"}, argv...)...)
	var recErr syncBuffer
	rec.Stderr = &recErr
	// server-everything does not exit when its stdin closes; the client
	// then sends SIGTERM, which mcpvcr forwards. The client gives mcpvcr
	// as long again to exit after it before it kills it and returns
	// without waiting (the ProcessState read below would race): a second,
	// for a loaded machine.
	live, err := everythingScript(ctx, t, &mcp.CommandTransport{Command: rec, TerminateDuration: time.Second})
	var exited *exec.ExitError
	if !errors.As(err, &exited) {
		t.Fatalf("closing the session through mcpvcr record: %v; want mcpvcr to exit on the SIGTERM it forwarded", err)
	}
	// mcpvcr exits as its server did: terminated by the SIGTERM it forwarded.
	if got, want := rec.ProcessState.ExitCode(), 128+15; got != want {
		t.Errorf("mcpvcr record exit code = %d; want %d (the server's SIGTERM)", got, want)
	}
	// ... and says so as the normal end it is, not as a failure.
	if got, want := recErr.String(), "mcpvcr: session 1 recorded; the server stopped on SIGTERM from the client (exit code 143, passed on)\n"; !strings.HasSuffix(got, want) {
		t.Errorf("mcpvcr record stderr ends %q; want %q", got, want)
	}

	var repErr syncBuffer
	rep := exec.Command(mcpvcrBin, "replay", "--stdio", "--cassette", db)
	rep.Stderr = &repErr
	replayed, err := everythingScript(ctx, t, &mcp.CommandTransport{Command: rep})
	if err != nil {
		t.Errorf("close replay session: %v", err)
	}
	if diff := cmp.Diff(live, replayed); diff != "" {
		t.Errorf("replay differs from the live server (-live +replay):\n%s\n%s", diff, repErr.String())
	}
	if code := rep.ProcessState.ExitCode(); code != 0 || !strings.Contains(repErr.String(), " 0 unmatched") {
		t.Errorf("mcpvcr replay exited %d; want 0 and no unmatched frames:\n%s", code, repErr.String())
	}
}

// TestHTTP_Everything records the reference server in streamableHttp mode
// through mcpvcr record --upstream and replays it with --listen.
func TestHTTP_Everything(t *testing.T) {
	parallel(t)
	ctx := testCtx(t)
	upstream := mcptest.EverythingHTTP(t, mcptest.StreamableHTTP)
	recordThenReplay(t, upstream, "/mcp", []string{"--strict"}, func(url string) map[string]any {
		out, err := everythingScript(ctx, t, &mcp.StreamableClientTransport{Endpoint: url})
		if err != nil {
			t.Errorf("close session: %v", err)
		}
		return out
	})
}
