package mcpvcrtest_test

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/mcpvcrtest"
)

// TestProbe_Session404: with Probe("session-404") the Go SDK client's
// first call of the 2025-11-25 cassette is answered 404; the client's
// application calls again, and the test reports at cleanup what the SDK
// sent next, judged against the rule.
func TestProbe_Session404(t *testing.T) {
	ctx := context.Background()
	rt := &recTB{TB: t}
	srv := mcpvcrtest.NewServer(rt, twoRuns(t), mcpvcrtest.Probe("session-404"))
	cs, err := newClient().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: mcpvcrtest.Endpoint(srv)}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	for i := range 2 {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hello"}})
		t.Logf("call %d: %v", i+1, err)
	}
	cs.Close()
	got := rt.finish()
	t.Logf("failure:\n%s", got)
	for _, want := range []string{"mcpvcrtest.NewServer: the client failed a probe", "session-404", "used the session id answered 404 again"} {
		if !strings.Contains(got, want) {
			t.Errorf("the test's failure lacks %q; it is:\n%s", want, got)
		}
	}
}
