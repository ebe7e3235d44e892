package main

import (
	"testing"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
)

// TestAudit_FailOn: a raw client that breaks a SHOULD alone (it sends
// MCP-Protocol-Version on initialize), recorded against the Go SDK test
// server: audit exits 0 by default and 1 with --fail-on warning; a level
// it does not know is a usage mistake.
func TestAudit_FailOn(t *testing.T) {
	parallel(t)
	upstream := mcptest.StartServer(t, "-transport", "http")
	db := auditRecordHTTP(t, upstream, func(url string) {
		sid := rawPost(t, url, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`,
			map[string]string{"MCP-Protocol-Version": "2025-06-18"})
		rawPost(t, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-06-18"})
	})
	for _, tc := range []struct {
		args []string
		code int
	}{
		{nil, 0},
		{[]string{"--fail-on", "error"}, 0},
		{[]string{"--fail-on", "warning"}, 1},
		{[]string{"--fail-on", "warning", "--skip", "http/protocol-version-absent-on-initialize"}, 0},
		{[]string{"--fail-on", "info"}, 2},
	} {
		r := mcpvcr(t, "", append([]string{"audit", "--cassette", db}, tc.args...)...)
		if r.code != tc.code {
			t.Errorf("mcpvcr audit %q exited %d; want %d\n%s%s", tc.args, r.code, tc.code, r.stdout, r.stderr)
		}
	}
	if got, _ := auditFindings(t, db); len(got) != 1 || got[0] != "http/protocol-version-absent-on-initialize warning" {
		t.Errorf("findings %q; want the warning alone", got)
	}
}
