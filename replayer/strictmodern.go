package replayer

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/internal/mcpwire"
	"github.com/mcpvcr/mcpvcr/store"
)

// HeaderMismatchCode is the 2026-07-28 error for HTTP headers that do not
// mirror the body.
const HeaderMismatchCode = -32020

// strictModern checks a 2026-07-28 request as a modern server would: the
// headers mirror the body (MCP-Protocol-Version, Mcp-Method, Mcp-Name and
// the Mcp-Param-* headers of arguments annotated with x-mcp-header in the
// recorded tools/list), and nothing the revision removed is used. It
// returns what is wrong, or "".
func (ls *liveSession) strictModern(r *http.Request, live jsonrpc.Message) string {
	if r.Method != http.MethodPost {
		return r.Method + " is not part of 2026-07-28 Streamable HTTP (the GET stream and DELETE were removed)"
	}
	if live.Kind != jsonrpc.KindRequest {
		return ""
	}
	meta := mcpwire.RequestMeta(live.Params)
	if meta.ProtocolVersion == "" {
		return "a 2026-07-28 request must carry _meta " + mcpwire.MetaProtocolVersion
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
		if got := decodeHeader(r.Header.Get("Mcp-Name")); got != want {
			return "Mcp-Name " + quote(r.Header.Get("Mcp-Name")) + " does not mirror " + quote(want)
		}
	}
	if live.Method == "tools/call" {
		for arg, header := range ls.paramHeaders(p.Name) {
			v, ok := p.Arguments[arg]
			if !ok || string(v) == "null" {
				continue
			}
			if got := r.Header.Get("Mcp-Param-" + header); !sameParam(decodeHeader(got), v) {
				return "Mcp-Param-" + header + " " + quote(got) + " does not mirror argument " + arg + " = " + string(v)
			}
		}
	}
	return ""
}

// paramHeaders returns, for a tool of the recorded tools/list answers, the
// arguments annotated with x-mcp-header and their header names.
func (ls *liveSession) paramHeaders(tool string) map[string]string {
	out := map[string]string{}
	rec := ls.recording()
	for i := range rec.Frames {
		f := &rec.Frames[i]
		if f.Direction != store.ServerToClient || f.Kind != store.KindResult {
			continue
		}
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
		if json.Unmarshal(jsonrpc.Parse(f.Data).Result, &res) != nil {
			continue
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
	return out
}

// decodeHeader undoes the =?base64?…?= sentinel of 2026-07-28 headers.
func decodeHeader(v string) string {
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
