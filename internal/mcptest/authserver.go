package mcptest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// AuthServer is an OAuth 2.1 authorization server on a real 127.0.0.1
// listener, for tests of OAuth-protected MCP servers: RFC 8414 metadata,
// RFC 7591 dynamic client registration, and the authorization code grant
// (RFC 6749) with PKCE S256 (RFC 7636), resource indicators (RFC 8707)
// and refresh tokens. The Go SDK has an authorization server for its own
// tests only (internal), so this one stands in for a real one.
//
// By default the authorization endpoint approves every valid request at
// once (the test plays the user), redirecting to the client's redirect
// URI with a code, as the authorization servers of conformance suites
// do; [AuthServerConfig.Login] makes it ask for a login first. Tokens
// are opaque; [AuthServer.Verifier] checks them for a resource server,
// audience included. Safe for concurrent use.
type AuthServer struct {
	// Issuer is the server's issuer identifier: its origin, plus the path
	// given to [StartAuthServer].
	Issuer string

	cfg AuthServerConfig
	srv *httptest.Server

	mu      sync.Mutex // guards the fields below
	clients map[string]*asClient
	codes   map[string]*asGrant
	tokens  map[string]*asToken
	// secrets holds every credential issued or received, for audits.
	secrets []string
	log     []string
	logins  map[string]*pendingLogin // login transaction id -> request
}

// Login is how the test authorization server's authorization endpoint
// treats the user.
type Login int

const (
	// LoginNone approves at once: the authorization endpoint redirects
	// straight to the client's redirect URI with a code and the state.
	LoginNone Login = iota
	// LoginRedirect redirects to the server's own login UI (/login) with a
	// transaction id, setting a cookie that binds the transaction to the
	// browser; the login UI approves a browser that has the cookie. A
	// browser that reaches /login without it is refused (400), as a CSRF
	// check would.
	LoginRedirect
	// LoginPage answers with an HTML login page (200) whose link to
	// /login carries the transaction id, setting the same cookie.
	LoginPage
)

// AuthServerConfig configures [StartAuthServerWith].
type AuthServerConfig struct {
	// Path is the issuer's path ("" or "/tenant", say).
	Path string
	// Host, if set, is the host the issuer names instead of 127.0.0.1
	// ("localhost", say), with the listener's port: the same server
	// under another name, as a client resolves it.
	Host string
	// NoRegistration leaves registration_endpoint out of the metadata
	// and refuses registration: only pre-registered clients (and Client
	// ID Metadata Documents) can use the server.
	NoRegistration bool
	// Login is how the authorization endpoint treats the user.
	Login Login
	// Iss makes the server return RFC 9207 iss in its authorization
	// responses and advertise it
	// (authorization_response_iss_parameter_supported).
	Iss bool
	// Metadata is where the server publishes its metadata.
	Metadata MetadataLocation
	// AuthMethods, if set, is token_endpoint_auth_methods_supported, and
	// a pre-registered confidential client must use the first of them.
	AuthMethods []string
	// ExpiresIn, if set, is the expires_in of the access tokens issued
	// (they stay valid for an hour): a client treats a token that expires
	// within seconds as expired and refreshes it.
	ExpiresIn int
	// ClientIDMetadata holds the Client ID Metadata Documents the server
	// "fetches" (by client_id URL) when a client uses one as its
	// client_id, and makes it advertise
	// client_id_metadata_document_supported. Tests have no HTTPS server
	// for them to be fetched from.
	ClientIDMetadata map[string]ClientIDMetadataDocument
}

// ClientIDMetadataDocument is what the test authorization server reads of
// a Client ID Metadata Document.
type ClientIDMetadataDocument struct {
	RedirectURIs []string
}

// MetadataLocation is where an authorization server publishes its
// metadata, for an issuer with path P.
type MetadataLocation int

const (
	// MetadataOAuth: RFC 8414, /.well-known/oauth-authorization-server + P.
	MetadataOAuth MetadataLocation = iota
	// MetadataOpenIDInserted: OpenID, /.well-known/openid-configuration + P.
	MetadataOpenIDInserted
	// MetadataOpenIDAppended: OpenID, P + /.well-known/openid-configuration.
	MetadataOpenIDAppended
	// MetadataNone: no metadata; the endpoints are the 2025-03-26
	// defaults, /authorize, /token and /register.
	MetadataNone
)

