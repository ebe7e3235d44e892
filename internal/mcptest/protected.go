package mcptest

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
)

// ProtectedConfig configures [StartProtected].
type ProtectedConfig struct {
	// AS issues the tokens the server accepts. Required unless OriginAS
	// is set.
	AS *AuthServer
	// OriginAS, if set, makes the server a 2025-03-26 one: it publishes
	// no protected-resource metadata, and its own origin is the
	// authorization server (configured by OriginAS; Path is ignored),
	// with metadata there or (MetadataNone) none, at the default
	// endpoints. [Protected.AS] is that server.
	OriginAS *AuthServerConfig
	// RootMetadata serves the protected-resource metadata at the root
	// well-known location, naming the server's origin as the resource,
	// instead of at the path-based one naming the MCP endpoint.
	RootMetadata bool
	// MetadataPath, if set, is a custom location (a path of the server's
	// origin, not a well-known one) of the protected-resource metadata,
	// which names the MCP endpoint as the resource: only the
	// resource_metadata of WWW-Authenticate leads a client there.
	MetadataPath string
	// NoChallengeURL leaves resource_metadata out of WWW-Authenticate, so
	// that the client must find the metadata at the well-known locations
	// (allowed from 2025-11-25).
	NoChallengeURL bool
	// Scopes are required of every request and named in the
	// WWW-Authenticate scope parameter; ScopesSupported goes into the
	// metadata.
	Scopes, ScopesSupported []string
	// StepUp are scopes that tools/call requires on top of Scopes: a call
	// without them is refused 403 insufficient_scope (RFC 6750 §3.1).
	StepUp []string
	// Server, if set, is the MCP server served instead of the test
	// server (variant V1).
	Server *mcp.Server
	// RefuseCalls refuses every tools/call with 403 insufficient_scope
	// naming StepUp, whatever the token: a client that steps up once and
	// is refused again must stop.
	RefuseCalls bool
}

// Protected is an OAuth-protected MCP server started by [StartProtected].
type Protected struct {
	// URL is the MCP endpoint; Resource the resource identifier its
	// metadata names (URL, or its origin with RootMetadata).
	URL, Resource string
	// AS issues the tokens the server accepts.
	AS *AuthServer

	mu       sync.Mutex // guards requests and current
	requests []string
	current  *AuthServer // the authorization server whose tokens it accepts
}

// Move makes the server trust as instead of the authorization server it
// trusted: its metadata names as, and tokens of the old one are refused
// (401), as when an authorization server moves.
func (p *Protected) Move(as *AuthServer) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.current = as
}

func (p *Protected) trusted() *AuthServer {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.current
}

// Requests returns "METHOD /path status" of every request the server got.
func (p *Protected) Requests() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.requests)
}

