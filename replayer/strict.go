package replayer

import (
	"mime"
	"net/http"
	"strings"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/internal/mcpwire"
)

// strictHTTP checks the client's side of Streamable HTTP against the
// revision the session negotiated, as a strict server would. It returns
// what is wrong, or "" when nothing is.
func (ls *liveSession) strictHTTP(r *http.Request, live jsonrpc.Message) string {
	rev := ls.recording().Session.Revision
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
	case mcpwire.RequestMeta(live.Params).ProtocolVersion != "" || (r.Method != http.MethodPost && mcpwire.IsModern(rev)):
		return ls.strictModern(r, live)
	case rev != "" && rev <= mcpwire.V20250326 && pv != "":
		return "MCP-Protocol-Version must be absent when " + rev + " was negotiated, got " + quote(pv)
	case rev >= mcpwire.V20250618 && pv != rev:
		return "MCP-Protocol-Version must be the negotiated " + rev + " on every request after initialize, got " + quote(pv)
	}
	ls.mu.Lock()
	id := ls.id
	ls.mu.Unlock()
	if id != "" && r.Header.Get("Mcp-Session-Id") != id {
		return "Mcp-Session-Id " + id + " must be sent on every request after initialize"
	}
	return ""
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

func quote(s string) string {
	if s == "" {
		return "none"
	}
	return `"` + s + `"`
}
