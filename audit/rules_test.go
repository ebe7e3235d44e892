package audit

import (
	"fmt"
	"testing"

	"github.com/mcpvcr/mcpvcr/store"
)

const (
	c2s = store.ClientToServer
	s2c = store.ServerToClient
)

func meta(extra string) string {
	return `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{` + extra + `}}`
}

// legacyInit records initialize over HTTP at rev, the server issuing
// session id "s1"; hdr is what the initialize POST carried.
func legacyInit(b *rb, rev string, hdr map[string]string) {
	h := map[string]string{"<Mcp-Session-Id": "s1"}
	for k, v := range hdr {
		h[k] = v
	}
	b.post(h, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"`+rev+`","capabilities":{}}}`,
		`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"`+rev+`","capabilities":{}}}`)
	b.post(map[string]string{"Mcp-Session-Id": "s1", "MCP-Protocol-Version": rev}, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, "")
}

func modernPost(b *rb, hdr map[string]string, method, params, resp string) {
	h := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}
	for k, v := range hdr {
		if v == "-" {
			delete(h, k)
		} else {
			h[k] = v
		}
	}
	if params != "" {
		params = "," + params
	}
	b.post(h, `{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":{`+meta("")+params+`}}`, resp)
}

const annotatedTools = `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"t","inputSchema":{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"n":{"type":"integer","x-mcp-header":"N"}}}}]}}`

