package replayer_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
)

// TestHTTP_AnswerDiffers (http.go): over Streamable HTTP, a client that
// declines the elicitation the recorded client accepted gets the
// recorded results all the same, and its answer is reported, not
// counted as matched; the recorded client's answers under another name
// match everything.
func TestHTTP_AnswerDiffers(t *testing.T) {
	for _, tt := range []struct {
		name    string
		decline bool
	}{{"same", false}, {"declines", true}} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testContext(t)
			srv, url := serveCassette(t, "gosdk-http-2025-11-25", "/mcp", nil)
			c := mcptest.NewClientWith(upgraded, func(o *mcp.ClientOptions) {
				if tt.decline {
					o.ElicitationHandler = func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
						return &mcp.ElicitResult{Action: "decline"}, nil
					}
				}
			})
			cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: mcptest.V20251125})
			if err != nil {
				t.Fatal(err)
			}
			tr, err := mcptest.Script(ctx, cs)
			if err != nil {
				t.Fatalf("script: %v", err)
			}
			cs.Close()
			srv.Close()
			for _, s := range tr.Steps {
				if b, _ := json.Marshal(s.Result); s.Name == "tools/call elicit" && !strings.Contains(string(b), `"accept"`) {
					t.Errorf("elicit step = %+v; want the recorded result (accept)", s)
				}
			}
			var reasons []string
			matched := 0
			for _, r := range srv.Reports() {
				matched += r.Matched
				for _, mm := range r.Mismatches {
					reasons = append(reasons, mm.Error())
				}
			}
			if !tt.decline {
				if len(reasons) != 0 {
					t.Errorf("unmatched: %q; want none", reasons)
				}
				return
			}
			want := `result: answer to elicitation/create differs at result.action: "decline" (recorded "accept"), result.content: (absent) (recorded {"name":"mcptest-user"})`
			if len(reasons) != 1 || !strings.HasPrefix(reasons[0], want) {
				t.Errorf("unmatched: %q; want one, %s", reasons, want)
			}
			var b strings.Builder
			if srv.WriteSummary(&b) || !strings.Contains(b.String(), " 1 unmatched") {
				t.Errorf("summary:\n%s\nwant 1 unmatched and not OK", b.String())
			}
		})
	}
}
