package main

import (
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
)

// recassette re-records the cassettes in ../../cassettes from live servers
// (make recassette). It is not -update, which means "rewrite golden
// files" wherever it exists (make golden).
var recassette = flag.Bool("recassette", false, "re-record the cassettes in ../../cassettes from live servers")

const cassetteDir = "../../cassettes"

// goldenTranscript reads mcptest's golden transcript of a revision: what
// the Go SDK test server answers the script, live.
func goldenTranscript(tb testing.TB, version string) mcptest.Transcript {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "internal", "mcptest", "testdata", "script", version+".golden"))
	if err != nil {
		tb.Fatal(err)
	}
	var tr mcptest.Transcript
	if err := json.Unmarshal(b, &tr); err != nil {
		tb.Fatal(err)
	}
	return tr
}

// roundTrip decodes a transcript the way a golden file is decoded.
func roundTrip(tb testing.TB, tr mcptest.Transcript) mcptest.Transcript {
	tb.Helper()
	b, err := json.Marshal(tr)
	if err != nil {
		tb.Fatal(err)
	}
	var out mcptest.Transcript
	if err := json.Unmarshal(b, &out); err != nil {
		tb.Fatal(err)
	}
	return out
}

// recordCassette records a fresh cassette with the Go SDK client: record
// is the transport through mcpvcr, run against a live server.
func exportCassette(tb testing.TB, db, path string) {
	tb.Helper()
	res := mcpvcr(tb, "", "export", "1", "--cassette", db, "-o", path)
	if res.code != 0 {
		tb.Fatalf("export: %s", res.stderr)
	}
}

// TestCassettes_Stdio replays the committed stdio recordings of the Go SDK
// test server, one per revision, to the Go SDK client and requires the
// answers the live server gives (mcptest's golden transcripts). With
// -recassette it records them afresh first.
func TestCassettes_Stdio(t *testing.T) {
	parallel(t)
	for _, v := range mcptest.Versions {
		t.Run(v, func(t *testing.T) {
			ctx := testCtx(t)
			path := filepath.Join(cassetteDir, "gosdk-stdio-"+v+".jsonl")
			if *recassette {
				server := mcptest.BuildServer(t)
				db := filepath.Join(t.TempDir(), "c.db")
				rec := exec.Command(mcpvcrBin, "record", "--cassette", db, "--name", "gosdk-stdio-"+v, "--", "testserver")
				rec.Env = append(os.Environ(), "PATH="+filepath.Dir(server)+string(os.PathListSeparator)+os.Getenv("PATH"))
				mcptest.Run(ctx, t, &mcp.CommandTransport{Command: rec}, v)
				exportCassette(t, db, path)
			}
			var stderr syncBuffer
			rep := exec.Command(mcpvcrBin, "replay", "--stdio", "--cassette", path)
			rep.Stderr = &stderr
			got := roundTrip(t, mcptest.Run(ctx, t, &mcp.CommandTransport{Command: rep}, v))
			if diff := cmp.Diff(goldenTranscript(t, v), got); diff != "" {
				t.Errorf("replay of %s differs from the live server's answers (-live +replay):\n%s\n%s", path, diff, stderr.String())
			}
			if !strings.Contains(stderr.String(), " 0 unmatched") {
				t.Errorf("replay saw unmatched traffic:\n%s", stderr.String())
			}
		})
	}
}

// TestCassettes_HTTP does the same for the Streamable HTTP recordings of
// the Go SDK test server (with an event store), revisions 2025-03-26 to
// 2025-11-25.
func TestCassettes_HTTP(t *testing.T) {
	parallel(t)
	for _, v := range []string{mcptest.V20250326, mcptest.V20250618, mcptest.V20251125} {
		t.Run(v, func(t *testing.T) {
			ctx := testCtx(t)
			path := filepath.Join(cassetteDir, "gosdk-http-"+v+".jsonl")
			if *recassette {
				upstream := mcptest.StartServer(t, "-transport", "http", "-eventstore")
				db := filepath.Join(t.TempDir(), "c.db")
				rec := startServing(t, "record", "--cassette", db, "--name", "gosdk-http-"+v, "--upstream", upstream, "--listen", "127.0.0.1:0")
				mcptest.Run(ctx, t, &mcp.StreamableClientTransport{Endpoint: rec.URL}, v)
				if code := rec.Stop(); code != 0 {
					t.Fatalf("record exited %d:\n%s", code, rec.stderr)
				}
				exportCassette(t, db, path)
			}
			rep := startServing(t, "replay", "--cassette", path, "--listen", "127.0.0.1:0")
			got := roundTrip(t, mcptest.Run(ctx, t, &mcp.StreamableClientTransport{Endpoint: rep.URL + "/mcp"}, v))
			code := rep.Stop()
			if diff := cmp.Diff(goldenTranscript(t, v), got); diff != "" {
				t.Errorf("replay of %s differs from the live server's answers (-live +replay):\n%s\n%s", path, diff, rep.stderr)
			}
			if code != 0 {
				t.Errorf("replay exited %d:\n%s", code, rep.stderr)
			}
		})
	}
}

// TestCassettes_Everything replays the recording of
// @modelcontextprotocol/server-everything over stdio. Replay needs no node.
func TestCassettes_Everything(t *testing.T) {
	parallel(t)
	ctx := testCtx(t)
	path := filepath.Join(cassetteDir, "everything-stdio.jsonl")
	golden := filepath.Join(cassetteDir, "everything-stdio.golden.json")
	if *recassette {
		argv := mcptest.Everything(t)
		db := filepath.Join(t.TempDir(), "c.db")
		rec := exec.Command(mcpvcrBin, append([]string{"record", "--cassette", db, "--name", "everything-stdio", "--", "node"}, argv[1:]...)...)
		live, _ := everythingScript(ctx, t, &mcp.CommandTransport{Command: rec, TerminateDuration: 200 * 1e6})
		exportCassette(t, db, path)
		b, _ := json.MarshalIndent(live, "", "  ")
		if err := os.WriteFile(golden, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]any
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	rep := exec.Command(mcpvcrBin, "replay", "--stdio", "--cassette", path)
	got, err := everythingScript(ctx, t, &mcp.CommandTransport{Command: rep})
	if err != nil {
		t.Errorf("close: %v", err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("replay of %s differs from the live server (-live +replay):\n%s", path, diff)
	}
}
