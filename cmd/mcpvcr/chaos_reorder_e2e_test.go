package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
)

// reorderCassette records, through mcpvcr record --upstream, the Go SDK
// client running chaos script "reorder" against the Go SDK test server
// with tool notify: a log message on the standalone GET stream recorded
// beside a progress notification on the call's POST stream, the only
// pair of notifications a reorder may swap.
func reorderCassette(t *testing.T) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcptest.ReorderHandler(t))
	up := httptest.NewServer(mux)
	t.Cleanup(up.Close)
	db := filepath.Join(t.TempDir(), "reorder.db")
	rec := startServing(t, "record", "--cassette", db, "--upstream", up.URL+"/mcp", "--listen", "127.0.0.1:0")
	saw := mcptest.ChaosRun(testCtx(t), &mcp.StreamableClientTransport{Endpoint: rec.URL}, recordedClient, "reorder")
	if code := rec.Stop(); code != 0 {
		t.Fatalf("record exited %d:\n%s", code, rec.stderr)
	}
	if !slices.Equal(saw, []string{"connected", "tools/list: ok", "logging/setLevel: ok", "notify: ok", "echo: ok", "close: ok"}) {
		t.Fatalf("recording: the client saw %q", saw)
	}
	return db
}

// TestChaos_Reorder: --chaos SEED --chaos-faults reorder on a recording
// with a pair to reorder, to the Go SDK client in process and to the
// TypeScript SDK client: in each run of the seed the one reorder fires,
// announced on stderr, at the same pair, and the client carries on to
// its echo in the same session: pass, exit 0. The HTML report marks the
// reorder on the held notification.
func TestChaos_Reorder(t *testing.T) {
	parallel(t) // each replay waits on its client, not on the CPU
	cassette := reorderCassette(t)
	const seed = 3
	clients := []struct {
		name  string
		run   func(t *testing.T, url string)
		extra []string
	}{
		{"gosdk", func(t *testing.T, url string) {
			saw := mcptest.ChaosRun(testCtx(t), &mcp.StreamableClientTransport{Endpoint: url}, upgradedClient, "reorder")
			t.Logf("Go SDK client saw %q", saw)
			if !slices.Contains(saw, "echo: ok") {
				t.Errorf("the Go SDK client did not get its echo: %q", saw)
			}
		}, nil},
		{"tsclient", func(t *testing.T, url string) {
			node := mcptest.Everything(t)[0]
			cmd := exec.CommandContext(testCtx(t), node, tsChaosScript, url, "reorder")
			cmd.Env = append(os.Environ(), "CLIENT_NAME=ts-chaos-client")
			out, err := cmd.Output()
			if err != nil {
				t.Errorf("TypeScript client: %v", err)
			}
			t.Logf("TypeScript client saw %s", out)
			if !strings.Contains(string(out), `"echo: ok"`) {
				t.Errorf("the TypeScript client did not get its echo: %s", out)
			}
		}, []string{"--ignore", "initialize:params.capabilities"}},
	}
	for _, c := range clients {
		t.Run(c.name, func(t *testing.T) {
			var first []string
			for run := range 2 {
				code, stderr := chaosRun(t, cassette, seed, func(url string) { c.run(t, url) },
					append([]string{"--chaos-faults", "reorder"}, c.extra...)...)
				faults, kinds, verdicts := chaosFaults(stderr)
				if code != 0 || !slices.Equal(kinds, []string{"reorder"}) || !slices.Equal(verdicts, []string{"pass"}) {
					t.Fatalf("run %d: exit %d, faults %v, verdicts %v; want one reorder, passed:\n%s", run+1, code, kinds, verdicts, stderr)
				}
				for _, want := range []string{"chaos: injected reorder", "carried on in the same session", "not visible on the wire"} {
					if !strings.Contains(stderr, want) {
						t.Errorf("run %d: stderr does not say %q:\n%s", run+1, want, stderr)
					}
				}
				t.Logf("run %d: %s", run+1, strings.Join(chaosReport(stderr), "\n"))
				if run == 0 {
					first = faults
				} else if !slices.Equal(first, faults) {
					t.Errorf("the same seed drew another reorder:\n%v\n%v", first, faults)
				}
			}
		})
	}
	t.Run("report", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "chaos.html")
		chaosRun(t, cassette, seed, func(url string) { clients[0].run(t, url) }, "--chaos-faults", "reorder", "--chaos-report", out)
		d := readChaosPage(t, out)
		if len(d.Chaos.Faults) != 1 {
			t.Fatalf("report faults %+v; want the one reorder", d.Chaos.Faults)
		}
		f := d.Chaos.Faults[0]
		if f.Kind != "reorder" || f.St != f.Stream-1 || f.At == 0 || !strings.Contains(f.Where, fmt.Sprintf("(seq %d)", f.At)) {
			t.Errorf("reorder marked at frame %d of stream index %d; want the held notification's (%s, stream %d)", f.At, f.St, f.Where, f.Stream)
		}
	})
}
