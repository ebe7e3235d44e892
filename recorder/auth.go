package recorder

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/mcpvcr/mcpvcr/internal/authwire"
	"github.com/mcpvcr/mcpvcr/store"
)

// OAuth through the recorder.
//
// A client checks that the protected-resource metadata names the URL it
// talks to, and sends that URL as the resource it wants a token for. So
// the recorder rewrites, in what reaches the client, resource_metadata in
// WWW-Authenticate and resource in the metadata to name the proxy, and
// maps the resource parameter of authorization and token requests back
// to the upstream's. Unless AuthDirect is set it also fronts the
// authorization servers: the metadata names them as paths of the proxy
// (authwire.FrontPrefix), their metadata, registration and token
// exchanges pass through the proxy and are recorded, and the
// browser-facing authorization endpoint is answered with a redirect to
// the real one (the login page itself is never proxied).

// Pseudo-headers that an exchange stream's recorded headers carry beside
// the real ones, so that the recording keeps both what the client sent or
// got and what mcpvcr forwarded: the real URL a fronted request went to,
// the resource it asked for there, and the values rewritten in the answer
// the client got. They never go on the wire.
const (
	ForwardedToHeader       = "Mcpvcr-Forwarded-To"
	ForwardedResourceHeader = "Mcpvcr-Forwarded-Resource"
	RewrittenHeader         = "Mcpvcr-Rewritten"
)

// authExchange is what a plain HTTP exchange needs beyond exchange.
type authExchange struct {
	// origin is the proxy as the client addressed it (http://host).
	origin string
	// path is the client's request path.
	path string
	// target is the real URL of a request to a fronted authorization
	// server; nil for a request that goes to the upstream's origin.
	target *url.URL
	// frontID is the fronted server a metadata request is for.
	frontID string
}

// frontAS is a fronted authorization server.
type frontAS struct {
	issuer    string
	endpoints map[string]string // metadata field -> real URL
}

