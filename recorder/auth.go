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
// (authwire.FrontPrefix), and their metadata, registration, token and
// authorization requests pass through the proxy and are recorded. The
// answer to an authorization request is relayed when it is the
// authorization response itself (a server that approves at once);
// when it wants the user, the browser is sent to the real authorization
// URL (authorizeResponse), so the login page itself is never proxied.
// Which session each exchange belongs to: authlink.go.

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
	// authorize is set for an authorization request.
	authorize *authorizeRequest
	// originMeta: a request for the authorization-server metadata of
	// the upstream's origin (2025-03-26).
	originMeta bool
	// resourceMeta: a request for protected-resource metadata at a
	// custom location a challenge named (learnMetadataAt).
	resourceMeta bool
}

// isExchange reports whether a request to path is a plain HTTP exchange
// rather than MCP: a well-known or fronted path, or a custom location of
// protected-resource metadata that a challenge named.
func (h *HTTP) isExchange(path string) bool {
	return authwire.IsExchange(path) || h.metadataAtPath(path) != ""
}

// metadataAtPath returns the real URL of the custom protected-resource
// metadata location the client knows as path, or "".
func (h *HTTP) metadataAtPath(path string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.metadataAt[path]
}

// learnMetadataAt notes the protected-resource metadata locations that
// the resource_metadata parameters of a challenge (values) name, but for
// the well-known ones of the upstream's origin, which are exchanges
// anyway: a client that follows them (RewriteChallenges points them at
// the proxy, keeping the path) is sent to the real URL, and the metadata
// is rewritten for it as at a well-known location. A location that is
// the MCP endpoint itself is left alone.
func (h *HTTP) learnMetadataAt(values []string) {
	upstream := authwire.Origin(h.Upstream.String())
	for _, raw := range authwire.ResourceMetadataURLs(values) {
		u, err := url.Parse(raw)
		if err != nil || !u.IsAbs() || u.Path == "" || u.Path == h.Upstream.Path {
			continue
		}
		if authwire.IsExchange(u.Path) && authwire.Origin(raw) == upstream {
			continue
		}
		h.mu.Lock()
		if h.metadataAt == nil {
			h.metadataAt = map[string]string{}
		}
		h.metadataAt[u.Path] = raw
		h.mu.Unlock()
	}
}

// frontAS is a fronted authorization server.
type frontAS struct {
	id, issuer string
	endpoints  map[string]string // metadata field -> real URL
	// atOrigin: the upstream's origin itself (2025-03-26), which the
	// client knows as the proxy's origin rather than as a fronted path.
	atOrigin bool
	// iss: its metadata advertises RFC 9207 iss in authorization
	// responses.
	iss bool
}

// advertisesIss reports whether authorization-server metadata advertises
// RFC 9207 iss.
func advertisesIss(body []byte) bool {
	var md struct {
		Iss bool `json:"authorization_response_iss_parameter_supported"`
	}
	return json.Unmarshal(body, &md) == nil && md.Iss
}

// clientIssuer is the issuer a client at the proxy's origin knows as.
func (as *frontAS) clientIssuer(origin string) string {
	if as.atOrigin {
		return origin
	}
	return authwire.FrontIssuer(origin, as.issuer)
}

// originFront returns the fronted authorization server at the upstream's
// origin (2025-03-26), its endpoints the default ones until its metadata
// names others.
func (h *HTTP) originFront() *frontAS {
	iss := authwire.Origin(h.Upstream.String())
	id := authwire.FrontID(iss)
	h.mu.Lock()
	defer h.mu.Unlock()
	as := h.fronts[id]
	if as == nil {
		as = &frontAS{id: id, issuer: iss, endpoints: map[string]string{}, atOrigin: true}
		for path, ep := range authwire.DefaultEndpoints {
			as.endpoints[ep] = iss + path
		}
		h.fronts[id] = as
	}
	return as
}

