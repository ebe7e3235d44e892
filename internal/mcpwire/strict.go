package mcpwire

import (
	"encoding/base64"
	"encoding/json"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
)

// StrictHTTP checks the client's side of Streamable HTTP, request r
// carrying live, against rev, the revision the session negotiated, as a
// strict server would (replay --strict). sessionID is the Mcp-Session-Id
// the server issued, "" if none; paramHeaders returns, for a tool, the
// arguments its recorded tools/list answer annotated with x-mcp-header
// and their header names (see ToolParamHeaders), which a 2026-07-28
// tools/call must mirror. It returns what is wrong, or "" when nothing
// is.
func StrictHTTP(r *http.Request, live jsonrpc.Message, rev, sessionID string, paramHeaders func(tool string) map[string]string) string {
	pv := r.Header.Get("MCP-Protocol-Version")
	initialize := r.Method == http.MethodPost && live.Method == "initialize"
	switch {
	case r.Method == http.MethodPost && !accepts(r, "application/json", "text/event-stream"):
		return "Accept must list both application/json and text/event-stream, got " + quote(r.Header.Get("Accept"))
	case r.Method == http.MethodGet && !accepts(r, "text/event-stream"):
		return "Accept must list text/event-stream on GET, got " + quote(r.Header.Get("Accept"))
	case initialize && pv != "":
		return "MCP-Protocol-Version must be absent on initialize, got " + quote(pv)
	case initialize:
		return ""
	case RequestMeta(live.Params).ProtocolVersion != "" || (r.Method != http.MethodPost && IsModern(rev)):
		return strictModern(r, live, paramHeaders)
	case rev != "" && rev <= V20250326 && pv != "":
		return "MCP-Protocol-Version must be absent when " + rev + " was negotiated, got " + quote(pv)
	case rev >= V20250618 && pv != rev:
		return "MCP-Protocol-Version must be the negotiated " + rev + " on every request after initialize, got " + quote(pv)
	}
	if sessionID != "" && r.Header.Get("Mcp-Session-Id") != sessionID {
		return "Mcp-Session-Id " + sessionID + " must be sent on every request after initialize"
	}
	return ""
}

// strictModern checks a 2026-07-28 request as a modern server would: the
// headers mirror the body (MCP-Protocol-Version, Mcp-Method, Mcp-Name and
// the Mcp-Param-* headers of the arguments paramHeaders names), and
// nothing the revision removed is used. It returns what is wrong, or "".
func strictModern(r *http.Request, live jsonrpc.Message, paramHeaders func(tool string) map[string]string) string {
	if r.Method != http.MethodPost {
		return r.Method + " is not part of 2026-07-28 Streamable HTTP (the GET stream and DELETE were removed)"
	}
	if live.Kind != jsonrpc.KindRequest {
		return ""
	}
	meta := RequestMeta(live.Params)
	if meta.ProtocolVersion == "" {
		return "a 2026-07-28 request must carry _meta " + MetaProtocolVersion
	}
	if sid := r.Header.Get("Mcp-Session-Id"); sid != "" {
		return "Mcp-Session-Id " + quote(sid) + " was removed in 2026-07-28"
	}
	switch live.Method {
	case "ping", "logging/setLevel", "initialize", "resources/subscribe", "resources/unsubscribe":
		return live.Method + " was removed in 2026-07-28"
	}
	if got := r.Header.Get("MCP-Protocol-Version"); got != meta.ProtocolVersion {
		return "MCP-Protocol-Version " + quote(got) + " does not mirror _meta protocolVersion " + quote(meta.ProtocolVersion)
	}
	if got := r.Header.Get("Mcp-Method"); got != live.Method {
		return "Mcp-Method " + quote(got) + " does not mirror the method " + quote(live.Method)
	}
	var p struct {
		Name      string                     `json:"name"`
		URI       string                     `json:"uri"`
		Arguments map[string]json.RawMessage `json:"arguments"`
	}
	_ = json.Unmarshal(live.Params, &p)
	want := ""
	switch live.Method {
	case "tools/call", "prompts/get":
		want = p.Name
	case "resources/read":
		want = p.URI
	}
	if want != "" {
		if got := DecodeHeader(r.Header.Get("Mcp-Name")); got != want {
			return "Mcp-Name " + quote(r.Header.Get("Mcp-Name")) + " does not mirror " + quote(want)
		}
	}
	if live.Method == "tools/call" {
		for arg, header := range paramHeaders(p.Name) {
			v, ok := p.Arguments[arg]
			if !ok || string(v) == "null" {
				continue
			}
			if got := r.Header.Get("Mcp-Param-" + header); !sameParam(DecodeHeader(got), v) {
				return "Mcp-Param-" + header + " " + quote(got) + " does not mirror argument " + arg + " = " + string(v)
			}
		}
	}
	return ""
}

// ToolParamHeaders adds to out, from result, a tools/list result, the
// arguments of tool annotated with x-mcp-header and their header names.
// A result that is not a tools/list result adds nothing.
func ToolParamHeaders(result json.RawMessage, tool string, out map[string]string) {
	var res struct {
		Tools []struct {
			Name        string `json:"name"`
			InputSchema struct {
				Properties map[string]struct {
					Header string `json:"x-mcp-header"`
				} `json:"properties"`
			} `json:"inputSchema"`
		} `json:"tools"`
	}
	if json.Unmarshal(result, &res) != nil {
		return
	}
	for _, t := range res.Tools {
		if t.Name != tool {
			continue
		}
		for arg, prop := range t.InputSchema.Properties {
			if prop.Header != "" {
				out[arg] = prop.Header
			}
		}
	}
}

// DecodeHeader undoes the =?base64?…?= sentinel of 2026-07-28 headers.
func DecodeHeader(v string) string {
	if strings.HasPrefix(v, "=?base64?") && strings.HasSuffix(v, "?=") {
		if b, err := base64.StdEncoding.DecodeString(strings.TrimSuffix(strings.TrimPrefix(v, "=?base64?"), "?=")); err == nil {
			return string(b)
		}
	}
	return v
}

// sameParam compares a header value with the JSON argument it mirrors:
// strings as they are, numbers numerically, booleans as true/false.
func sameParam(header string, arg json.RawMessage) bool {
	var v any
	if json.Unmarshal(arg, &v) != nil {
		return false
	}
	switch x := v.(type) {
	case string:
		return header == x
	case bool:
		return header == strconv.FormatBool(x)
	case float64:
		f, err := strconv.ParseFloat(header, 64)
		return err == nil && f == x
	}
	return false
}

// accepts reports whether r's Accept header lists every media type in want.
func accepts(r *http.Request, want ...string) bool {
	var have []string
	for _, v := range r.Header.Values("Accept") {
		for _, part := range strings.Split(v, ",") {
			if mt, _, err := mime.ParseMediaType(strings.TrimSpace(part)); err == nil {
				have = append(have, mt)
			}
		}
	}
	for _, w := range want {
		found := false
		for _, h := range have {
			if h == w || h == "*/*" || (strings.HasSuffix(h, "/*") && strings.HasPrefix(w, strings.TrimSuffix(h, "*"))) {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// quote quotes a header value for a report, "none" for an empty one.
func quote(s string) string {
	if s == "" {
		return "none"
	}
	return `"` + s + `"`
}
