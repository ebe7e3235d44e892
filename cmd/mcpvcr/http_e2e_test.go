package main

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
)

// TestHTTP_GoSDK records the Go SDK test server over Streamable HTTP
// through mcpvcr record --upstream, for each legacy Streamable HTTP
// revision and server mode, then replays it with mcpvcr replay --listen
// and requires the client to see the same results.
func TestHTTP_GoSDK(t *testing.T) {
	parallel(t)
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
				recordThenReplay(t, upstream, "/mcp", nil, func(url string) mcptest.Transcript {
					return mcptest.Run(ctx, t, &mcp.StreamableClientTransport{Endpoint: url}, v)
				})
			})
		}
	}
}