type asClient struct {
	secret       string
	redirectURIs []string
	authMethod   string // token_endpoint_auth_method
}

// pendingLogin is an authorization request waiting for the user's login.
type pendingLogin struct {
	query  url.Values
	cookie string
}

type asGrant struct {
	clientID, redirectURI, challenge, resource, scope string
	used                                              bool
}

type asToken struct {
	clientID, resource, scope string
	expires                   time.Time
	refresh                   bool
}

// StartAuthServer starts an authorization server whose issuer is its
// origin plus path ("" or "/tenant", say). It stops when the test ends.
func StartAuthServer(tb testing.TB, path string) *AuthServer {
	tb.Helper()
	return StartAuthServerWith(tb, AuthServerConfig{Path: path})
}

// StartAuthServerWith starts an authorization server configured by cfg.
// It stops when the test ends.
func StartAuthServerWith(tb testing.TB, cfg AuthServerConfig) *AuthServer {
	tb.Helper()
	srv := httptest.NewUnstartedServer(nil)
	origin := "http://" + srv.Listener.Addr().String()
	if cfg.Host != "" {
		_, port, _ := strings.Cut(srv.Listener.Addr().String(), ":")
		origin = "http://" + cfg.Host + ":" + port
	}
	as := newAuthServer(cfg, origin)
	srv.Config.Handler = as.handler(nil)
	srv.Start()
	tb.Cleanup(srv.Close)
	as.srv = srv
	return as
}

// newAuthServer returns an authorization server whose issuer is origin
// plus cfg.Path, to be served by its handler.
func newAuthServer(cfg AuthServerConfig, origin string) *AuthServer {
	return &AuthServer{Issuer: origin + cfg.Path, cfg: cfg, clients: map[string]*asClient{}, codes: map[string]*asGrant{},
		tokens: map[string]*asToken{}, logins: map[string]*pendingLogin{}}
}

// handler serves the authorization server's endpoints on mux (a new one
// if nil), logging each request.
func (as *AuthServer) handler(mux *http.ServeMux) http.Handler {
	if mux == nil {
		mux = http.NewServeMux()
	}
	path := as.cfg.Path
	logged := func(h http.HandlerFunc) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			as.mu.Lock()
			as.log = append(as.log, r.Method+" "+r.URL.Path)
			as.mu.Unlock()
			h(w, r)
		}
	}
	switch as.cfg.Metadata {
	case MetadataOAuth:
		mux.HandleFunc("GET /.well-known/oauth-authorization-server"+path, logged(as.metadata))
	case MetadataOpenIDInserted:
		mux.HandleFunc("GET /.well-known/openid-configuration"+path, logged(as.metadata))
	case MetadataOpenIDAppended:
		mux.HandleFunc("GET "+path+"/.well-known/openid-configuration", logged(as.metadata))
	}
	if !as.cfg.NoRegistration {
		mux.HandleFunc("POST "+path+"/register", logged(as.register))
	}
	mux.HandleFunc("GET "+path+"/authorize", logged(as.authorize))
	mux.HandleFunc("GET "+path+"/login", logged(as.login))
	mux.HandleFunc("POST "+path+"/token", logged(as.token))
	// Everything else is logged too, and answered 404.
	mux.HandleFunc("/", logged(http.NotFound))
	return mux
}

// Register pre-registers a client. An empty secret makes it a public
// client (token_endpoint_auth_method "none"); otherwise it authenticates
// with client_secret_basic or client_secret_post (only with the first of
// AuthServerConfig.AuthMethods when they are set).
func (as *AuthServer) Register(clientID, secret string, redirectURIs ...string) {
	as.mu.Lock()
	defer as.mu.Unlock()
	method := "" // either of client_secret_basic and client_secret_post
	if len(as.cfg.AuthMethods) > 0 {
		method = as.cfg.AuthMethods[0]
	}
	if secret == "" {
		method = "none"
	} else {
		as.secrets = append(as.secrets, secret)
	}
	as.clients[clientID] = &asClient{secret: secret, redirectURIs: redirectURIs, authMethod: method}
}

