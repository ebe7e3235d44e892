package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
)

// TestProbe_GoSDK: replay --probe empty-cursor,session-404 of the Go SDK
// 2025-11-25 HTTP cassette to the Go SDK v1.8.0 client in process, which
// lists the tools page by page and calls echo twice: the empty cursor
// ends its list (pass), and after its session is answered 404 it sends
// its next call with the same session id (fail, a MUST): exit 1, each
// probe reported with its rule and section, and the command to replay
// the run.
func TestProbe_GoSDK(t *testing.T) {
	parallel(t)
	db := filepath.Join(t.TempDir(), "probe.db")
	if res := mcpvcr(t, "", "import", filepath.Join(cassetteDir, "gosdk-http-2025-11-25.jsonl"), "--cassette", db); res.code != 0 {
		t.Fatalf("import: %s", res.stderr)
	}
	rep := startServing(t, "replay", "--cassette", db, "--listen", "127.0.0.1:0", "--probe", "empty-cursor,session-404")
	ctx := testCtx(t)
	cs, err := mcptest.NewClient().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: rep.URL + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Errorf("tools: %v", err)
			break
		}
	}
	for range 2 {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hello"}})
		t.Logf("echo: %v", err)
	}
	cs.Close()
	code := rep.Stop()
	stderr := rep.stderr.String()
	t.Logf("replay stderr:\n%s", stderr)
	if code != exitDiffer {
		t.Errorf("exit %d; want %d (a probe of a MUST failed)", code, exitDiffer)
	}
	for _, want := range []string{
		"mcpvcr: probes empty-cursor,session-404",
		`empty-cursor at POST tools/list: answered the recorded result with nextCursor ""`,
		"docs/specification/2025-11-25/server/utilities/pagination.mdx",
		"the client took the list as ended and went on (next: POST tools/call echo): pass",
		"session-404 at POST tools/call echo",
		"the client used the session id answered 404 again (POST tools/call echo): fail",
		"probe: 2 probes placed (1 pass, 1 fail, 0 not observed)",
		"probe: replay this run: mcpvcr replay --cassette",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q", want)
		}
	}
}

// TestProbe_Usage: --probe names known kinds, not beside --chaos.
func TestProbe_Usage(t *testing.T) {
	parallel(t)
	db := filepath.Join(cassetteDir, "gosdk-http-2025-11-25.jsonl")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--listen", "127.0.0.1:0", "--probe", "nope"}, `no probe "nope"`},
		{[]string{"--listen", "127.0.0.1:0", "--probe", "all", "--chaos", "1"}, "--probe and --chaos cannot be used together"},
	} {
		res := mcpvcr(t, "", append([]string{"replay", "--cassette", db}, tc.args...)...)
		if res.code != exitUsage || !strings.Contains(res.stderr, tc.want) {
			t.Errorf("replay %v: exit %d, %q; want %d and %q", tc.args, res.code, res.stderr, exitUsage, tc.want)
		}
	}
}

// TestProbe_TSClient: replay --probe empty-cursor,session-404 of run 0 of
// the multi-session cassette (2025-11-25) to the TypeScript SDK client (a
// node process) listing the tools and calling echo: what its wire showed
// after each probe, as docs/probes.md reports it.
func TestProbe_TSClient(t *testing.T) {
	parallel(t)
	node := mcptest.Everything(t)[0]
	cassette := chaosCassette(t, "run0")
	rep := startServing(t, "replay", "--cassette", cassette, "--listen", "127.0.0.1:0", "--probe", "empty-cursor,session-404",
		"--ignore", "initialize:params.capabilities")
	cmd := exec.CommandContext(testCtx(t), node, tsChaosScript, rep.URL+"/mcp", "run0")
	cmd.Env = append(os.Environ(), "CLIENT_NAME=ts-probe-client")
	var stdout, stderr syncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Errorf("TypeScript client: %v\n%s", err, stderr.String())
	}
	t.Logf("TypeScript client saw %s", stdout.String())
	rep.Stop()
	out := rep.stderr.String()
	t.Logf("replay stderr:\n%s", out)
	for _, want := range []string{
		"the client took the list as ended and went on (next: POST tools/call echo): pass",
		"session-404 at POST tools/call echo",
		// Its script ends with the failed call: nothing more to see.
		"the client sent nothing more (no new session): not observed",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stderr lacks %q", want)
		}
	}
}

// TestProbe_Stdio: replay --stdio --probe empty-cursor,repeated-cursor
// of a fresh stdio recording of the Go SDK v1.8.0 client (2025-11-25),
// to the same client: the empty cursor is placed at its list and ends it
// (pass); the repeated cursor finds no first page left, and is reported
// not placed. Exit 0: no MUST failed.
func TestProbe_Stdio(t *testing.T) {
	parallel(t)
	server := mcptest.BuildServer(t)
	db := filepath.Join(t.TempDir(), "c.db")
	session := func(cmd *exec.Cmd) {
		ctx := testCtx(t)
		cs, err := mcptest.NewClient().Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		for _, err := range cs.Tools(ctx, nil) {
			if err != nil {
				t.Errorf("tools: %v", err)
				break
			}
		}
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hello"}}); err != nil {
			t.Errorf("echo: %v", err)
		}
		cs.Close()
	}
	var recErr, repErr syncBuffer
	rec := exec.Command(mcpvcrBin, "record", "--cassette", db, "--", server)
	rec.Stderr = &recErr
	session(rec)
	if code := rec.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("mcpvcr record exited %d:\n%s", code, recErr.String())
	}
	rep := exec.Command(mcpvcrBin, "replay", "--cassette", db, "--stdio", "--probe", "empty-cursor,repeated-cursor")
	rep.Stderr = &repErr
	session(rep)
	stderr := repErr.String()
	t.Logf("replay stderr:\n%s", stderr)
	if code := rep.ProcessState.ExitCode(); code != 0 {
		t.Errorf("exit %d; want 0 (no probe of a MUST failed)", code)
	}
	for _, want := range []string{
		"mcpvcr: probes empty-cursor,repeated-cursor",
		`(2025-11-25, stdio), empty-cursor at line tools/list: answered the recorded result with nextCursor ""`,
		"the client took the list as ended and went on (next: line tools/call echo): pass",
		"probe: not placed: repeated-cursor",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q", want)
		}
	}
}