// TestRules: every rule has a recording that breaks it (want findings)
// and one that keeps it (none).
func TestRules(t *testing.T) {
	http := store.StreamableHTTP
	cases := []struct {
		rule, name string
		rev        string
		tr         store.Transport
		want       int
		build      func(b *rb)
	}{
		{"http/protocol-version-absent-on-initialize", "sent", "2025-06-18", http, 1, func(b *rb) {
			legacyInit(b, "2025-06-18", map[string]string{"MCP-Protocol-Version": "2025-06-18"})
		}},
		{"http/protocol-version-absent-on-initialize", "absent", "2025-06-18", http, 0, func(b *rb) { legacyInit(b, "2025-06-18", nil) }},
		{"http/protocol-version-negotiated", "newest", "2025-06-18", http, 1, func(b *rb) {
			legacyInit(b, "2025-06-18", nil)
			b.post(map[string]string{"Mcp-Session-Id": "s1", "MCP-Protocol-Version": "2025-11-25"}, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "")
		}},
		{"http/protocol-version-negotiated", "missing on GET", "2025-11-25", http, 1, func(b *rb) {
			legacyInit(b, "2025-11-25", nil)
			b.open(store.GetStream, "GET", map[string]string{"Mcp-Session-Id": "s1"}, 200)
		}},
		{"http/protocol-version-negotiated", "kept", "2025-11-25", http, 0, func(b *rb) {
			legacyInit(b, "2025-11-25", nil)
			b.open(store.GetStream, "GET", map[string]string{"Mcp-Session-Id": "s1", "MCP-Protocol-Version": "2025-11-25"}, 200)
		}},
		{"http/protocol-version-negotiated", "2025-03-26 other version", "2025-03-26", http, 1, func(b *rb) {
			legacyInit(b, "2025-03-26", nil)
			b.post(map[string]string{"Mcp-Session-Id": "s1", "MCP-Protocol-Version": "2025-06-18"}, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "")
		}},
		{"http/protocol-version-not-before-2025-06-18", "sent", "2025-03-26", http, 1, func(b *rb) { legacyInit(b, "2025-03-26", nil) }},
		{"http/protocol-version-not-before-2025-06-18", "absent", "2025-03-26", http, 0, func(b *rb) {
			b.post(map[string]string{"<Mcp-Session-Id": "s1"}, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26"}}`, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-03-26"}}`)
			b.post(map[string]string{"Mcp-Session-Id": "s1"}, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, "")
		}},
		{"http/protocol-version-not-before-2025-06-18", "sent at 2024-11-05", "2024-11-05", http, 1, func(b *rb) { legacyInit(b, "2024-11-05", nil) }},
		// Over HTTP+SSE the answer to initialize comes on the SSE stream,
		// not on the POST that carried it.
		{"http/protocol-version-not-before-2025-06-18", "sent over HTTP+SSE", "2024-11-05", store.LegacySSE, 1, sseInit(map[string]string{"MCP-Protocol-Version": "2024-11-05"})},
		{"http/protocol-version-not-before-2025-06-18", "absent over HTTP+SSE", "2024-11-05", store.LegacySSE, 0, sseInit(nil)},
		{"http/session-id", "missing", "2025-06-18", http, 1, func(b *rb) {
			legacyInit(b, "2025-06-18", nil)
			b.post(map[string]string{"MCP-Protocol-Version": "2025-06-18"}, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "")
		}},
		{"http/session-id", "kept", "2025-06-18", http, 0, func(b *rb) { legacyInit(b, "2025-06-18", nil) }},
		{"http/modern-protocol-version", "mismatch", "2026-07-28", http, 1, func(b *rb) {
			modernPost(b, map[string]string{"MCP-Protocol-Version": "2025-11-25"}, "tools/list", "", "")
		}},
		{"http/modern-protocol-version", "kept", "2026-07-28", http, 0, func(b *rb) { modernPost(b, nil, "tools/list", "", "") }},
		{"http/mcp-method", "missing", "2026-07-28", http, 1, func(b *rb) { modernPost(b, map[string]string{"Mcp-Method": "-"}, "tools/list", "", "") }},
		{"http/mcp-method", "kept", "2026-07-28", http, 0, func(b *rb) { modernPost(b, nil, "tools/list", "", "") }},
		{"http/mcp-name", "missing", "2026-07-28", http, 1, func(b *rb) { modernPost(b, nil, "tools/call", `"name":"echo"`, "") }},
		{"http/mcp-name", "uri", "2026-07-28", http, 1, func(b *rb) {
			modernPost(b, map[string]string{"Mcp-Name": "file:///b"}, "resources/read", `"uri":"file:///a"`, "")
		}},
		{"http/mcp-name", "encoded", "2026-07-28", http, 0, func(b *rb) {
			modernPost(b, map[string]string{"Mcp-Name": "=?base64?SGVsbG8sIOS4lueVjA==?="}, "prompts/get", `"name":"Hello, 世界"`, "")
		}},
		{"http/mcp-param", "missing and extra", "2026-07-28", http, 2, func(b *rb) {
			modernPost(b, nil, "tools/list", "", annotatedTools)
			modernPost(b, map[string]string{"Mcp-Name": "t", "Mcp-Param-N": "3"}, "tools/call", `"name":"t","arguments":{"region":"eu","n":null}`, "")
		}},
		{"http/mcp-param", "kept", "2026-07-28", http, 0, func(b *rb) {
			modernPost(b, nil, "tools/list", "", annotatedTools)
			modernPost(b, map[string]string{"Mcp-Name": "t", "Mcp-Param-Region": "", "Mcp-Param-N": "42"}, "tools/call", `"name":"t","arguments":{"region":"","n":42.0}`, "")
		}},
		{"http/mcp-param", "invalid annotation", "2026-07-28", http, 0, func(b *rb) {
			modernPost(b, nil, "tools/list", "", `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"t","inputSchema":{"properties":{"x":{"type":"number","x-mcp-header":"X"}}}}]}}`)
			modernPost(b, map[string]string{"Mcp-Name": "t"}, "tools/call", `"name":"t","arguments":{"x":1.5}`, "")
		}},
		{"http/mcp-param", "listed again without it", "2026-07-28", http, 0, func(b *rb) {
			modernPost(b, nil, "tools/list", "", annotatedTools)
			modernPost(b, nil, "tools/list", "", `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"t","inputSchema":{"properties":{"region":{"type":"string"}}}}]}}`)
			modernPost(b, map[string]string{"Mcp-Name": "t"}, "tools/call", `"name":"t","arguments":{"region":"eu"}`, "")
		}},
		{"http/mcp-param", "not listed", "2026-07-28", http, 0, func(b *rb) {
			modernPost(b, map[string]string{"Mcp-Name": "t"}, "tools/call", `"name":"t","arguments":{"region":"eu"}`, "")
		}},
		{"http/mcp-param-integer-range", "sent", "2026-07-28", http, 1, func(b *rb) {
			modernPost(b, nil, "tools/list", "", annotatedTools)
			modernPost(b, map[string]string{"Mcp-Name": "t", "Mcp-Param-N": "9007199254740993"}, "tools/call", `"name":"t","arguments":{"n":9007199254740993}`, "")
		}},
		{"http/mcp-param-integer-range", "in range", "2026-07-28", http, 0, func(b *rb) {
			modernPost(b, nil, "tools/list", "", annotatedTools)
			modernPost(b, map[string]string{"Mcp-Name": "t", "Mcp-Param-N": "9007199254740991"}, "tools/call", `"name":"t","arguments":{"n":9007199254740991}`, "")
		}},
		{"http/header-encoding", "plain whitespace", "2026-07-28", http, 1, func(b *rb) {
			modernPost(b, nil, "tools/list", "", annotatedTools)
			modernPost(b, map[string]string{"Mcp-Name": "t", "Mcp-Param-Region": " eu"}, "tools/call", `"name":"t","arguments":{"region":" eu"}`, "")
		}},
		{"http/header-encoding", "sentinel lookalike", "2026-07-28", http, 1, func(b *rb) {
			modernPost(b, map[string]string{"Mcp-Name": "=?base64?x?="}, "prompts/get", `"name":"=?base64?x?="`, "")
		}},
		{"http/header-encoding", "encoded", "2026-07-28", http, 0, func(b *rb) {
			modernPost(b, nil, "tools/list", "", annotatedTools)
			modernPost(b, map[string]string{"Mcp-Name": "t", "Mcp-Param-Region": "=?base64?IGV1?="}, "tools/call", `"name":"t","arguments":{"region":" eu"}`, "")
		}},
		{"http/no-session-id", "sent", "2026-07-28", http, 1, func(b *rb) { modernPost(b, map[string]string{"Mcp-Session-Id": "old"}, "tools/list", "", "") }},
		{"http/no-session-id", "kept", "2026-07-28", http, 0, func(b *rb) { modernPost(b, nil, "tools/list", "", "") }},
		{"modern/no-ping", "ping", "2026-07-28", store.Stdio, 1, func(b *rb) { b.c(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{` + meta("") + `}}`) }},
		{"modern/no-ping", "none", "2026-07-28", store.Stdio, 0, func(b *rb) { b.c(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + meta("") + `}}`) }},
		{"modern/no-logging-setlevel", "setLevel", "2026-07-28", store.Stdio, 1, func(b *rb) {
			b.c(`{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"debug",` + meta("") + `}}`)
		}},
		{"modern/no-logging-setlevel", "in _meta", "2026-07-28", store.Stdio, 0, func(b *rb) {
			b.c(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/logLevel":"debug"}}}`)
		}},
		{"modern/no-roots-list-changed", "sent", "2026-07-28", store.Stdio, 1, func(b *rb) { b.c(`{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`) }},
		{"modern/no-roots-list-changed", "none", "2026-07-28", store.Stdio, 0, func(b *rb) {}},
		{"modern/roots-without-list-changed", "declared twice", "2026-07-28", store.Stdio, 1, func(b *rb) {
			b.c(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + meta(`"roots":{"listChanged":true}`) + `}}`)
			b.c(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{` + meta(`"roots":{"listChanged":true}`) + `}}`)
		}},
		{"modern/roots-without-list-changed", "roots alone", "2026-07-28", store.Stdio, 0, func(b *rb) {
			b.c(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + meta(`"roots":{}`) + `}}`)
		}},
		{"lifecycle/no-initialized-after-unknown-version", "initialized", "1999-01-01", store.Stdio, 1, func(b *rb) {
			b.c(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`)
			b.s(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"1999-01-01"}}`)
			b.c(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		}},
		{"lifecycle/no-initialized-after-unknown-version", "disconnected", "1999-01-01", store.Stdio, 0, func(b *rb) {
			b.c(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`)
			b.s(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"1999-01-01"}}`)
		}},
		{"lifecycle/initialize-not-cancelled", "cancelled", "2025-06-18", store.Stdio, 1, func(b *rb) {
			b.c(`{"jsonrpc":"2.0","id":"i","method":"initialize","params":{}}`)
			b.c(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"i"}}`)
		}},
		{"lifecycle/initialize-not-cancelled", "other cancelled", "2025-06-18", store.Stdio, 0, func(b *rb) {
			b.c(`{"jsonrpc":"2.0","id":"i","method":"initialize","params":{}}`)
			b.c(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`)
		}},
		{"cancel/modern-http-by-close", "posted", "2026-07-28", http, 1, func(b *rb) {
			b.post(nil, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`, "")
		}},
		{"cancel/modern-http-by-close", "closed", "2026-07-28", http, 0, func(b *rb) {
			modernPost(b, nil, "tools/call", `"name":"slow"`, "")
			b.rec.Streams[0].End = store.EndClientAborted
		}},
		{"server-requests/id-echoed", "string became number", "2025-06-18", store.Stdio, 1, func(b *rb) {
			b.s(`{"jsonrpc":"2.0","id":"7","method":"roots/list"}`)
			b.c(`{"jsonrpc":"2.0","id":7,"result":{"roots":[]}}`)
		}},
		{"server-requests/id-echoed", "kept", "2025-06-18", store.Stdio, 0, func(b *rb) {
			b.s(`{"jsonrpc":"2.0","id":"7","method":"roots/list"}`)
			b.c(`{"jsonrpc":"2.0","id":"7","result":{"roots":[]}}`)
		}},
		{"batch/only-2025-03-26", "2025-06-18", "2025-06-18", store.Stdio, 1, func(b *rb) {
			b.c(`[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","id":2,"method":"prompts/list"}]`)
		}},
		{"batch/only-2025-03-26", "2025-03-26", "2025-03-26", store.Stdio, 0, func(b *rb) {
			b.c(`[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","id":2,"method":"prompts/list"}]`)
		}},
		{"elicitation/declared-modes", "url in 2025-06-18", "2025-06-18", store.Stdio, 1, func(b *rb) {
			b.c(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"capabilities":{"elicitation":{"url":{}}}}}`)
		}},
		{"elicitation/declared-modes", "url accepted undeclared", "2025-11-25", store.Stdio, 1, func(b *rb) {
			b.c(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"capabilities":{"elicitation":{"form":{}}}}}`)
			b.s(`{"jsonrpc":"2.0","id":5,"method":"elicitation/create","params":{"mode":"url","url":"https://x"}}`)
			b.c(`{"jsonrpc":"2.0","id":5,"result":{"action":"accept"}}`)
		}},
		{"elicitation/declared-modes", "url declared", "2025-11-25", store.Stdio, 0, func(b *rb) {
			b.c(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"capabilities":{"elicitation":{"form":{},"url":{}}}}}`)
			b.s(`{"jsonrpc":"2.0","id":5,"method":"elicitation/create","params":{"mode":"url","url":"https://x"}}`)
			b.c(`{"jsonrpc":"2.0","id":5,"result":{"action":"accept"}}`)
		}},
		{"version/discover-retry", "unsupported retry", "2026-07-28", store.Stdio, 1, func(b *rb) {
			b.c(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2027-01-01"}}}`)
			b.s(`{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"x","data":{"supported":["2026-07-28"]}}}`)
			b.c(`{"jsonrpc":"2.0","id":2,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-09-01"}}}`)
		}},
		{"version/discover-retry", "third time", "2026-07-28", store.Stdio, 1, func(b *rb) {
			for i := 1; i <= 3; i++ {
				b.c(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, i))
				b.s(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"error":{"code":-32022,"message":"x","data":{"supported":["2026-07-28"]}}}`, i))
			}
		}},
		// Three connections through one recording, each discovering once
		// and answered: no retry, so no version is asked too often.
		{"version/discover-retry", "connects again", "2026-07-28", store.Stdio, 0, func(b *rb) {
			for i := 1; i <= 3; i++ {
				b.c(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, i))
				b.s(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"supportedVersions":["2026-07-28"]}}`, i))
			}
		}},
		{"version/discover-retry", "kept", "2026-07-28", store.Stdio, 0, func(b *rb) {
			b.c(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2027-01-01"}}}`)
			b.s(`{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"x","data":{"supported":["2026-07-28"]}}}`)
			b.c(`{"jsonrpc":"2.0","id":2,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`)
		}},
		{"pagination/empty-cursor-legacy", "asked again", "2025-11-25", store.Stdio, 1, func(b *rb) {
			b.c(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
			b.s(`{"jsonrpc":"2.0","id":1,"result":{"tools":[],"nextCursor":""}}`)
			b.c(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":""}}`)
		}},
		{"pagination/empty-cursor-legacy", "modern asks again", "2026-07-28", store.Stdio, 0, func(b *rb) {
			b.c(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
			b.s(`{"jsonrpc":"2.0","id":1,"result":{"tools":[],"nextCursor":""}}`)
			b.c(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":""}}`)
		}},
		{"pagination/empty-cursor-modern", "ended at it", "2026-07-28", store.Stdio, 1, func(b *rb) {
			b.c(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
			b.s(`{"jsonrpc":"2.0","id":1,"result":{"tools":[],"nextCursor":""}}`)
			b.c(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t"}}`)
		}},
		{"pagination/empty-cursor-modern", "asks again", "2026-07-28", store.Stdio, 0, func(b *rb) {
			b.c(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
			b.s(`{"jsonrpc":"2.0","id":1,"result":{"tools":[],"nextCursor":""}}`)
			b.c(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":""}}`)
			b.s(`{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}`)
		}},
		{"pagination/empty-cursor-modern", "repeated empty cursor ends", "2026-07-28", store.Stdio, 0, func(b *rb) {
			// Asked with "" and answered "" again: the cursor it sent, which
			// pagination/repeated-cursor says ends the list.
			b.c(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
			b.s(`{"jsonrpc":"2.0","id":1,"result":{"tools":[],"nextCursor":""}}`)
			b.c(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":""}}`)
			b.s(`{"jsonrpc":"2.0","id":2,"result":{"tools":[],"nextCursor":""}}`)
		}},
		{"pagination/empty-cursor-modern", "legacy ends there", "2025-11-25", store.Stdio, 0, func(b *rb) {
			b.c(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
			b.s(`{"jsonrpc":"2.0","id":1,"result":{"tools":[],"nextCursor":""}}`)
		}},
		{"pagination/repeated-cursor", "loop", "2026-07-28", store.Stdio, 1, func(b *rb) {
			b.c(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"a"}}`)
			b.s(`{"jsonrpc":"2.0","id":1,"result":{"tools":[],"nextCursor":"a"}}`)
			b.c(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":"a"}}`)
		}},
		{"pagination/repeated-cursor", "pages", "2025-06-18", store.Stdio, 0, func(b *rb) {
			b.c(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
			b.s(`{"jsonrpc":"2.0","id":1,"result":{"tools":[],"nextCursor":"a"}}`)
			b.c(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":"a"}}`)
			b.s(`{"jsonrpc":"2.0","id":2,"result":{"tools":[],"nextCursor":"b"}}`)
			b.c(`{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"cursor":"b"}}`)
		}},
		{"tools/header-mismatch-retry", "retried without list", "2026-07-28", store.Stdio, 1, func(b *rb) {
			b.c(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}`)
			b.s(`{"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"x"}}`)
			b.c(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t"}}`)
		}},
		{"tools/header-mismatch-retry", "retried twice", "2026-07-28", store.Stdio, 1, func(b *rb) {
			b.c(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}`)
			b.s(`{"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"x"}}`)
			b.c(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
			b.c(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"t"}}`)
			b.s(`{"jsonrpc":"2.0","id":3,"error":{"code":-32020,"message":"x"}}`)
			b.c(`{"jsonrpc":"2.0","id":4,"method":"tools/list"}`)
			b.c(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"t"}}`)
		}},
		{"tools/header-mismatch-retry", "kept", "2026-07-28", store.Stdio, 0, func(b *rb) {
			b.c(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}`)
			b.s(`{"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"x"}}`)
			b.c(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
			b.c(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"t"}}`)
			b.s(`{"jsonrpc":"2.0","id":3,"result":{}}`)
		}},
		{"listen/declared-kinds", "undeclared", "2026-07-28", store.Stdio, 1, func(b *rb) {
			b.c(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}`)
			b.s(`{"jsonrpc":"2.0","id":1,"result":{"capabilities":{"tools":{"listChanged":true}}}}`)
			b.c(`{"jsonrpc":"2.0","id":2,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true,"promptsListChanged":true}}}`)
		}},
		{"listen/declared-kinds", "declared", "2026-07-28", store.Stdio, 0, func(b *rb) {
			b.c(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}`)
			b.s(`{"jsonrpc":"2.0","id":1,"result":{"capabilities":{"tools":{"listChanged":true}}}}`)
			b.c(`{"jsonrpc":"2.0","id":2,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true,"promptsListChanged":false}}}`)
		}},
		{"listen/one-stream", "duplicated", "2026-07-28", store.Stdio, 1, func(b *rb) {
			b.c(`{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true}}}`)
			b.c(`{"jsonrpc":"2.0","id":2,"method":"subscriptions/listen","params":{"notifications":{"promptsListChanged":true}}}`)
		}},
		{"listen/one-stream", "replaced", "2026-07-28", store.Stdio, 0, func(b *rb) {
			b.c(`{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true}}}`)
			b.c(`{"jsonrpc":"2.0","id":2,"method":"subscriptions/listen","params":{"notifications":{"promptsListChanged":true}}}`)
			b.c(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`)
		}},
		{"listen/replaced-ignored", "acted on", "2026-07-28", store.Stdio, 1, func(b *rb) {
			replaceListen(b, true)
			toolsChanged(b, 1)
			b.c(`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
		}},
		{"listen/replaced-ignored", "ignored", "2026-07-28", store.Stdio, 0, func(b *rb) {
			replaceListen(b, true)
			toolsChanged(b, 1)
			b.c(`{"jsonrpc":"2.0","id":3,"method":"prompts/list"}`)
		}},
		{"listen/replaced-ignored", "current one acted on", "2026-07-28", store.Stdio, 0, func(b *rb) {
			replaceListen(b, false)
			toolsChanged(b, 1)
			toolsChanged(b, 2)
			b.c(`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
		}},
		{"listen/replaced-ignored", "before it was replaced", "2026-07-28", store.Stdio, 0, func(b *rb) {
			b.c(`{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true}}}`)
			toolsChanged(b, 1)
			b.c(`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
			b.c(`{"jsonrpc":"2.0","id":2,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true,"promptsListChanged":true}}}`)
		}},
		{"resume/last-event-id", "stale id", "2025-11-25", http, 1, resumeCase("e1", "e2", 0)},
		{"resume/last-event-id", "no ids", "2025-11-25", http, 1, resumeCase("", "e1", 0)},
		{"resume/last-event-id", "kept", "2025-11-25", http, 0, resumeCase("e2", "e2", 0)},
		{"resume/retry-delay", "too soon", "2025-11-25", http, 1, resumeCase("e2", "e2", 5000)},
		{"resume/retry-delay", "waited", "2025-11-25", http, 0, resumeCase("e2", "e2", 1)},
		{"http/get-stream", "405 loop", "2025-11-25", http, 1, func(b *rb) {
			legacyInit(b, "2025-11-25", nil)
			for range 3 {
				b.open(store.GetStream, "GET", nil, 405)
			}
		}},
		{"http/get-stream", "modern GET", "2026-07-28", http, 1, func(b *rb) { b.open(store.GetStream, "GET", nil, 405) }},
		{"http/get-stream", "after initialize", "2025-11-25", http, 0, func(b *rb) {
			legacyInit(b, "2025-11-25", nil)
			b.open(store.GetStream, "GET", nil, 405)
			b.open(store.GetStream, "GET", nil, 405)
		}},
		{"http/get-stream", "before initialize", "2025-11-25", http, 1, func(b *rb) {
			b.open(store.GetStream, "GET", nil, 200)
			legacyInit(b, "2025-11-25", nil)
		}},
		{"sse/endpoint", "elsewhere", "2024-11-05", store.LegacySSE, 1, sseCase("http://127.0.0.1:1/other?sessionId=1")},
		{"sse/endpoint", "other origin", "2024-11-05", store.LegacySSE, 1, sseCase("http://evil.example/messages?sessionId=1")},
		{"sse/endpoint", "kept", "2024-11-05", store.LegacySSE, 0, sseCase("http://127.0.0.1:1/messages?sessionId=1")},
	}
	broken, kept := map[string]bool{}, map[string]bool{}
	for _, tc := range cases {
		if tc.want > 0 {
			broken[tc.rule] = true
		} else {
			kept[tc.rule] = true
		}
		t.Run(tc.rule+"/"+tc.name, func(t *testing.T) {
			b := newRB(t, tc.rev, tc.tr)
			tc.build(b)
			fs := b.findings(tc.rule)
			if got := len(fs); got != tc.want {
				t.Errorf("findings of %s = %d, want %d: %+v", tc.rule, got, tc.want, fs)
			}
			for _, f := range fs {
				if f.Seq == 0 && f.Stream == 0 || f.Sent == "" || f.Required == "" || f.Section == "" {
					t.Errorf("finding lacks its frame or its words: %+v", f)
				}
			}
		})
	}
	// Every rule has a case that breaks it and one that keeps it.
	for _, r := range Rules() {
		if !broken[r.ID] || !kept[r.ID] {
			t.Errorf("rule %s: a case that breaks it: %t, one that keeps it: %t; want both", r.ID, broken[r.ID], kept[r.ID])
		}
	}
}

// replaceListen has the client open listen 1 (tools) and replace it with
// listen 2 (tools and prompts), cancelling 1 when cancel is set.
func replaceListen(b *rb, cancel bool) {
	b.c(`{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true}}}`)
	b.c(`{"jsonrpc":"2.0","id":2,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true,"promptsListChanged":true}}}`)
	if cancel {
		b.c(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`)
	}
}

// toolsChanged has the server send a tools list_changed tagged with
// listen sub.
func toolsChanged(b *rb, sub int) {
	b.s(fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":%d}}}`, sub))
}

// resumeCase records a POST stream cut after events e1 and e2 (retry
// 2s), resumed at delayMS... with Last-Event-ID sent; lastID "" means the
// cut stream had no event ids.
func resumeCase(lastID, sent string, retryMS int) func(b *rb) {
	return func(b *rb) {
		legacyInit(b, "2025-11-25", nil)
		h := map[string]string{"Mcp-Session-Id": "s1", "MCP-Protocol-Version": "2025-11-25"}
		st := b.open(store.PostStream, "POST", h, 200)
		b.frame(st.ID, c2s, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}`)
		if lastID != "" {
			b.event(st.ID, "e1", retryMS, `{"jsonrpc":"2.0","method":"notifications/progress","params":{}}`)
			if lastID == "e2" {
				b.event(st.ID, "e2", -1, `{"jsonrpc":"2.0","method":"notifications/progress","params":{}}`)
			}
		} else {
			b.event(st.ID, "", -1, `{"jsonrpc":"2.0","method":"notifications/progress","params":{}}`)
		}
		b.rec.Streams[st.ID-1].End, b.rec.Streams[st.ID-1].Closed = store.EndServerClosed, b.off
		h["Last-Event-ID"] = sent
		r := b.open(store.ResumeStream, "GET", h, 200)
		r.ResumesID, r.LastEventID = st.ID, sent
		b.frame(r.ID, s2c, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	}
}

// sseInit records an HTTP+SSE session at 2024-11-05: initialize POSTed,
// answered on the SSE stream, then notifications/initialized POSTed
// with hdr.
func sseInit(hdr map[string]string) func(b *rb) {
	return func(b *rb) {
		g := b.open(store.SSEGetStream, "GET", nil, 200)
		p := b.open(store.PostStream, "POST", nil, 202)
		b.frame(p.ID, c2s, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{}}}`)
		b.frame(g.ID, s2c, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2024-11-05","capabilities":{}}}`)
		p = b.open(store.PostStream, "POST", hdr, 202)
		b.frame(p.ID, c2s, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	}
}

// sseCase records an HTTP+SSE session whose client POSTs to url.
func sseCase(url string) func(b *rb) {
	return func(b *rb) {
		g := b.open(store.SSEGetStream, "GET", nil, 200)
		g.URL = "http://127.0.0.1:1/sse"
		b.off++
		f := store.Frame{SessionID: 1, StreamID: g.ID, Seq: 1, Direction: s2c, SSE: true, Event: "endpoint", Data: []byte("/messages?sessionId=1"), Retry: -1}
		f.Derive(store.SSEGetStream)
		b.rec.Frames = append(b.rec.Frames, f)
		p := b.open(store.PostStream, "POST", nil, 202)
		p.URL = url
		b.frame(p.ID, c2s, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`)
	}
}
