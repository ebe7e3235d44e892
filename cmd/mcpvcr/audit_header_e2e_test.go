package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
)

// headerServer serves, statelessly over Streamable HTTP, a Go SDK server
// with one tool whose argument region is annotated with x-mcp-header, as
// the SDK's conformance server has it, and returns its URL.
func headerServer(tb testing.TB) string {
	tb.Helper()
	server := mcp.NewServer(&mcp.Implementation{Name: "header-server", Version: "1.0.0"}, nil)
	server.AddTool(&mcp.Tool{
		Name: "where",
		InputSchema: json.RawMessage(`{"type":"object","properties":{
			"region":{"type":"string","x-mcp-header":"Region"},
			"level":{"type":"integer"}}}`),
	}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(req.Params.Arguments)}}}, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{Stateless: true})
	srv := httptest.NewServer(h)
	tb.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

// TestAudit_XMcpHeader: the Go SDK client calls a tool annotated with
// x-mcp-header in 2026-07-28, with a plain value, one that needs the
// Base64 sentinel, none, and an empty one; a raw client calls it without the header
// and retries without listing the tools again.
func TestAudit_XMcpHeader(t *testing.T) {
	parallel(t)
	t.Run("gosdk", func(t *testing.T) {
		t.Parallel()
		ctx := testCtx(t)
		db := auditRecordHTTP(t, headerServer(t), func(url string) {
			client := mcp.NewClient(&mcp.Implementation{Name: "header-client", Version: "1.0.0"}, nil)
			cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: mcptest.V20260728})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if _, err := cs.ListTools(ctx, nil); err != nil {
				t.Fatal(err)
			}
			for _, args := range []map[string]any{{"region": "eu-west"}, {"region": " Zürich "}, {"level": 3}} {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "where", Arguments: args})
				if err != nil || res.IsError {
					t.Fatalf("call where %v: %v %+v", args, err, res)
				}
			}
			// An empty string: the client sends Mcp-Param-Region empty, as
			// the rule asks, and the SDK's own server refuses that as a
			// missing header (-32020). That is the server's doing; audit
			// judges the client.
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "where", Arguments: map[string]any{"region": ""}}); err == nil {
				t.Log("the empty region went through: has the SDK server changed?")
			}
		})
		// The client kept every header rule; what it breaks is the
		// roots capability, as in every 2026-07-28 session of it.
		wantClientAudit(t, db, goSDKModernRoots)
	})
	t.Run("raw", func(t *testing.T) {
		t.Parallel()
		meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
		hdr := func(method, name string, more ...string) map[string]string {
			h := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}
			if name != "" {
				h["Mcp-Name"] = name
			}
			for i := 0; i+1 < len(more); i += 2 {
				h[more[i]] = more[i+1]
			}
			return h
		}
		call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"where","arguments":{"region":"eu"},` + meta + `}}`
		db := auditRecordHTTP(t, headerServer(t), func(url string) {
			rawPost(t, url, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+meta+`}}`, hdr("tools/list", ""))
			rawPost(t, url, call, hdr("tools/call", "where"))                           // no Mcp-Param-Region
			rawPost(t, url, call, hdr("tools/call", "where", "Mcp-Param-Region", "us")) // retried at once, and wrong
			rawPost(t, url, call, hdr("tools/call", "where", "Mcp-Param-Region", "eu")) // kept
		})
		wantAudit(t, db, "http/mcp-param error", "tools/header-mismatch-retry warning")
	})
}
