package recorder

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/mcpvcr/mcpvcr/internal/authwire"
)

// pathRefusal says why r is not forwarded, or "". CONNECT and TRACE are
// refused, and so is a path that is not clean ("/mcp/../admin",
// "//other.example/x", empty or "." segments, encoded or not). When the
// recorder adds Header's credential to what it forwards, it forwards only
// the MCP endpoint (Upstream's path, or "/" for it), the HTTP+SSE message
// endpoints the server announced, and the OAuth paths it fronts (metadata
// under /.well-known/, the fronted authorization servers, /authorize,
// /token, /register): it must not lend the credential to any other path
// of the upstream's origin (an admin page). Without Header, another clean
// path goes through, recorded under the URL it went to (a client using
// /mcp where --upstream named another path).
func (h *HTTP) pathRefusal(r *http.Request) string {
	switch r.Method {
	case http.MethodConnect, http.MethodTrace:
		return "method " + r.Method
	}
	p := r.URL.Path
	if p == "" || p == "/" {
		return ""
	}
	if !cleanPath(p) || r.URL.RawPath != "" && !cleanPath(strings.ReplaceAll(r.URL.RawPath, "%2F", "/")) {
		return "path " + r.URL.EscapedPath() + " (not a clean path)"
	}
	if len(h.Header) == 0 || samePath(p, h.Upstream.Path) || authwire.IsExchange(p) {
		return ""
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for uri := range h.byEndpoint {
		if u, err := url.ParseRequestURI(uri); err == nil && u.Path == p {
			return ""
		}
	}
	return "path " + r.URL.EscapedPath()
}

// cleanPath reports whether p is an absolute path without empty, "." or
// ".." segments (a trailing '/' allowed).
func cleanPath(p string) bool {
	if !strings.HasPrefix(p, "/") {
		return false
	}
	segs := strings.Split(p[1:], "/")
	for i, s := range segs {
		if s == "." || s == ".." || s == "" && i != len(segs)-1 || strings.ContainsRune(s, '\\') {
			return false
		}
	}
	return true
}

// samePath reports whether a request path names the upstream's path,
// with or without a trailing '/'.
func samePath(p, upstream string) bool {
	if upstream == "" {
		upstream = "/"
	}
	return p == upstream || strings.TrimSuffix(p, "/") == strings.TrimSuffix(upstream, "/") && strings.TrimSuffix(p, "/") != ""
}

// refusePath answers a request pathRefusal refused: 405 for a method, 404
// for a path, with a plain body saying why. Nothing reaches the upstream
// and nothing is recorded.
func (h *HTTP) refusePath(w http.ResponseWriter, r *http.Request, why string) {
	h.log.Warn("refused a request that is not MCP or the OAuth it fronts", "refused", why, "method", r.Method)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	code := http.StatusNotFound
	if strings.HasPrefix(why, "method ") {
		w.Header().Set("Allow", "GET, POST, DELETE, OPTIONS")
		code = http.StatusMethodNotAllowed
	}
	w.WriteHeader(code)
	up := h.Upstream.Path
	if up == "" {
		up = "/"
	}
	fmt.Fprintf(w, "mcpvcr record: refused %s: the recorder forwards only the MCP endpoint %s and the OAuth paths it fronts.\n", why, up)
}
