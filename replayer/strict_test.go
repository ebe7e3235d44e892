package replayer

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/store"
)

func TestStrictModern(t *testing.T) {
	rec := stdioRecording(t, 1,
		`< {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","tools":[{"name":"weather","inputSchema":{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"days":{"type":"integer","x-mcp-header":"Days"}}}}]}}`,
	)
	rec.Session.Transport = store.StreamableHTTP
	rec.Session.Revision = "2026-07-28"
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"weather","arguments":{"region":"Zürich","days":3},` + meta + `}}`
	good := map[string]string{
		"MCP-Protocol-Version": "2026-07-28",
		"Mcp-Method":           "tools/call",
		"Mcp-Name":             "weather",
		"Mcp-Param-Region":     "=?base64?WsO8cmljaA==?=",
		"Mcp-Param-Days":       "3.0",
	}
	tests := []struct {
		name   string
		method string
		body   string
		change map[string]string
		want   string
	}{
		{"Mirrored", "POST", call, nil, ""},
		{"WrongName", "POST", call, map[string]string{"Mcp-Name": "forecast"}, "Mcp-Name"},
		{"WrongMethod", "POST", call, map[string]string{"Mcp-Method": "tools/list"}, "Mcp-Method"},
		{"WrongVersion", "POST", call, map[string]string{"MCP-Protocol-Version": "2025-11-25"}, "MCP-Protocol-Version"},
		{"MissingParam", "POST", call, map[string]string{"Mcp-Param-Region": ""}, "Mcp-Param-Region"},
		{"WrongNumber", "POST", call, map[string]string{"Mcp-Param-Days": "4"}, "Mcp-Param-Days"},
		{"SessionID", "POST", call, map[string]string{"Mcp-Session-Id": "abc"}, "removed"},
		{"Ping", "POST", `{"jsonrpc":"2.0","id":3,"method":"ping","params":{` + meta + `}}`, map[string]string{"Mcp-Method": "ping", "Mcp-Name": ""}, "ping was removed"},
		{"GetStream", "GET", "", nil, "GET is not part"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(tt.method, "/mcp", strings.NewReader(tt.body))
			for k, v := range good {
				r.Header.Set(k, v)
			}
			for k, v := range tt.change {
				if v == "" {
					r.Header.Del(k)
				} else {
					r.Header.Set(k, v)
				}
			}
			r.Header.Set("Accept", "application/json, text/event-stream")
			if tt.method == http.MethodGet {
				r.Header.Set("Accept", "text/event-stream")
			}
			got := strictHTTP(r, jsonrpc.Parse([]byte(tt.body)), rec, "")
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Errorf("strictHTTP = %q; want a complaint containing %q", got, tt.want)
			}
		})
	}
}
