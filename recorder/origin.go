package recorder

// Which requests the recording proxy serves: the listener is the user's
// local endpoint, and a web page the user visits can reach it too, by
// renaming its own site to 127.0.0.1 (DNS rebinding). Such a page's
// requests carry its Host and Origin; the proxy refuses them itself,
// since it may add credentials (Header) that the page never had.

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/mcpvcr/mcpvcr/internal/localsite"
)

// refusal says why r is refused as another site's (a foreign Origin or
// Host that AllowOrigins does not name), or "" when r may be served.
func (h *HTTP) refusal(r *http.Request) string {
	if h.allowed("*") {
		return ""
	}
	return localsite.Foreign(r, h.allowedHost, h.allowed)
}

// refuse answers a request from another site with 403 and a plain body
// saying why and how to allow it. Nothing reaches the upstream and
// nothing is recorded: the refusal is the proxy's, not the server's.
func (h *HTTP) refuse(w http.ResponseWriter, r *http.Request, why string) {
	allow := r.Header.Get("Origin")
	if allow == "" {
		allow = "http://" + r.Host
	}
	h.log.Warn("refused a request from another site (DNS rebinding protection); allow it with --allow-origin",
		"refused", why, "method", r.Method, "path", h.red.URL(r.URL.RequestURI()))
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusForbidden)
	fmt.Fprintf(w, "mcpvcr record: refused %s: not this proxy's address (DNS rebinding protection).\n"+
		"To allow it, record with --allow-origin %s\n", why, allow)
}

// allowed reports whether origin is one AllowOrigins names: the same
// scheme and host, and the same port unless the allowed origin names none.
// "*" names every origin.
func (h *HTTP) allowed(origin string) bool {
	o, err := url.Parse(origin)
	if err != nil {
		o = nil
	}
	for _, a := range h.AllowOrigins {
		if a == "*" {
			return true
		}
		u, err := url.Parse(a)
		if o == nil || err != nil || u.Host == "" {
			continue
		}
		if strings.EqualFold(u.Scheme, o.Scheme) && strings.EqualFold(u.Hostname(), o.Hostname()) && (u.Port() == "" || u.Port() == o.Port()) {
			return true
		}
	}
	return false
}

// allowedHost reports whether hostport is the host (and port, if the
// origin names one) of an origin AllowOrigins names.
func (h *HTTP) allowedHost(hostport string) bool {
	host, port := hostport, ""
	if hh, p, err := net.SplitHostPort(hostport); err == nil {
		host, port = hh, p
	}
	for _, a := range h.AllowOrigins {
		u, err := url.Parse(a)
		if err != nil || u.Host == "" {
			continue
		}
		if strings.EqualFold(u.Hostname(), strings.Trim(host, "[]")) && (u.Port() == "" || u.Port() == port) {
			return true
		}
	}
	return false
}
