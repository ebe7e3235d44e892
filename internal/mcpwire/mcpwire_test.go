package mcpwire

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRequestMeta(t *testing.T) {
	tests := []struct {
		name   string
		params string
		want   Meta
	}{
		{"modern", `{"name":"x","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"c"},"progressToken":7}}`,
			Meta{ProtocolVersion: "2026-07-28", ClientInfo: json.RawMessage(`{"name":"c"}`), ProgressToken: json.RawMessage(`7`)}},
		{"after a large member", `{"content":[{"type":"text","text":"}{\"_meta\":1"}],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s"}}}`,
			Meta{ServerInfo: json.RawMessage(`{"name":"s"}`)}},
		{"nested _meta is not the request's", `{"arguments":{"_meta":{"progressToken":1}}}`, Meta{}},
		{"no _meta", `{"name":"x"}`, Meta{}},
		{"_meta not an object", `{"_meta":[1]}`, Meta{}},
		{"version not a string", `{"_meta":{"io.modelcontextprotocol/protocolVersion":3}}`, Meta{}},
		{"not an object", `[1,2]`, Meta{}},
		{"empty", ``, Meta{}},
		{"truncated", `{"_meta":{"progressToken":`, Meta{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, RequestMeta(json.RawMessage(tt.params))); diff != "" {
				t.Errorf("RequestMeta(%s) mismatch (-want +got):\n%s", tt.params, diff)
			}
		})
	}
}
