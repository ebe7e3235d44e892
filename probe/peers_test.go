package probe

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
	"github.com/mcpvcr/mcpvcr/internal/recordtest"
	"github.com/mcpvcr/mcpvcr/store"
)

// tsScript is the TypeScript SDK client of the probe tests.
var tsScript = filepath.Join("..", "internal", "mcptest", "testdata", "tsclient", "probe.mjs")

// node runs a node client with args (its output logged) and waits for it.
func node(ctx context.Context, t *testing.T, args []string, env ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	t.Logf("%s (%v): %s", filepath.Base(args[1]), err, out)
}

// recordPeer records run, a client of the Go SDK test server (Streamable
// HTTP, with sessions) that speaks only version.
func recordPeer(t *testing.T, version string, run func(url string)) []*store.Recording {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	srv := mcptest.ServerConfig{Versions: []string{version}}.NewServer()
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	recs := recordtest.HTTP(ctx, t, h, "/mcp", run)
	if len(recs) == 0 || recs[0].Session.Revision != version {
		t.Fatalf("the recording holds %d sessions, the first of revision %q; want %s", len(recs), revision(recs), version)
	}
	return recs
}

func revision(recs []*store.Recording) string {
	if len(recs) == 0 {
		return ""
	}
	return recs[0].Session.Revision
}

// TestTSClient: the TypeScript SDK 1.32.2 client under each probe of the
// revisions it speaks (2025-11-25 and, with a server that speaks only
// that, 2025-03-26), on a fresh recording of its own (probe.mjs): the
// verdicts of tsCases.
func TestTSClient(t *testing.T) {
	nodeBin := mcptest.Everything(t)[0]
	ts := func(url string) { node(t.Context(), t, []string{nodeBin, tsScript, url}) }
	runPeer(t, ts, tsCases)
}

// TestInspectorCLI: Inspector's CLI under each probe of 2025-11-25, the
// revision it asks for, on a fresh recording of its own: one run lists
// the tools, a second calls echo (each run is one session); the verdicts
// of inspectorCases.
func TestInspectorCLI(t *testing.T) {
	cli := mcptest.InspectorCLI(t)
	catalog := "MCP_CATALOG_PATH=" + filepath.Join(t.TempDir(), "mcp.json")
	inspector := func(url string) {
		node(t.Context(), t, append(append([]string{}, cli...), url, "--method", "tools/list"), catalog)
		node(t.Context(), t, append(append([]string{}, cli...), url, "--method", "tools/call", "--tool-name", "echo", "--tool-arg", "text=hi"), catalog)
	}
	runPeer(t, inspector, inspectorCases)
}

// runPeer records client at each revision of cases, then replays the
// recording to it under each case's probe.
func runPeer(t *testing.T, client func(url string), cases []peerCase) {
	recs := map[string][]*store.Recording{}
	for _, tc := range cases {
		t.Run(tc.kind.String()+"/"+tc.version, func(t *testing.T) {
			if recs[tc.version] == nil {
				recs[tc.version] = recordPeer(t, tc.version, client)
			}
			res, report := replay(t, recs[tc.version], []Kind{tc.kind}, client)
			r := one(t, res, report)
			if r.Verdict != tc.want {
				t.Errorf("%s: %s (%s); want %s as docs/probes.md says", tc.kind, r.Verdict, r.Did, tc.want)
			}
		})
	}
}

// tsStdio runs the TypeScript SDK client (probe.mjs) over its own stdin
// (r) and stdout (w), and closes w once it exited.
func tsStdio(ctx context.Context, t *testing.T, r io.ReadCloser, w io.WriteCloser) {
	nodeBin := mcptest.Everything(t)[0]
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, nodeBin, tsScript, "stdio")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = w, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = io.Copy(stdin, r); stdin.Close() }()
	err = cmd.Wait()
	w.Close()
	t.Logf("probe.mjs over stdio (%v): %s", err, stderr.String())
}

// TestTSClientStdio: the TypeScript SDK 1.32.2 client over stdio under
// each probe that acts there, at the revisions it speaks, on a fresh
// recording of its own; the verdicts of tsStdioCases.
func TestTSClientStdio(t *testing.T) {
	recs := map[string][]*store.Recording{}
	for _, tc := range tsStdioCases {
		t.Run(tc.kind.String()+"/"+tc.version, func(t *testing.T) {
			if recs[tc.version] == nil {
				recs[tc.version] = recordStdioWith(t, []string{tc.version}, func(ctx context.Context, r io.ReadCloser, w io.WriteCloser) { tsStdio(ctx, t, r, w) })
			}
			res, report := replayStdio(t, recs[tc.version], []Kind{tc.kind}, func(r io.ReadCloser, w io.WriteCloser) { tsStdio(t.Context(), t, r, w) })
			if r := one(t, res, report); r.Verdict != tc.want {
				t.Errorf("the TypeScript client over stdio: %s (%s); want %s as docs/probes.md says", r.Verdict, r.Did, tc.want)
			}
		})
	}
}
