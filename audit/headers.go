package audit

import (
	"encoding/base64"
	"encoding/json"
	"maps"
	"math/big"
	"strings"

	"github.com/mcpvcr/mcpvcr/internal/mcpwire"
	"github.com/mcpvcr/mcpvcr/store"
)

// The header rules of Streamable HTTP: the legacy shape (a session, a
// negotiated version) and the modern one (every request says what it is).

const (
	secLegacyVersion = "docs/specification/2025-11-25/basic/transports.mdx §Protocol Version Header"
	secLegacySession = "docs/specification/2025-11-25/basic/transports.mdx §Session Management"
	secModernHeaders = "docs/specification/2026-07-28/basic/transports/streamable-http.mdx §Request metadata headers"
	secModernSession = "docs/specification/2026-07-28/basic/transports/streamable-http.mdx"
)

var (
	httpOnly   = []store.Transport{store.StreamableHTTP}
	versioned  = []string{mcpwire.V20250618, mcpwire.V20251125}
	legacyRevs = []string{mcpwire.V20241105, mcpwire.V20250326, mcpwire.V20250618, mcpwire.V20251125}
	modernRevs = []string{mcpwire.V20260728}
	allRevs    = mcpwire.Revisions
)

func init() {
	register(
		&Rule{ID: "http/protocol-version-absent-on-initialize", Revisions: versioned, Transports: httpOnly, Level: Warning, Section: secLegacyVersion,
			Description: "MCP-Protocol-Version is not sent on initialize: no version is agreed yet (the specification does not require it either way; a client that sends its newest version there says nothing useful).",
			Check:       checkVersionOnInitialize},
		&Rule{ID: "http/protocol-version-negotiated", Revisions: []string{mcpwire.V20250326, mcpwire.V20250618, mcpwire.V20251125}, Transports: httpOnly, Level: Error, Section: secLegacyVersion,
			Description: "MCP-Protocol-Version is the version initialize returned, on every later request (POST, GET, DELETE); when 2025-03-26 was negotiated, a header sent anyway still names it.",
			Check:       checkVersionNegotiated},
		&Rule{ID: "http/protocol-version-not-before-2025-06-18", Revisions: []string{mcpwire.V20241105, mcpwire.V20250326}, Transports: []store.Transport{store.StreamableHTTP, store.LegacySSE}, Level: Warning, Section: secLegacyVersion,
			Description: "No MCP-Protocol-Version when 2025-03-26 or 2024-11-05 was negotiated, over Streamable HTTP or HTTP+SSE: the header did not exist then (no revision forbids it, so it is a warning; at 2025-03-26 one naming another version breaks http/protocol-version-negotiated).",
			Check:       checkNoVersionHeader},
		&Rule{ID: "http/session-id", Revisions: []string{mcpwire.V20250326, mcpwire.V20250618, mcpwire.V20251125}, Transports: httpOnly, Level: Error, Section: secLegacySession,
			Description: "Mcp-Session-Id, as the server issued it with the initialize result, on every later request.",
			Check:       checkSessionID},
		&Rule{ID: "http/modern-protocol-version", Revisions: modernRevs, Transports: httpOnly, Level: Error, Section: secModernHeaders,
			Description: "MCP-Protocol-Version on every POST equals the version in the request's _meta (io.modelcontextprotocol/protocolVersion).",
			Check:       checkModernVersion},
		&Rule{ID: "http/mcp-method", Revisions: modernRevs, Transports: httpOnly, Level: Error, Section: secModernHeaders,
			Description: "Mcp-Method on every POSTed request equals its method.",
			Check:       checkMcpMethod},
		&Rule{ID: "http/mcp-name", Revisions: modernRevs, Transports: httpOnly, Level: Error, Section: secModernHeaders,
			Description: "Mcp-Name on tools/call and prompts/get (params.name) and resources/read (params.uri), encoded as header values are.",
			Check:       checkMcpName},
		&Rule{ID: "http/mcp-param", Revisions: modernRevs, Transports: httpOnly, Level: Error, Section: secModernHeaders,
			Description: "Mcp-Param-{Name} mirrors every argument the listed tool annotates with x-mcp-header: absent or null omits it, an empty string is an empty header, integers as decimals, booleans as true or false.",
			Check:       checkMcpParam},
		&Rule{ID: "http/mcp-param-integer-range", Revisions: modernRevs, Transports: httpOnly, Level: Error, Section: secModernHeaders,
			Description: "A call whose x-mcp-header integer argument is outside ±(2^53−1) is refused before sending: no such call goes out.",
			Check:       checkParamRange},
		&Rule{ID: "http/header-encoding", Revisions: modernRevs, Transports: httpOnly, Level: Error, Section: secModernHeaders,
			Description: "A header value outside visible ASCII, space and tab, with leading or trailing whitespace, or that looks like =?base64?…?=, is sent as =?base64?{standard Base64 of its UTF-8}?=.",
			Check:       checkHeaderEncoding},
		&Rule{ID: "http/no-session-id", Revisions: modernRevs, Transports: httpOnly, Level: Error, Section: secModernSession,
			Description: "No Mcp-Session-Id in 2026-07-28: there are no protocol sessions.",
			Check:       checkNoSessionID},
	)
}

