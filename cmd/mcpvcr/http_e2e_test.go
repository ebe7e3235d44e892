package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
)

// TestHTTP_GoSDK records the Go SDK test server over Streamable HTTP
// through mcpvcr record --upstream, for each legacy Streamable HTTP
// revision and server mode, then replays it with mcpvcr replay --listen
// and requires the client to see the same results.
func TestHTTP_GoSDK(t *testing.T) {
	modes := []struct {
		name  string
		flags []string
	}{
		{"SSE", nil},
		{"JSON", []string{"-json"}},
		{"EventStore", []string{"-eventstore"}},
	}
	for _, v := range []string{mcptest.V20250326, mcptest.V20250618, mcptest.V20251125} {
		for _, m := range modes {
			t.Run(v+"/"+m.name, func(t *testing.T) {
				t.Parallel()
				ctx := testCtx(t)
				upstream := mcptest.StartServer(t, append([]string{"-transport", "http"}, m.flags...)...)
				db := filepath.Join(t.TempDir(), "c.db")
				t.Cleanup(func() {
					if t.Failed() {
						t.Logf("recording:\n%s", mcpvcr(t, "", "show", "1", "--cassette", db).stdout)
					}
				})

				rec := startServing(t, "record", "--cassette", db, "--upstream", upstream, "--listen", "127.0.0.1:0")
				live := mcptest.Run(ctx, t, &mcp.StreamableClientTransport{Endpoint: rec.URL}, v)
				if code := rec.Stop(); code != 0 {
					t.Fatalf("mcpvcr record exited %d:\n%s", code, rec.stderr)
				}

				rep := startServing(t, "replay", "--cassette", db, "--listen", "127.0.0.1:0")
				replayed := mcptest.Run(ctx, t, &mcp.StreamableClientTransport{Endpoint: rep.URL + "/mcp"}, v)
				code := rep.Stop()
				if diff := cmp.Diff(live, replayed); diff != "" {
					t.Errorf("replayed transcript differs from the live one (-live +replay):\n%s\nreplay stderr:\n%s", diff, rep.stderr)
				}
				if code != 0 || !strings.Contains(rep.stderr.String(), " 0 unmatched") {
					t.Errorf("mcpvcr replay exited %d; want 0 and no unmatched frames:\n%s", code, rep.stderr)
				}
			})
		}
	}
}