// Secrets returns every credential the server issued or received:
// client secrets, codes, code verifiers, access and refresh tokens.
func (as *AuthServer) Secrets() []string {
	as.mu.Lock()
	defer as.mu.Unlock()
	return slices.Clone(as.secrets)
}

// Requests returns "METHOD /path" of every request the server got.
func (as *AuthServer) Requests() []string {
	as.mu.Lock()
	defer as.mu.Unlock()
	return slices.Clone(as.log)
}

// Verifier returns a token verifier for the resource server whose
// resource identifier is resource: a token is valid if this server issued
// it for that resource and it has not expired.
func (as *AuthServer) Verifier(resource string) auth.TokenVerifier {
	return func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		as.mu.Lock()
		defer as.mu.Unlock()
		t, ok := as.tokens[token]
		if !ok || t.refresh {
			return nil, fmt.Errorf("%w: unknown token", auth.ErrInvalidToken)
		}
		if t.resource != resource {
			return nil, fmt.Errorf("%w: token is for %q, not %q", auth.ErrInvalidToken, t.resource, resource)
		}
		// The user is the one who approved at the authorization
		// endpoint: the same for every client.
		return &auth.TokenInfo{Scopes: strings.Fields(t.scope), Expiration: t.expires, UserID: "mcptest-user"}, nil
	}
}

func (as *AuthServer) metadata(w http.ResponseWriter, _ *http.Request) {
	md := map[string]any{
		"issuer":                                as.Issuer,
		"authorization_endpoint":                as.Issuer + "/authorize",
		"token_endpoint":                        as.Issuer + "/token",
		"response_types_supported":              []string{"code"},
		"grant_types_supported":                 []string{"authorization_code", "refresh_token"},
		"code_challenge_methods_supported":      []string{"S256"},
		"token_endpoint_auth_methods_supported": []string{"client_secret_basic", "client_secret_post", "none"},
	}
	if !as.cfg.NoRegistration {
		md["registration_endpoint"] = as.Issuer + "/register"
	}
	if as.cfg.Iss {
		md["authorization_response_iss_parameter_supported"] = true
	}
	if as.cfg.AuthMethods != nil {
		md["token_endpoint_auth_methods_supported"] = as.cfg.AuthMethods
	}
	if as.cfg.ClientIDMetadata != nil {
		md["client_id_metadata_document_supported"] = true
	}
	if as.cfg.Metadata == MetadataOpenIDInserted || as.cfg.Metadata == MetadataOpenIDAppended {
		md["jwks_uri"] = as.Issuer + "/jwks"
		md["subject_types_supported"] = []string{"public"}
		md["id_token_signing_alg_values_supported"] = []string{"RS256"}
	}
	writeJSON(w, http.StatusOK, md)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// oauthError answers with an RFC 6749 §5.2 error.
func oauthError(w http.ResponseWriter, status int, code, desc string) {
	writeJSON(w, status, map[string]string{"error": code, "error_description": desc})
}

func (as *AuthServer) secret(prefix string) string {
	s := prefix + rand.Text()
	as.secrets = append(as.secrets, s)
	return s
}

// register is RFC 7591 dynamic client registration.
func (as *AuthServer) register(w http.ResponseWriter, r *http.Request) {
	var md struct {
		RedirectURIs            []string `json:"redirect_uris"`
		TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
		ClientName              string   `json:"client_name"`
	}
	if err := json.NewDecoder(r.Body).Decode(&md); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_client_metadata", err.Error())
		return
	}
	if len(md.RedirectURIs) == 0 {
		oauthError(w, http.StatusBadRequest, "invalid_redirect_uri", "redirect_uris is required")
		return
	}
	for _, u := range md.RedirectURIs {
		if pu, err := url.Parse(u); err != nil || !pu.IsAbs() || pu.Fragment != "" {
			oauthError(w, http.StatusBadRequest, "invalid_redirect_uri", "not an absolute URI without fragment: "+u)
			return
		}
	}
	method := md.TokenEndpointAuthMethod
	if method == "" {
		method = "client_secret_basic"
	}
	if method != "none" && method != "client_secret_basic" && method != "client_secret_post" {
		oauthError(w, http.StatusBadRequest, "invalid_client_metadata", "unsupported token_endpoint_auth_method "+method)
		return
	}
	as.mu.Lock()
	id := "client-" + rand.Text()[:8]
	c := &asClient{redirectURIs: md.RedirectURIs, authMethod: method}
	resp := map[string]any{
		"client_id":                  id,
		"client_id_issued_at":        time.Now().Unix(),
		"redirect_uris":              md.RedirectURIs,
		"token_endpoint_auth_method": method,
		"grant_types":                []string{"authorization_code", "refresh_token"},
		"response_types":             []string{"code"},
		"registration_access_token":  as.secret("rat-"),
		"registration_client_uri":    as.Issuer + "/register/" + id,
	}
	if md.ClientName != "" {
		resp["client_name"] = md.ClientName
	}
	if method != "none" {
		c.secret = as.secret("cs-")
		resp["client_secret"] = c.secret
		resp["client_secret_expires_at"] = 0
	}
	as.clients[id] = c
	as.mu.Unlock()
	writeJSON(w, http.StatusCreated, resp)
}