// initialize returns the client's initialize request and its answer.
func (v *view) initialize() (req, resp *msg) {
	for _, m := range v.msgs {
		if m.c2s() && m.isRequest() && m.Method == "initialize" {
			return m, v.answer(m)
		}
	}
	return nil, nil
}

// negotiated returns the version the initialize result carries.
func negotiated(resp *msg) string {
	if resp == nil {
		return ""
	}
	return str(field(resp.Result, "protocolVersion"))
}

// afterInit returns the client streams opened after the one that carried
// initialize, nil without an answered initialize.
func (v *view) afterInit() ([]*store.Stream, *msg, *msg) {
	req, resp := v.initialize()
	if req == nil || resp == nil || resp.Error != nil {
		return nil, req, resp
	}
	var out []*store.Stream
	seen := false
	for _, st := range v.clientStreams() {
		if st.ID == req.st.ID {
			seen = true
			continue
		}
		if seen {
			out = append(out, st)
		}
	}
	return out, req, resp
}

// at returns a finding for stream st: at its first c2s frame, else at
// the stream.
func (v *view) at(r *Rule, st *store.Stream, sent, required string) Finding {
	for i := range v.rec.Frames {
		f := &v.rec.Frames[i]
		if f.StreamID == st.ID && f.Direction == store.ClientToServer {
			return v.finding(r, f, sent, required)
		}
	}
	return v.streamFinding(r, st, sent, required)
}

func what(st *store.Stream, v *view) string {
	if f := v.firstFrame(st); f != nil && f.Direction == store.ClientToServer && f.Method != "" {
		return st.Method + " " + f.Method
	}
	return st.Method
}

func checkVersionOnInitialize(r *Rule, v *view) []Finding {
	req, _ := v.initialize()
	if req == nil || req.st == nil {
		return nil
	}
	if h, ok := header(req.st.RequestHeader, "MCP-Protocol-Version"); ok {
		return []Finding{v.finding(r, req.f, "initialize with MCP-Protocol-Version: "+quote(h, true), "no MCP-Protocol-Version on initialize")}
	}
	return nil
}

func checkVersionNegotiated(r *Rule, v *view) []Finding {
	sts, _, resp := v.afterInit()
	want := negotiated(resp)
	if want == "" {
		return nil
	}
	var out []Finding
	for _, st := range sts {
		h, ok := header(st.RequestHeader, "MCP-Protocol-Version")
		if want <= mcpwire.V20250326 && !ok {
			continue // the header did not exist: absent is right
		}
		if !ok || h != want {
			out = append(out, v.at(r, st, what(st, v)+" with MCP-Protocol-Version: "+quote(h, ok), "MCP-Protocol-Version: "+want+", the version initialize returned"))
		}
	}
	return out
}

func checkNoVersionHeader(r *Rule, v *view) []Finding {
	sts, req, resp := v.afterInit()
	if req == nil {
		return nil
	}
	if want := negotiated(resp); want > mcpwire.V20250326 {
		return nil
	}
	var out []Finding
	for _, st := range append([]*store.Stream{req.st}, sts...) {
		if h, ok := header(st.RequestHeader, "MCP-Protocol-Version"); ok {
			out = append(out, v.at(r, st, what(st, v)+" with MCP-Protocol-Version: "+quote(h, true), "no MCP-Protocol-Version: "+negotiated(resp)+" was negotiated"))
		}
	}
	return out
}

func checkSessionID(r *Rule, v *view) []Finding {
	sts, req, resp := v.afterInit()
	if req == nil || resp == nil || resp.st == nil {
		return nil
	}
	id, ok := header(resp.st.ResponseHeader, "Mcp-Session-Id")
	if !ok || id == "" {
		return nil
	}
	var out []Finding
	for _, st := range sts {
		if h, ok := header(st.RequestHeader, "Mcp-Session-Id"); !ok || h != id {
			out = append(out, v.at(r, st, what(st, v)+" with Mcp-Session-Id: "+quote(h, ok), "Mcp-Session-Id: "+id+", as the initialize answer issued it"))
		}
	}
	return out
}

