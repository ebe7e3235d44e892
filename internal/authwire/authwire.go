// Package authwire holds what mcpvcr knows about OAuth on the wire around
// an MCP server (RFC 9728 protected-resource metadata, RFC 8414
// authorization-server metadata, RFC 7591 registration, RFC 6749 token
// requests, RFC 8707 resource indicators): which requests are plain HTTP
// exchanges rather than MCP, and how the resource identity and the
// authorization server's endpoints are rewritten so that a client talking
// to mcpvcr (recording or replaying) sees mcpvcr as the server.
//
// Every rewrite changes only the values it names and keeps the other
// bytes of a body as they were.
//
// Handler is the replay of the dance: an http.Handler that answers the
// recorded exchanges and hands MCP to the replayer behind it (mcpvcr
// replay --listen and mcpvcrtest put it in front of their
// replayer.Server).
package authwire

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/url"
	"strings"
)

// Well-known locations and mcpvcr's own prefix for fronted authorization
// servers.
const (
	ResourceMetadataPath = "/.well-known/oauth-protected-resource"
	AuthServerPath       = "/.well-known/oauth-authorization-server"
	OpenIDPath           = "/.well-known/openid-configuration"
	// FrontPrefix starts the paths under which mcpvcr fronts an
	// authorization server: FrontPrefix + ID + "/" + endpoint field.
	FrontPrefix = "/_mcpvcr/as/"
)

// Endpoints are the authorization-server metadata fields mcpvcr fronts:
// the authorization endpoint (relayed, or the browser sent there to log
// in) and the back-channel token and registration endpoints (proxied).
var Endpoints = []string{"authorization_endpoint", "token_endpoint", "registration_endpoint"}

// SecretParams are the form, query and JSON body fields that carry
// OAuth credentials: never stored, only placeholders.
var SecretParams = []string{
	"access_token", "refresh_token", "id_token", "code", "code_verifier",
	"client_secret", "registration_access_token", "device_code",
	"assertion", "client_assertion", "subject_token", "actor_token", "password",
}

// IsExchange reports whether a request to path is a plain HTTP exchange
// (OAuth metadata, registration, token, authorization) rather than MCP.
func IsExchange(path string) bool {
	return strings.HasPrefix(path, "/.well-known/") || strings.HasPrefix(path, FrontPrefix) || DefaultEndpoints[path] != ""
}

// DefaultEndpoints are the endpoints a 2025-03-26 client uses at the MCP
// server's origin when it finds no authorization-server metadata, by
// path, with the metadata field each stands for.
var DefaultEndpoints = map[string]string{
	"/authorize": "authorization_endpoint",
	"/token":     "token_endpoint",
	"/register":  "registration_endpoint",
}

// IsOriginMetadata reports whether path asks for the authorization-server
// metadata of the MCP server's origin itself (2025-03-26: no
// protected-resource metadata, the server's origin is the authorization
// server).
func IsOriginMetadata(path string) bool {
	return path == AuthServerPath || path == OpenIDPath
}

// IsResourceMetadata reports whether path is a protected-resource
// metadata location (root or path-based).
func IsResourceMetadata(path string) bool {
	return path == ResourceMetadataPath || strings.HasPrefix(path, ResourceMetadataPath+"/")
}

// FrontID names a fronted authorization server by its issuer: the same
// issuer gets the same id in every recording and replay.
func FrontID(issuer string) string {
	sum := sha256.Sum256([]byte(issuer))
	return hex.EncodeToString(sum[:4])
}

// FrontIssuer is the issuer a client sees for issuer when mcpvcr at
// origin (scheme://host) fronts it.
func FrontIssuer(origin, issuer string) string {
	return origin + FrontPrefix + FrontID(issuer)
}

// Front is a request to a fronted authorization server, as parsed by
// ParseFront.
type Front struct {
	ID string
	// Endpoint is the metadata field the request stands for
	// ("token_endpoint"), or "" for a metadata request.
	Endpoint string
	// WellKnown is the metadata document asked for (AuthServerPath or
	// OpenIDPath) when Endpoint is "", and Append reports the appended
	// form (issuer + "/.well-known/openid-configuration").
	WellKnown string
	Append    bool
}