// authorize is the authorization endpoint (RFC 6749 §4.1.1). Errors that
// make the redirect URI untrustworthy are shown to the user agent (400);
// others are redirected (§4.1.2.1). A valid request is approved at once,
// or after the user's login (AuthServerConfig.Login).
func (as *AuthServer) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	as.mu.Lock()
	defer as.mu.Unlock()
	c, ok := as.client(q.Get("client_id"))
	if !ok {
		http.Error(w, "unknown client_id", http.StatusBadRequest)
		return
	}
	redirect := q.Get("redirect_uri")
	if !slices.Contains(c.redirectURIs, redirect) {
		http.Error(w, "redirect_uri is not registered for this client", http.StatusBadRequest)
		return
	}
	switch {
	case q.Get("response_type") != "code":
		as.back(w, r, q, url.Values{"error": {"unsupported_response_type"}})
		return
	case q.Get("code_challenge") == "" || q.Get("code_challenge_method") != "S256":
		as.back(w, r, q, url.Values{"error": {"invalid_request"}, "error_description": {"PKCE with S256 is required"}})
		return
	case q.Get("resource") == "":
		as.back(w, r, q, url.Values{"error": {"invalid_target"}, "error_description": {"resource is required"}})
		return
	}
	if as.cfg.Login == LoginNone {
		as.approve(w, r, q)
		return
	}
	txn, cookie := rand.Text(), rand.Text()
	as.logins[txn] = &pendingLogin{query: q, cookie: cookie}
	as.secrets = append(as.secrets, cookie)
	http.SetCookie(w, &http.Cookie{Name: "mcptest_login", Value: cookie, Path: "/", HttpOnly: true})
	login := as.Issuer + "/login?txn=" + txn
	if as.cfg.Login == LoginRedirect {
		http.Redirect(w, r, login, http.StatusFound)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprintf(w, "<!doctype html><title>Log in</title><p>mcptest wants access.</p><a id=\"login\" href=\"%s\">Log in and approve</a>\n", login)
}

// login is the server's login UI: it approves the transaction of a
// browser that holds the transaction's cookie.
func (as *AuthServer) login(w http.ResponseWriter, r *http.Request) {
	as.mu.Lock()
	defer as.mu.Unlock()
	p, ok := as.logins[r.URL.Query().Get("txn")]
	c, err := r.Cookie("mcptest_login")
	if !ok || err != nil || c.Value != p.cookie {
		http.Error(w, "no login under way in this browser", http.StatusBadRequest)
		return
	}
	delete(as.logins, r.URL.Query().Get("txn"))
	as.approve(w, r, p.query)
}

// approve issues a code for the authorization request q and redirects to
// the client. The caller holds as.mu.
func (as *AuthServer) approve(w http.ResponseWriter, r *http.Request, q url.Values) {
	code := as.secret("code-")
	as.codes[code] = &asGrant{clientID: q.Get("client_id"), redirectURI: q.Get("redirect_uri"), challenge: q.Get("code_challenge"),
		resource: q.Get("resource"), scope: q.Get("scope")}
	as.back(w, r, q, url.Values{"code": {code}})
}