// posts calls fn for every client request POSTed on its own stream.
func (v *view) posts(fn func(m *msg, st *store.Stream)) {
	for _, m := range v.msgs {
		if m.c2s() && m.isRequest() && m.st != nil && (m.st.Kind == store.PostStream || m.st.Kind == store.ListenStream) && m.st.Method == "POST" {
			fn(m, m.st)
		}
	}
}

func checkModernVersion(r *Rule, v *view) []Finding {
	var out []Finding
	v.posts(func(m *msg, st *store.Stream) {
		want := mcpwire.RequestMeta(m.Params).ProtocolVersion
		if h, ok := header(st.RequestHeader, "MCP-Protocol-Version"); !ok || h != want {
			out = append(out, v.finding(r, m.f, m.Method+" with MCP-Protocol-Version: "+quote(h, ok), "MCP-Protocol-Version: "+quote(want, want != "")+", the version in the request's _meta"))
		}
	})
	return out
}

func checkMcpMethod(r *Rule, v *view) []Finding {
	var out []Finding
	v.posts(func(m *msg, st *store.Stream) {
		if h, ok := header(st.RequestHeader, "Mcp-Method"); !ok || h != m.Method {
			out = append(out, v.finding(r, m.f, m.Method+" with Mcp-Method: "+quote(h, ok), "Mcp-Method: "+m.Method))
		}
	})
	return out
}

// named returns the value Mcp-Name mirrors for m, and whether m has one.
func named(m *msg) (string, bool) {
	switch m.Method {
	case "tools/call", "prompts/get":
		return str(field(m.Params, "name")), true
	case "resources/read":
		return str(field(m.Params, "uri")), true
	}
	return "", false
}

func checkMcpName(r *Rule, v *view) []Finding {
	var out []Finding
	v.posts(func(m *msg, st *store.Stream) {
		want, ok := named(m)
		if !ok {
			return
		}
		if h, hok := header(st.RequestHeader, "Mcp-Name"); !hok || mcpwire.DecodeHeader(h) != want {
			out = append(out, v.finding(r, m.f, m.Method+" with Mcp-Name: "+quote(h, hok), "Mcp-Name: "+encodeHeader(want)))
		}
	})
	return out
}

// annotation is one x-mcp-header of a listed tool.
type annotation struct {
	Arg, Header, Type string
}

// annotations returns the valid x-mcp-header annotations of each tool the
// server listed before seq, by tool name. A tool with an invalid one is
// left out: the client must not call it as if it were valid.
func (v *view) annotations(seq int64) map[string][]annotation {
	if !v.listedDone {
		v.listedDone = true
		cur := map[string][]annotation{}
		for _, m := range v.msgs {
			if m.c2s() || m.Result == nil {
				continue
			}
			if req := v.request(m); req == nil || req.Method != "tools/list" {
				continue
			}
			next := maps.Clone(cur)
			listTools(m.Result, next)
			v.listed = append(v.listed, listing{m.f.Seq, next})
			cur = next
		}
	}
	var out map[string][]annotation
	for _, l := range v.listed {
		if l.seq >= seq {
			break
		}
		out = l.tools
	}
	return out
}