// ParseFront parses a request path under the front prefix: an endpoint
// (FrontPrefix+ID+"/token_endpoint") or a metadata document at an
// inserted (/.well-known/oauth-authorization-server/_mcpvcr/as/ID) or
// appended (FrontPrefix+ID+"/.well-known/openid-configuration") location.
func ParseFront(path string) (Front, bool) {
	for _, wk := range []string{AuthServerPath, OpenIDPath} {
		if rest, ok := strings.CutPrefix(path, wk+FrontPrefix); ok && rest != "" && !strings.Contains(rest, "/") {
			return Front{ID: rest, WellKnown: wk}, true
		}
	}
	rest, ok := strings.CutPrefix(path, FrontPrefix)
	if !ok {
		return Front{}, false
	}
	id, tail, _ := strings.Cut(rest, "/")
	if id == "" {
		return Front{}, false
	}
	switch {
	case tail == strings.TrimPrefix(OpenIDPath, "/"):
		return Front{ID: id, WellKnown: OpenIDPath, Append: true}, true
	case tail == strings.TrimPrefix(AuthServerPath, "/"):
		return Front{ID: id, WellKnown: AuthServerPath, Append: true}, true
	}
	for _, ep := range Endpoints {
		if tail == ep {
			return Front{ID: id, Endpoint: ep}, true
		}
	}
	return Front{}, false
}

// MetadataURL is where the real authorization server issuer publishes
// the document f asks for.
func (f Front) MetadataURL(issuer string) (string, error) {
	u, err := url.Parse(issuer)
	if err != nil {
		return "", err
	}
	p := strings.TrimSuffix(u.Path, "/")
	if f.Append {
		u.Path = p + f.WellKnown
	} else {
		u.Path = f.WellKnown + p
	}
	u.RawPath = ""
	return u.String(), nil
}

// Origin returns scheme://host of a URL, or "" when it has none.
func Origin(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// Rebase returns raw with its origin replaced by origin, keeping path,
// query and fragment. A value that is not an absolute URL is returned
// unchanged.
func Rebase(raw, origin string) string {
	o := Origin(raw)
	if o == "" {
		return raw
	}
	return origin + raw[len(o):]
}

// RewriteChallenges rewrites the resource_metadata parameter of each
// WWW-Authenticate value to name origin, keeping the rest of the value.
func RewriteChallenges(values []string, origin string) []string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = rewriteChallenge(v, origin)
	}
	return out
}

func rewriteChallenge(v, origin string) string {
	var b strings.Builder
	from := 0
	for _, sp := range metadataParams(v) {
		b.WriteString(v[from:sp[0]])
		b.WriteString(Rebase(v[sp[0]:sp[1]], origin))
		from = sp[1]
	}
	b.WriteString(v[from:])
	return b.String()
}

// ResourceMetadataURLs returns the resource_metadata parameters of the
// WWW-Authenticate values, in order: where the server says its
// protected-resource metadata is, a custom location as well as a
// well-known one (RFC 9728 §5.1).
func ResourceMetadataURLs(values []string) []string {
	var urls []string
	for _, v := range values {
		for _, sp := range metadataParams(v) {
			urls = append(urls, v[sp[0]:sp[1]])
		}
	}
	return urls
}

// metadataParams returns the start and end offsets of the value (inside
// its quotes, if quoted) of each resource_metadata parameter of a
// WWW-Authenticate value.
func metadataParams(v string) [][2]int {
	lower := strings.ToLower(v)
	var spans [][2]int
	from := 0
	for {
		i := strings.Index(lower[from:], "resource_metadata")
		if i < 0 {
			return spans
		}
		i += from
		j := i + len("resource_metadata")
		for j < len(v) && (v[j] == ' ' || v[j] == '\t') {
			j++
		}
		if j >= len(v) || v[j] != '=' {
			from = j
			continue
		}
		j++
		for j < len(v) && (v[j] == ' ' || v[j] == '\t') {
			j++
		}
		start, end := j, j
		if j < len(v) && v[j] == '"' {
			start = j + 1
			end = start
			for end < len(v) && v[end] != '"' {
				end++
			}
		} else {
			for end < len(v) && v[end] != ',' && v[end] != ' ' {
				end++
			}
		}
		spans = append(spans, [2]int{start, end})
		from = end
	}
}