// serveExchange forwards and records a plain HTTP exchange: OAuth
// metadata, registration, token, or the authorization redirect.
func (h *HTTP) serveExchange(w http.ResponseWriter, r *http.Request, body []byte) {
	ctx := context.WithoutCancel(r.Context())
	hs := h.exchangeSession(ctx)
	st := &store.Stream{
		Kind:          store.HTTPStream,
		Method:        r.Method,
		URL:           h.red.URL(r.URL.RequestURI()),
		RequestHeader: h.red.Header(r.Header),
	}
	if st.RequestHeader == nil {
		st.RequestHeader = http.Header{}
	}
	ax := &authExchange{origin: "http://" + r.Host, path: r.URL.Path}
	x := &exchange{hs: hs, st: st, reqIDs: map[string]bool{}, reqBody: body, host: r.Host, client: r.Context(), auth: ax}
	hs.openStream(ctx, st)
	if len(body) > 0 {
		hs.append(ctx, st, store.ClientToServer, &store.Frame{Raw: h.red.Body(r.Header.Get("Content-Type"), body)})
	}
	if f, ok := authwire.ParseFront(r.URL.Path); ok {
		h.mu.Lock()
		as := h.fronts[f.ID]
		h.mu.Unlock()
		var real string
		if as != nil && f.Endpoint != "" {
			real = as.endpoints[f.Endpoint]
		}
		switch {
		case as == nil || (f.Endpoint != "" && real == ""):
			h.refuseExchange(ctx, w, x, fmt.Sprintf("mcpvcr: no authorization server %s known to this proxy; the client must fetch the protected-resource metadata and the authorization-server metadata through it first", r.URL.Path))
			return
		case f.Endpoint == "authorization_endpoint":
			h.authorizeRedirect(ctx, w, r, x, real)
			return
		case f.Endpoint != "":
			ax.target, _ = url.Parse(real)
		default:
			mu, err := f.MetadataURL(as.issuer)
			if err != nil {
				h.refuseExchange(ctx, w, x, "mcpvcr: issuer "+as.issuer+" is not a URL")
				return
			}
			ax.target, _ = url.Parse(mu)
			ax.frontID = f.ID
		}
		if ax.target == nil {
			h.refuseExchange(ctx, w, x, "mcpvcr: endpoint "+real+" is not a URL")
			return
		}
		// What was forwarded, beside what the client sent (the stream's
		// fields are all written again when it closes).
		st.RequestHeader.Set(ForwardedToHeader, h.red.URL(ax.target.String()))
		if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == "application/x-www-form-urlencoded" {
			mapped := ""
			body = []byte(authwire.MapForm(string(body), "resource", func(v string) string {
				mapped = h.upstreamResource(v, ax.origin)
				return mapped
			}))
			if mapped != "" {
				st.RequestHeader.Set(ForwardedResourceHeader, mapped)
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			r.ContentLength = int64(len(body))
		}
	}
	r = r.WithContext(context.WithValue(r.Context(), exchangeKey{}, x))
	h.proxy.ServeHTTP(w, r)
}

// authorizeRedirect answers the browser's visit to a fronted
// authorization endpoint with a redirect to the real one, resource
// mapped to the upstream's.
func (h *HTTP) authorizeRedirect(ctx context.Context, w http.ResponseWriter, r *http.Request, x *exchange, real string) {
	q := authwire.MapForm(r.URL.RawQuery, "resource", func(v string) string { return h.upstreamResource(v, x.auth.origin) })
	loc := real
	if q != "" {
		if strings.Contains(loc, "?") {
			loc += "&" + q
		} else {
			loc += "?" + q
		}
	}
	w.Header().Set("Location", loc)
	w.WriteHeader(http.StatusFound)
	x.st.Status = http.StatusFound
	x.st.ResponseHeader = http.Header{"Location": {h.red.URL(loc)}}
	x.hs.closeStream(ctx, x.st, store.EndComplete, nil)
}

// refuseExchange answers 404 with an OAuth error body naming what is
// missing, and records it.
func (h *HTTP) refuseExchange(ctx context.Context, w http.ResponseWriter, x *exchange, why string) {
	h.log.Warn("refused an OAuth request", "why", why)
	body, _ := json.Marshal(map[string]string{"error": "invalid_request", "error_description": why})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusNotFound)
	_, _ = w.Write(body)
	x.st.Status = http.StatusNotFound
	x.st.ResponseHeader = w.Header().Clone()
	x.hs.append(ctx, x.st, store.ServerToClient, &store.Frame{Raw: body})
	x.hs.closeStream(ctx, x.st, store.EndComplete, nil)
}

// upstreamResource maps a resource the client names (the proxy's URL, as
// the rewritten metadata told it) back to the upstream's.
func (h *HTTP) upstreamResource(v, origin string) string {
	h.mu.Lock()
	real, ok := h.resources[v]
	h.mu.Unlock()
	if ok {
		return real
	}
	if authwire.Origin(v) == origin {
		return authwire.Rebase(v, authwire.Origin(h.Upstream.String()))
	}
	return v
}

// exchangeSession returns the session a plain HTTP exchange belongs to:
// the one last refused for want of authorization, else the latest
// conversation, else a new session that the client's first MCP request
// will join.
func (h *HTTP) exchangeSession(ctx context.Context) *httpSession {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.lastRefused != nil {
		return h.lastRefused
	}
	return h.latest(ctx)
}