// StartProtected serves the Go SDK test server (variant V1) over
// Streamable HTTP at /mcp behind the SDK's bearer-token middleware, with
// the SDK's protected-resource metadata handler, on a real 127.0.0.1
// listener. It stops when the test ends.
func StartProtected(tb testing.TB, cfg ProtectedConfig) *Protected {
	tb.Helper()
	server := cfg.Server
	if server == nil {
		server = NewServer(V1)
	}
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
	p := &Protected{}
	mux := http.NewServeMux()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w}
		mux.ServeHTTP(sw, r)
		p.mu.Lock()
		p.requests = append(p.requests, fmt.Sprintf("%s %s %d", r.Method, r.URL.Path, sw.status))
		p.mu.Unlock()
	}))
	origin := "http://" + srv.Listener.Addr().String()
	if cfg.OriginAS != nil {
		ac := *cfg.OriginAS
		ac.Path = ""
		cfg.AS = newAuthServer(ac, origin)
		cfg.AS.handler(mux)
		cfg.NoChallengeURL = true
	}
	p.AS, p.current = cfg.AS, cfg.AS
	srv.Start()
	tb.Cleanup(srv.Close)
	p.URL = srv.URL + "/mcp"
	metadataPath := "/.well-known/oauth-protected-resource/mcp"
	p.Resource = p.URL
	if cfg.RootMetadata {
		metadataPath, p.Resource = "/.well-known/oauth-protected-resource", srv.URL
	}
	if cfg.MetadataPath != "" {
		metadataPath = cfg.MetadataPath
	}
	if cfg.OriginAS != nil {
		metadataPath = ""
	} else {
		mux.HandleFunc("GET "+metadataPath, func(w http.ResponseWriter, r *http.Request) {
			auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
				Resource:               p.Resource,
				AuthorizationServers:   []string{p.trusted().Issuer},
				ScopesSupported:        cfg.ScopesSupported,
				BearerMethodsSupported: []string{"header"},
				ResourceName:           "mcptest protected server",
			}).ServeHTTP(w, r)
		})
	}
	opts := &auth.RequireBearerTokenOptions{Scopes: cfg.Scopes}
	if !cfg.NoChallengeURL {
		opts.ResourceMetadataURL = srv.URL + metadataPath
	}
	verify := func(ctx context.Context, token string, r *http.Request) (*auth.TokenInfo, error) {
		return p.trusted().Verifier(p.Resource)(ctx, token, r)
	}
	bearer := auth.RequireBearerToken(verify, opts)
	mux.Handle("/mcp", bearer(stepUp(cfg.StepUp, append(slices.Clone(cfg.Scopes), cfg.StepUp...), opts.ResourceMetadataURL, cfg.RefuseCalls, mcpHandler)))
	return p
}

// stepUp refuses a tools/call whose token lacks one of extra with 403 and
// an insufficient_scope challenge naming all of want; with always, every
// tools/call.
func stepUp(extra, want []string, metadataURL string, always bool, next http.Handler) http.Handler {
	if len(extra) == 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if r.Method == http.MethodPost && jsonrpc.Parse(body).Method == "tools/call" {
			info := auth.TokenInfoFromContext(r.Context())
			for _, s := range extra {
				if always || info == nil || !slices.Contains(info.Scopes, s) {
					ch := fmt.Sprintf(`Bearer error="insufficient_scope", scope=%q`, strings.Join(want, " "))
					if metadataURL != "" {
						ch += fmt.Sprintf(", resource_metadata=%q", metadataURL)
					}
					w.Header().Set("WWW-Authenticate", ch)
					http.Error(w, "insufficient scope", http.StatusForbidden)
					return
				}
			}
		}
		next.ServeHTTP(w, r)
	})
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(p)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// RedirectURI is where the authorization server sends the browser back
// to the test client. Nothing listens there: [OAuthHandler] stops
// following redirects when it gets there.
const RedirectURI = "http://127.0.0.1:9/oauth/callback"

// OAuthClient configures [OAuthHandler]: a pre-registered client (ID, and
// Secret for a confidential one) or, with ID empty, dynamic registration.
type OAuthClient struct {
	ID, Secret string
	// Headless fetches the authorization URL once, without following
	// redirects, and reads the code, state and iss from the Location of
	// the answer, as the Go SDK's conformance client does: it works only
	// with an authorization server that approves at once. Otherwise the
	// handler plays a browser.
	Headless bool
	// HTTPClient, if set, makes the handler's requests (metadata,
	// registration, token, and the authorization URL when headless).
	HTTPClient *http.Client
	// MetadataURL, if set, is the client's Client ID Metadata Document
	// URL, used as its client_id where the authorization server supports
	// them.
	MetadataURL string
	// BeforeAuthorize, if set, is called before the authorization URL is
	// fetched: a test holds clients there to have their dances overlap.
	BeforeAuthorize func(context.Context) error
}

