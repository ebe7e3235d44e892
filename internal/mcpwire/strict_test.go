package mcpwire

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
)

// TestStrictHTTP checks the rules of the revisions before 2026-07-28 (the
// modern ones are checked through replay, in replayer's TestStrictModern):
// each request breaks one rule, or none.
func TestStrictHTTP(t *testing.T) {
	const (
		initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`
		list       = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
		both       = "application/json, text/event-stream"
	)
	noTools := func(string) map[string]string { return nil }
	tests := []struct {
		name, method, body, accept, pv, sid, rev string
		want                                     string
	}{
		{"Initialize", "POST", initialize, both, "", "", "", ""},
		{"InitializeWithVersion", "POST", initialize, both, V20250618, "", "", "must be absent on initialize"},
		{"AcceptJSONOnly", "POST", list, "application/json", V20250618, "s1", V20250618, "Accept must list both"},
		{"AcceptWildcard", "POST", list, "*/*", V20250618, "s1", V20250618, ""},
		{"GetWithoutEventStream", "GET", "", "application/json", V20250618, "s1", V20250618, "text/event-stream on GET"},
		{"Negotiated", "POST", list, both, V20250618, "s1", V20250618, ""},
		{"OtherVersion", "POST", list, both, V20251125, "s1", V20250618, "must be the negotiated 2025-06-18"},
		{"VersionBefore20250618", "POST", list, both, V20250326, "s1", V20250326, "must be absent when 2025-03-26"},
		{"NoSessionID", "POST", list, both, V20250618, "", V20250618, "Mcp-Session-Id s1 must be sent"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(tt.method, "/mcp", strings.NewReader(tt.body))
			r.Header.Set("Accept", tt.accept)
			if tt.pv != "" {
				r.Header.Set("MCP-Protocol-Version", tt.pv)
			}
			if tt.sid != "" {
				r.Header.Set("Mcp-Session-Id", tt.sid)
			}
			got := StrictHTTP(r, jsonrpc.Parse([]byte(tt.body)), tt.rev, "s1", noTools)
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Errorf("StrictHTTP = %q; want a complaint containing %q", got, tt.want)
			}
		})
	}
}

// TestDecodeHeader undoes the base64 sentinel and leaves anything else.
func TestDecodeHeader(t *testing.T) {
	for in, want := range map[string]string{"=?base64?WsO8cmljaA==?=": "Zürich", "plain": "plain", "=?base64?not base64?=": "=?base64?not base64?="} {
		if got := DecodeHeader(in); got != want {
			t.Errorf("DecodeHeader(%q) = %q; want %q", in, got, want)
		}
	}
}