// listTools adds the annotated tools of a tools/list result to into.
func listTools(result json.RawMessage, into map[string][]annotation) {
	var res struct {
		Tools []struct {
			Name        string `json:"name"`
			InputSchema struct {
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"inputSchema"`
		} `json:"tools"`
	}
	if json.Unmarshal(result, &res) != nil {
		return
	}
	for _, t := range res.Tools {
		var as []annotation
		valid, seen := true, map[string]bool{}
		for arg, raw := range t.InputSchema.Properties {
			var p struct {
				Type   json.RawMessage `json:"type"`
				Header *string         `json:"x-mcp-header"`
			}
			if json.Unmarshal(raw, &p) != nil || p.Header == nil {
				continue
			}
			typ := str(p.Type)
			h := *p.Header
			if !isToken(h) || seen[strings.ToLower(h)] || (typ != "string" && typ != "integer" && typ != "boolean") {
				valid = false
			}
			seen[strings.ToLower(h)] = true
			as = append(as, annotation{arg, h, typ})
		}
		if valid && len(as) > 0 {
			into[t.Name] = as
		} else {
			delete(into, t.Name)
		}
	}
}

// isToken reports whether s is a non-empty RFC 9110 token.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

const maxSafe = 1<<53 - 1

// headerValue renders an argument as its Mcp-Param value, ok false for
// absent or null, inRange false for an integer beyond ±(2^53−1).
func headerValue(raw json.RawMessage, typ string) (val string, ok, inRange bool) {
	if raw == nil || string(raw) == "null" {
		return "", false, true
	}
	switch typ {
	case "string":
		return str(raw), true, true
	case "integer":
		n, _, err := big.ParseFloat(string(raw), 10, 200, big.ToNearestEven)
		if err != nil {
			return string(raw), true, true
		}
		i, _ := n.Int(nil)
		return i.String(), true, i.IsInt64() && i.Int64() <= maxSafe && i.Int64() >= -maxSafe
	}
	return string(raw), true, true
}

func checkMcpParam(r *Rule, v *view) []Finding {
	var out []Finding
	v.posts(func(m *msg, st *store.Stream) {
		if m.Method != "tools/call" {
			return
		}
		name := str(field(m.Params, "name"))
		args := field(m.Params, "arguments")
		for _, a := range v.annotations(m.f.Seq)[name] {
			want, present, _ := headerValue(field(args, a.Arg), a.Type)
			h, hok := header(st.RequestHeader, "Mcp-Param-"+a.Header)
			switch {
			case !present && hok:
				out = append(out, v.finding(r, m.f, "tools/call "+name+" with Mcp-Param-"+a.Header+": "+quote(h, true), "no Mcp-Param-"+a.Header+": argument "+a.Arg+" is absent or null"))
			case present && (!hok || !sameParam(mcpwire.DecodeHeader(h), want, a.Type)):
				out = append(out, v.finding(r, m.f, "tools/call "+name+" with Mcp-Param-"+a.Header+": "+quote(h, hok), "Mcp-Param-"+a.Header+": "+encodeHeader(want)+", mirroring argument "+a.Arg))
			}
		}
	})
	return out
}

// sameParam compares a decoded header with the argument's rendering:
// integers numerically, everything else exactly.
func sameParam(got, want, typ string) bool {
	if typ == "integer" {
		g, _, err1 := big.ParseFloat(got, 10, 200, big.ToNearestEven)
		w, _, err2 := big.ParseFloat(want, 10, 200, big.ToNearestEven)
		return err1 == nil && err2 == nil && g.Cmp(w) == 0
	}
	return got == want
}

func checkParamRange(r *Rule, v *view) []Finding {
	var out []Finding
	v.posts(func(m *msg, _ *store.Stream) {
		if m.Method != "tools/call" {
			return
		}
		name := str(field(m.Params, "name"))
		for _, a := range v.annotations(m.f.Seq)[name] {
			if a.Type != "integer" {
				continue
			}
			raw := field(field(m.Params, "arguments"), a.Arg)
			if _, ok, in := headerValue(raw, a.Type); ok && !in {
				out = append(out, v.finding(r, m.f, "tools/call "+name+" sent with "+a.Arg+" = "+string(raw), "no call: an x-mcp-header integer beyond ±(2^53−1) is refused before sending"))
			}
		}
	})
	return out
}

// needsEncoding reports whether a header value must go as the sentinel.
func needsEncoding(s string) bool {
	if s == "" {
		return false
	}
	if s != strings.TrimSpace(s) || looksEncoded(s) {
		return true
	}
	for _, c := range []byte(s) {
		if (c < 0x20 && c != '\t') || c > 0x7e {
			return true
		}
	}
	return false
}

func looksEncoded(s string) bool {
	return strings.HasPrefix(s, "=?base64?") && strings.HasSuffix(s, "?=")
}

// encodeHeader renders s as a 2026-07-28 header value.
func encodeHeader(s string) string {
	if needsEncoding(s) {
		return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?="
	}
	return s
}

func checkHeaderEncoding(r *Rule, v *view) []Finding {
	var out []Finding
	v.posts(func(m *msg, st *store.Stream) {
		check := func(name, value string) {
			h, ok := header(st.RequestHeader, name)
			if ok && needsEncoding(value) && h != encodeHeader(value) && mcpwire.DecodeHeader(h) == h {
				out = append(out, v.finding(r, m.f, m.Method+" with "+name+": "+quote(h, true), name+": "+encodeHeader(value)))
			}
		}
		if want, ok := named(m); ok {
			check("Mcp-Name", want)
		}
		if m.Method == "tools/call" {
			args := field(m.Params, "arguments")
			for _, a := range v.annotations(m.f.Seq)[str(field(m.Params, "name"))] {
				if val, ok, _ := headerValue(field(args, a.Arg), a.Type); ok {
					check("Mcp-Param-"+a.Header, val)
				}
			}
		}
	})
	return out
}

func checkNoSessionID(r *Rule, v *view) []Finding {
	var out []Finding
	for _, st := range v.clientStreams() {
		if h, ok := header(st.RequestHeader, "Mcp-Session-Id"); ok {
			out = append(out, v.at(r, st, what(st, v)+" with Mcp-Session-Id: "+quote(h, true), "no Mcp-Session-Id: 2026-07-28 has no sessions"))
		}
	}
	return out
}