// back redirects to the redirect URI of the authorization request q with
// params, its state and (AuthServerConfig.Iss) the issuer.
func (as *AuthServer) back(w http.ResponseWriter, r *http.Request, q url.Values, params url.Values) {
	u, _ := url.Parse(q.Get("redirect_uri"))
	rq := u.Query()
	for k, vs := range params {
		rq[k] = vs
	}
	if s := q.Get("state"); s != "" {
		rq.Set("state", s)
	}
	if as.cfg.Iss {
		rq.Set("iss", as.Issuer)
	}
	u.RawQuery = rq.Encode()
	http.Redirect(w, r, u.String(), http.StatusFound)
}

// token is the token endpoint (RFC 6749 §3.2): the authorization code
// grant with PKCE, and refresh.
func (as *AuthServer) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", err.Error())
		return
	}
	as.mu.Lock()
	defer as.mu.Unlock()
	clientID, ok := as.authenticate(r)
	if !ok {
		w.Header().Set("WWW-Authenticate", `Basic realm="token"`)
		oauthError(w, http.StatusUnauthorized, "invalid_client", "client authentication failed")
		return
	}
	f := r.PostForm
	var resource, scope string
	switch f.Get("grant_type") {
	case "authorization_code":
		as.secrets = append(as.secrets, f.Get("code_verifier"))
		g, ok := as.codes[f.Get("code")]
		switch {
		case !ok || g.used || g.clientID != clientID:
			oauthError(w, http.StatusBadRequest, "invalid_grant", "unknown or used code")
			return
		case g.redirectURI != f.Get("redirect_uri"):
			oauthError(w, http.StatusBadRequest, "invalid_grant", "redirect_uri differs from the authorization request")
			return
		case s256(f.Get("code_verifier")) != g.challenge:
			oauthError(w, http.StatusBadRequest, "invalid_grant", "code_verifier does not match code_challenge")
			return
		case f.Get("resource") != g.resource:
			oauthError(w, http.StatusBadRequest, "invalid_target", "resource differs from the authorization request")
			return
		}
		g.used = true
		resource, scope = g.resource, g.scope
	case "refresh_token":
		t, ok := as.tokens[f.Get("refresh_token")]
		if !ok || !t.refresh || t.clientID != clientID {
			oauthError(w, http.StatusBadRequest, "invalid_grant", "unknown refresh token")
			return
		}
		resource, scope = t.resource, t.scope
	default:
		oauthError(w, http.StatusBadRequest, "unsupported_grant_type", f.Get("grant_type"))
		return
	}
	access, refresh := as.secret("at-"), as.secret("rt-")
	exp := time.Now().Add(time.Hour)
	as.tokens[access] = &asToken{clientID: clientID, resource: resource, scope: scope, expires: exp}
	as.tokens[refresh] = &asToken{clientID: clientID, resource: resource, scope: scope, expires: exp, refresh: true}
	expiresIn := 3600
	if as.cfg.ExpiresIn > 0 {
		expiresIn = as.cfg.ExpiresIn
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"access_token": access, "token_type": "Bearer", "expires_in": expiresIn,
		"refresh_token": refresh, "scope": scope,
	})
}

// authenticate checks the client's credentials at the token endpoint
// (RFC 6749 §2.3.1) and returns its id.
func (as *AuthServer) authenticate(r *http.Request) (string, bool) {
	id, secret, basic := r.BasicAuth()
	if basic {
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
		as.secrets = append(as.secrets, strings.TrimPrefix(r.Header.Get("Authorization"), "Basic "))
	} else {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	c, ok := as.client(id)
	if !ok {
		return "", false
	}
	switch c.authMethod {
	case "none":
		return id, !basic && secret == ""
	case "client_secret_basic":
		if !basic {
			return "", false
		}
	case "client_secret_post":
		if basic {
			return "", false
		}
	}
	return id, secret != "" && secret == c.secret
}

// client returns the client id names: registered, or one whose Client
// ID Metadata Document the server knows (a public client). The caller
// holds as.mu.
func (as *AuthServer) client(id string) (*asClient, bool) {
	if c, ok := as.clients[id]; ok {
		return c, true
	}
	if doc, ok := as.cfg.ClientIDMetadata[id]; ok {
		return &asClient{redirectURIs: doc.RedirectURIs, authMethod: "none"}, true
	}
	return nil, false
}

func s256(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}