// serveExchange forwards and records a plain HTTP exchange: OAuth
// metadata, registration, token, or the authorization request.
func (h *HTTP) serveExchange(w http.ResponseWriter, r *http.Request, body []byte) {
	ctx := context.WithoutCancel(r.Context())
	keys := requestKeys(r, body)
	hs := h.exchangeSession(ctx, r.URL.Path, keys)
	h.links.bind(hs, linkConn, r.RemoteAddr)
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
	f, ok := authwire.ParseFront(r.URL.Path)
	if ep := authwire.DefaultEndpoints[r.URL.Path]; !ok && ep != "" && !h.AuthDirect {
		// 2025-03-26: the MCP server's origin is the authorization
		// server, at its default endpoints.
		f, ok = authwire.Front{ID: h.originFront().id, Endpoint: ep}, true
	}
	ax.originMeta = !ok && !h.AuthDirect && authwire.IsOriginMetadata(r.URL.Path)
	if real := h.metadataAtPath(r.URL.Path); !ok && real != "" {
		ax.resourceMeta = true
		ax.target, _ = url.Parse(real)
		st.RequestHeader.Set(ForwardedToHeader, h.red.URL(real))
	}
	if ok {
		// as.endpoints grows when another client's metadata request
		// learns them (learnFronted): read it under h.mu.
		h.mu.Lock()
		as := h.fronts[f.ID]
		var real string
		if as != nil && f.Endpoint != "" {
			real = as.endpoints[f.Endpoint]
		}
		h.mu.Unlock()
		switch {
		case as == nil || (f.Endpoint != "" && real == ""):
			h.refuseExchange(ctx, w, x, fmt.Sprintf("mcpvcr: no authorization server %s known to this proxy; the client must fetch the protected-resource metadata and the authorization-server metadata through it first", r.URL.Path))
			return
		case f.Endpoint == "authorization_endpoint":
			// Relayed to the authorization server; its answer decides
			// (authorizeResponse) whether the client gets it or the
			// browser is sent there.
			mapped := ""
			q := authwire.MapForm(r.URL.RawQuery, "resource", func(v string) string {
				mapped = h.upstreamResource(v, ax.origin)
				return mapped
			})
			target := joinQuery(real, q)
			ax.target, _ = url.Parse(target)
			h.mu.Lock()
			iss := as.iss
			h.mu.Unlock()
			ax.authorize = &authorizeRequest{issuer: as.issuer, clientIssuer: as.clientIssuer(ax.origin), real: target, query: r.URL.Query(), iss: iss}
			if mapped != "" {
				st.RequestHeader.Set(ForwardedResourceHeader, mapped)
			}
			// The browser's cookies for the proxy's host are not the
			// authorization server's to see.
			r.Header.Del("Cookie")
			h.links.bindAuthorize(hs, keys)
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

// joinQuery appends a raw query to a URL that may have one already.
func joinQuery(u, q string) string {
	switch {
	case q == "":
		return u
	case strings.Contains(u, "?"):
		return u + "&" + q
	}
	return u + "?" + q
}

// authorizeRequest is an authorization request on its way to a fronted
// authorization server.
type authorizeRequest struct {
	// issuer is the real issuer, clientIssuer the one the client was
	// shown; real the real authorization URL, with the client's
	// parameters (resource mapped).
	issuer, clientIssuer, real string
	// query is what the client sent.
	query url.Values
	// iss: the server advertises RFC 9207 iss.
	iss bool
}

// UpstreamStatusHeader is the pseudo-header of a recorded authorization
// request that mcpvcr answered by sending the browser to the
// authorization server: the status the authorization server had answered
// mcpvcr's relayed request with.
const UpstreamStatusHeader = "Mcpvcr-Upstream-Status"

// authorizeResponse handles the authorization server's answer to a
// relayed authorization request. The authorization response itself (a
// redirect to the client's redirect URI: the server approved at once, or
// refused) is relayed unchanged, but for RFC 9207 iss, which names the
// fronted issuer the client was shown; the code in it is recorded as a
// placeholder. Anything else (a login page, a redirect to the server's
// login UI) needs the user's browser at the authorization server itself,
// where its cookies and CSRF checks are bound: the browser is sent to the
// real authorization URL with a 302 and logs in there.
func (h *HTTP) authorizeResponse(resp *http.Response, x *exchange) error {
	ctx := context.WithoutCancel(resp.Request.Context())
	az := x.auth.authorize
	loc := resp.Header.Get("Location")
	if resp.StatusCode/100 == 3 && authwire.IsAuthorizationResponse(loc, resp.Request.URL, az.query.Get("redirect_uri"), az.query.Get("state")) {
		x.st.Status = resp.StatusCode
		x.st.ResponseHeader = h.red.Header(resp.Header)
		x.st.ResponseHeader.Set("Location", h.red.URL(loc))
		x.st.ResponseHeader.Set(authwire.AuthorizeHeader, authwire.AuthorizeRelayed)
		fi := az.clientIssuer
		if nl, ok := authwire.RewriteIss(loc, az.issuer, fi); ok {
			resp.Header.Set("Location", nl)
			x.st.ResponseHeader.Set(RewrittenHeader, fmt.Sprintf("iss=%q", fi))
		}
		if u, err := url.Parse(loc); err == nil {
			if code := u.Query().Get("code"); code != "" {
				h.links.bind(x.hs, linkCode, code)
			}
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return fmt.Errorf("read the answer to %s: %w", x.auth.path, err)
		}
		if len(body) > 0 {
			x.hs.append(ctx, x.st, store.ServerToClient, &store.Frame{Raw: h.redactLocation(body, loc)})
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
		x.hs.closeStream(ctx, x.st, store.EndComplete, nil)
		return nil
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	upstream := resp.StatusCode
	if az.iss {
		h.log.Warn("the browser logs in at the authorization server, which redirects it to the client with RFC 9207 iss naming the real issuer, not the fronted one the client was shown: a client that checks iss refuses it; try: mcpvcr record --proxy-auth=false, or --header with a token",
			"issuer", h.red.URL(az.issuer), "fronted", az.clientIssuer)
	}
	resp.StatusCode, resp.Status = http.StatusFound, "302 Found"
	resp.Header = http.Header{"Location": {az.real}, "Cache-Control": {"no-store"}, "Content-Length": {"0"}}
	resp.Body, resp.ContentLength = http.NoBody, 0
	x.st.Status = http.StatusFound
	x.st.ResponseHeader = http.Header{
		"Location":               {h.red.URL(az.real)},
		authwire.AuthorizeHeader: {authwire.AuthorizeBrowser},
		UpstreamStatusHeader:     {strconv.Itoa(upstream)},
	}
	x.hs.closeStream(ctx, x.st, store.EndComplete, nil)
	return nil
}

// redactLocation replaces, in the body of a redirect to loc (servers
// repeat the URL in a small HTML page), the values that the recorded
// Location holds as placeholders.
func (h *HTTP) redactLocation(body []byte, loc string) []byte {
	_, query, ok := strings.Cut(loc, "?")
	if !ok {
		return body
	}
	for _, p := range strings.Split(query, "&") {
		k, v, ok := strings.Cut(p, "=")
		if !ok || v == "" {
			continue
		}
		if name, err := url.QueryUnescape(k); err != nil || !h.red.param(name) {
			continue
		}
		ph := []byte(h.red.placeholder(v))
		body = bytes.ReplaceAll(body, []byte(v), ph)
		if dv, err := url.QueryUnescape(v); err == nil && dv != v {
			body = bytes.ReplaceAll(body, []byte(dv), ph)
		}
	}
	return body
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

// exchangeResponse records the answer to a plain HTTP exchange and
// rewrites, for the client, the metadata documents: the resource and the
// fronted authorization servers.
func (h *HTTP) exchangeResponse(resp *http.Response, x *exchange) error {
	if x.auth.authorize != nil {
		return h.authorizeResponse(resp, x)
	}
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
	if resp.StatusCode/100 == 2 {
		h.links.bindAnswer(x.hs, body)
	}
	if resp.StatusCode == http.StatusOK {
		switch {
		case authwire.IsResourceMetadata(x.auth.path) || x.auth.resourceMeta:
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
		case x.auth.originMeta:
			as := h.originFront()
			fi := authwire.FrontIssuer(x.auth.origin, as.issuer)
			nb, eps, err := authwire.RewriteAuthServerMetadataAt(body, x.auth.origin, fi)
			if err == nil {
				out = nb
				h.learnFronted(x, as, body, eps, x.auth.origin, fi)
			}
		case x.auth.frontID != "":
			h.mu.Lock()
			as := h.fronts[x.auth.frontID]
			h.mu.Unlock()
			fi := authwire.FrontIssuer(x.auth.origin, as.issuer)
			nb, eps, err := authwire.RewriteAuthServerMetadata(body, fi)
			if err == nil {
				out = nb
				h.learnFronted(x, as, body, eps, fi, fi)
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
			h.fronts[id] = &frontAS{id: id, issuer: iss, endpoints: map[string]string{}}
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
		h.links.refused(x.hs)
		h.links.bind(x.hs, linkConn, resp.Request.RemoteAddr)
	case resp.StatusCode < 300:
		x.hs.mu.Lock()
		x.hs.answered = true
		x.hs.mu.Unlock()
		if resp.Request.Header.Get("Authorization") != "" {
			h.links.authorized(x.hs)
		}
	}
	if vs := resp.Header.Values("WWW-Authenticate"); len(vs) > 0 {
		h.learnMetadataAt(vs)
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

// learnFronted notes what a fronted authorization server's metadata
// (body) named: its endpoints (eps), now fronted under fi, and whether it
// advertises RFC 9207's iss; and says on x's stream what was rewritten,
// the issuer to issuer.
func (h *HTTP) learnFronted(x *exchange, as *frontAS, body []byte, eps map[string]string, issuer, fi string) {
	rw := []string{fmt.Sprintf("issuer=%q", issuer)}
	for _, ep := range authwire.Endpoints {
		if eps[ep] != "" {
			rw = append(rw, fmt.Sprintf("%s=%q", ep, fi+"/"+ep))
		}
	}
	x.st.ResponseHeader.Set(RewrittenHeader, strings.Join(rw, ", "))
	h.mu.Lock()
	defer h.mu.Unlock()
	for k, v := range eps {
		as.endpoints[k] = v
	}
	as.iss = advertisesIss(body)
}