// EditJSON calls edit with each top-level member of the JSON object body
// and replaces the member's value with what edit returns when it reports
// true. The other bytes are kept as they were.
func EditJSON(body []byte, edit func(key string, value json.RawMessage) (json.RawMessage, bool)) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("not a JSON object")
	}
	var out []byte
	last := 0
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := kt.(string)
		// The value starts after the colon that follows the key.
		start := int(dec.InputOffset())
		for start < len(body) && body[start] != ':' {
			start++
		}
		start++
		for start < len(body) && strings.IndexByte(" \t\r\n", body[start]) >= 0 {
			start++
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		end := int(dec.InputOffset())
		if nv, ok := edit(key, v); ok {
			out = append(out, body[last:start]...)
			out = append(out, nv...)
			last = end
		}
	}
	if _, err := dec.Token(); err != nil && err != io.EOF {
		return nil, err
	}
	if out == nil {
		return body, nil
	}
	return append(out, body[last:]...), nil
}

func jsonString(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

// ResourceMetadata is what RewriteResourceMetadata learned from a
// protected-resource metadata document.
type ResourceMetadata struct {
	// Resource is the upstream's resource identifier, and ClientResource
	// what the client was shown instead.
	Resource, ClientResource string
	// Issuers are the authorization servers it names.
	Issuers []string
}

// RewriteResourceMetadata rewrites a protected-resource metadata document
// for a client that reaches the resource at origin: resource names origin
// (keeping its path), and when front is set every authorization server is
// replaced by its fronted issuer at origin.
func RewriteResourceMetadata(body []byte, origin string, front bool) ([]byte, ResourceMetadata, error) {
	var md ResourceMetadata
	out, err := EditJSON(body, func(key string, v json.RawMessage) (json.RawMessage, bool) {
		switch key {
		case "resource":
			var s string
			if json.Unmarshal(v, &s) != nil {
				return nil, false
			}
			md.Resource, md.ClientResource = s, Rebase(s, origin)
			return jsonString(md.ClientResource), true
		case "authorization_servers":
			var iss []string
			if json.Unmarshal(v, &iss) != nil {
				return nil, false
			}
			md.Issuers = iss
			if !front {
				return nil, false
			}
			fronted := make([]string, len(iss))
			for i, s := range iss {
				fronted[i] = FrontIssuer(origin, s)
			}
			b, _ := json.Marshal(fronted)
			return b, true
		}
		return nil, false
	})
	return out, md, err
}

// RewriteAuthServerMetadata rewrites an authorization-server metadata
// document for a client that sees the server as frontIssuer: issuer
// becomes frontIssuer and each of Endpoints becomes frontIssuer + "/" +
// its field name. It returns the real endpoint URLs by field name.
func RewriteAuthServerMetadata(body []byte, frontIssuer string) ([]byte, map[string]string, error) {
	return RewriteAuthServerMetadataAt(body, frontIssuer, frontIssuer)
}

// RewriteAuthServerMetadataAt is RewriteAuthServerMetadata for a client
// that sees the server as issuer, with its endpoints fronted under front
// (2025-03-26: the issuer is the MCP server's origin, here mcpvcr's).
func RewriteAuthServerMetadataAt(body []byte, issuer, front string) ([]byte, map[string]string, error) {
	frontIssuer := front
	real := map[string]string{}
	out, err := EditJSON(body, func(key string, v json.RawMessage) (json.RawMessage, bool) {
		if key == "issuer" {
			return jsonString(issuer), true
		}
		for _, ep := range Endpoints {
			if key == ep {
				var s string
				if json.Unmarshal(v, &s) != nil {
					return nil, false
				}
				real[ep] = s
				return jsonString(frontIssuer + "/" + ep), true
			}
		}
		return nil, false
	})
	return out, real, err
}

// MapForm returns a form-encoded body (or raw query) with the value of
// every name parameter replaced by f of its decoded value, keeping the
// other bytes.
func MapForm(form string, name string, f func(string) string) string {
	if form == "" {
		return form
	}
	parts := strings.Split(form, "&")
	changed := false
	for i, p := range parts {
		k, v, ok := strings.Cut(p, "=")
		if !ok {
			continue
		}
		if dk, err := url.QueryUnescape(k); err != nil || dk != name {
			continue
		}
		dv, err := url.QueryUnescape(v)
		if err != nil {
			continue
		}
		if nv := f(dv); nv != dv {
			parts[i] = k + "=" + url.QueryEscape(nv)
			changed = true
		}
	}
	if !changed {
		return form
	}
	return strings.Join(parts, "&")
}

// Label names what a plain HTTP exchange to path is, for people:
// "resource-metadata", "as-metadata", "authorize", "token",
// "registration", or "http" for anything else.
func Label(path string) string {
	if i := strings.IndexAny(path, "?#"); i >= 0 {
		path = path[:i]
	}
	switch {
	case IsResourceMetadata(path):
		return "resource-metadata"
	case strings.HasPrefix(path, AuthServerPath), strings.HasPrefix(path, OpenIDPath):
		return "as-metadata"
	}
	ep := DefaultEndpoints[path]
	if f, ok := ParseFront(path); ok {
		ep = f.Endpoint
	} else if ep == "" {
		return "http"
	}
	switch ep {
	case "":
		return "as-metadata"
	case "authorization_endpoint":
		return "authorize"
	case "token_endpoint":
		return "token"
	case "registration_endpoint":
		return "registration"
	}
	return "http"
}

// AuthorizeHeader is the pseudo-header a recorded authorization request
// carries in its response headers: how mcpvcr answered it (AuthorizeRelayed
// or AuthorizeBrowser). It never goes on the wire.
const AuthorizeHeader = "Mcpvcr-Authorize"

// How mcpvcr answered an authorization request to a fronted authorization
// server.
const (
	// AuthorizeRelayed: the authorization server answered at once with
	// the authorization response (a redirect to the client's redirect
	// URI, with a code or an error), and mcpvcr relayed it.
	AuthorizeRelayed = "relayed"
	// AuthorizeBrowser: the authorization server wants the user (a login
	// page, or a redirect to its login UI), so mcpvcr sent the browser to
	// the real authorization URL to log in there.
	AuthorizeBrowser = "browser"
)

// IsAuthorizationResponse reports whether loc, the Location of an
// authorization endpoint's redirect (resolved against base, the URL
// asked for), is the authorization response to the client (RFC 6749
// §4.1.2): a redirect to redirectURI (same scheme, host and path), or,
// when the request named none, a redirect off the authorization server
// carrying the request's state and a code or an error.
func IsAuthorizationResponse(loc string, base *url.URL, redirectURI, state string) bool {
	if loc == "" {
		return false
	}
	u, err := url.Parse(loc)
	if err != nil {
		return false
	}
	if base != nil {
		u = base.ResolveReference(u)
	}
	if redirectURI != "" {
		ru, err := url.Parse(redirectURI)
		return err == nil && strings.EqualFold(u.Scheme, ru.Scheme) && strings.EqualFold(u.Host, ru.Host) && u.Path == ru.Path
	}
	q := u.Query()
	if base != nil && strings.EqualFold(u.Host, base.Host) {
		return false
	}
	return (state == "" || q.Get("state") == state) && (q.Get("code") != "" || q.Get("error") != "")
}

// IssuersEqual compares issuer identifiers as clients do: a trailing
// slash does not count.
func IssuersEqual(a, b string) bool {
	return strings.TrimSuffix(a, "/") == strings.TrimSuffix(b, "/")
}

// RewriteIss returns loc with its RFC 9207 iss parameter replaced by to
// when it names the issuer from (IssuersEqual), keeping the other bytes;
// ok reports whether it did. An iss naming another issuer is kept, so
// that the client rejects it as it would without mcpvcr.
func RewriteIss(loc, from, to string) (string, bool) {
	base, query, ok := strings.Cut(loc, "?")
	if !ok {
		return loc, false
	}
	frag := ""
	if i := strings.IndexByte(query, '#'); i >= 0 {
		query, frag = query[:i], query[i:]
	}
	done := false
	nq := MapForm(query, "iss", func(v string) string {
		if IssuersEqual(v, from) {
			done = true
			return to
		}
		return v
	})
	if !done {
		return loc, false
	}
	return base + "?" + nq + frag, true
}