// OAuthHandler returns the Go SDK's authorization code handler for a
// client configured as c. It plays the user's browser: it follows the
// authorization URL through every redirect until the redirect URI, and
// hands the code, state and iss found there to the SDK.
func OAuthHandler(tb testing.TB, c OAuthClient) *auth.AuthorizationCodeHandler {
	tb.Helper()
	cfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL:              RedirectURI,
		AuthorizationCodeFetcher: browse,
	}
	if c.Headless {
		cfg.AuthorizationCodeFetcher = headless
	}
	cfg.Client = c.HTTPClient
	if before, fetch := c.BeforeAuthorize, cfg.AuthorizationCodeFetcher; before != nil {
		cfg.AuthorizationCodeFetcher = func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			if err := before(ctx); err != nil {
				return nil, err
			}
			return fetch(ctx, args)
		}
	}
	if c.MetadataURL != "" {
		cfg.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: c.MetadataURL}
	}
	if c.ID != "" {
		pc := &oauthex.ClientCredentials{ClientID: c.ID}
		if c.Secret != "" {
			pc.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: c.Secret}
		}
		cfg.PreregisteredClient = pc
	} else {
		cfg.DynamicClientRegistrationConfig = &auth.DynamicClientRegistrationConfig{
			Metadata: &oauthex.ClientRegistrationMetadata{RedirectURIs: []string{RedirectURI}, ClientName: "mcptest"},
		}
	}
	h, err := auth.NewAuthorizationCodeHandler(cfg)
	if err != nil {
		tb.Fatalf("NewAuthorizationCodeHandler: %v", err)
	}
	return h
}

// headless fetches the authorization URL without following redirects and
// reads the authorization response from the Location of the answer.
func headless(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, args.URL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetch the authorization URL: %w", err)
	}
	resp.Body.Close()
	u, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		return nil, fmt.Errorf("parse the Location of the authorization answer: %w", err)
	}
	q := u.Query()
	return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
}

// loginLink finds the login link of an HTML login page.
var loginLink = regexp.MustCompile(`<a id="login" href="([^"]+)"`)

// browse follows the authorization URL as a browser would, with a cookie
// jar, following the link of a login page, and returns what the
// authorization server sent to the redirect URI.
func browse(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if strings.HasPrefix(req.URL.String(), RedirectURI) {
			return http.ErrUseLastResponse
		}
		if len(via) > 10 {
			return fmt.Errorf("more than 10 redirects")
		}
		return nil
	}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, args.URL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("browse to the authorization endpoint: %w", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if m := loginLink.FindSubmatch(body); resp.StatusCode == http.StatusOK && m != nil {
		// The user reads the login page and logs in.
		link, err := resp.Request.URL.Parse(html.UnescapeString(string(m[1])))
		if err != nil {
			return nil, err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, link.String(), nil)
		if err != nil {
			return nil, err
		}
		if resp, err = client.Do(req); err != nil {
			return nil, fmt.Errorf("log in: %w", err)
		}
		body, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	loc := resp.Header.Get("Location")
	if resp.StatusCode/100 != 3 || !strings.HasPrefix(loc, RedirectURI) {
		return nil, fmt.Errorf("the authorization endpoint answered %d, not a redirect to the client: %s", resp.StatusCode, body)
	}
	u, err := url.Parse(loc)
	if err != nil {
		return nil, err
	}
	q := u.Query()
	if e := q.Get("error"); e != "" {
		return nil, fmt.Errorf("authorization refused: %s: %s", e, q.Get("error_description"))
	}
	return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
}

// OAuthRun connects an SDK client named clientName with a fresh
// authorization code handler to url, lists the tools and calls echo with
// text, and returns what it saw.
func OAuthRun(ctx context.Context, t testing.TB, url, version, clientName string, c OAuthClient, text string) []string {
	t.Helper()
	transport := &mcp.StreamableClientTransport{Endpoint: url, OAuthHandler: OAuthHandler(t, c)}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: clientName, Version: "1.0.0"}, nil).Connect(ctx, transport,
		&mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect to %s: %v", url, err)
	}
	defer cs.Close()
	var got []string
	if ir := cs.InitializeResult(); ir != nil {
		got = append(got, "negotiated "+ir.ProtocolVersion)
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list at %s: %v", url, err)
	}
	for _, tool := range tools.Tools {
		got = append(got, "tool "+tool.Name)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": text}})
	if err != nil {
		t.Fatalf("tools/call echo at %s: %v", url, err)
	}
	for _, ct := range res.Content {
		if tc, ok := ct.(*mcp.TextContent); ok {
			got = append(got, "echo "+tc.Text)
		}
	}
	return got
}