// exchangeResponse records the answer to a plain HTTP exchange and
// rewrites, for the client, the metadata documents: the resource and the
// fronted authorization servers.
func (h *HTTP) exchangeResponse(resp *http.Response, x *exchange) error {
	ctx := context.WithoutCancel(resp.Request.Context())
	x.st.Status = resp.StatusCode
	x.st.ResponseHeader = h.red.Header(resp.Header)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return fmt.Errorf("read the answer to %s: %w", x.auth.path, err)
	}
	if len(body) > 0 {
		x.hs.append(ctx, x.st, store.ServerToClient, &store.Frame{Raw: h.red.Body(resp.Header.Get("Content-Type"), body)})
	}
	out := body
	if resp.StatusCode == http.StatusOK {
		switch {
		case authwire.IsResourceMetadata(x.auth.path):
			nb, md, err := authwire.RewriteResourceMetadata(body, x.auth.origin, !h.AuthDirect)
			if err == nil {
				out = nb
				h.learnResource(md)
				rw := []string{fmt.Sprintf("resource=%q", md.ClientResource)}
				for _, iss := range md.Issuers {
					if !h.AuthDirect {
						rw = append(rw, fmt.Sprintf("authorization_servers=%q", authwire.FrontIssuer(x.auth.origin, iss)))
					}
				}
				x.st.ResponseHeader.Set(RewrittenHeader, strings.Join(rw, ", "))
			}
		case x.auth.frontID != "":
			h.mu.Lock()
			as := h.fronts[x.auth.frontID]
			h.mu.Unlock()
			fi := authwire.FrontIssuer(x.auth.origin, as.issuer)
			nb, eps, err := authwire.RewriteAuthServerMetadata(body, fi)
			if err == nil {
				out = nb
				rw := []string{fmt.Sprintf("issuer=%q", fi)}
				for _, ep := range authwire.Endpoints {
					if eps[ep] != "" {
						rw = append(rw, fmt.Sprintf("%s=%q", ep, fi+"/"+ep))
					}
				}
				x.st.ResponseHeader.Set(RewrittenHeader, strings.Join(rw, ", "))
				h.mu.Lock()
				for k, v := range eps {
					as.endpoints[k] = v
				}
				h.mu.Unlock()
			}
		}
	}
	resp.Body = io.NopCloser(bytes.NewReader(out))
	resp.ContentLength = int64(len(out))
	if resp.Header.Get("Content-Length") != "" {
		resp.Header.Set("Content-Length", strconv.Itoa(len(out)))
	}
	x.hs.closeStream(ctx, x.st, store.EndComplete, nil)
	return nil
}

// learnResource remembers what a protected-resource metadata document
// named: the resource mapping and, when fronting, its authorization
// servers.
func (h *HTTP) learnResource(md authwire.ResourceMetadata) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if md.ClientResource != "" && md.Resource != "" {
		h.resources[md.ClientResource] = md.Resource
	}
	if h.AuthDirect {
		return
	}
	for _, iss := range md.Issuers {
		id := authwire.FrontID(iss)
		if h.fronts[id] == nil {
			h.fronts[id] = &frontAS{issuer: iss, endpoints: map[string]string{}}
		}
	}
}

// mcpResponse notes, for an MCP exchange, whether the server refused it
// for want of authorization, and rewrites resource_metadata in
// WWW-Authenticate to name the proxy. The recorded headers keep the
// upstream's value.
func (h *HTTP) mcpResponse(resp *http.Response, x *exchange) {
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		x.hs.mu.Lock()
		x.hs.refused = true
		x.hs.mu.Unlock()
		h.mu.Lock()
		h.lastRefused = x.hs
		h.mu.Unlock()
	case resp.StatusCode < 300:
		x.hs.mu.Lock()
		x.hs.answered = true
		x.hs.mu.Unlock()
	}
	if vs := resp.Header.Values("WWW-Authenticate"); len(vs) > 0 {
		resp.Header["Www-Authenticate"] = authwire.RewriteChallenges(vs, "http://"+x.host)
	}
}

// joinable reports whether an initialize without a session id continues
// hs rather than starting a conversation: hs has had no MCP answer and
// either was refused for want of authorization (the client retries with
// a token) or holds nothing but OAuth exchanges.
func (hs *httpSession) joinable() bool {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return !hs.answered && (hs.refused || hs.mcp == 0)
}
