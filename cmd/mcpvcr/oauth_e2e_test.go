package main

import (
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
)

// An OAuth scenario: a protected server, its authorization server, and
// the Go SDK client with its authorization code handler.
type oauthScenario struct {
	name    string
	version string
	cfg     mcptest.ProtectedConfig
	asPath  string              // the issuer's path
	client  mcptest.OAuthClient // pre-registered; zero for dynamic registration
	as      mcptest.AuthServerConfig
	// authorize is how mcpvcr answers the authorization request, as show
	// flags it: the authorization server's answer relayed, or the browser
	// sent there to log in.
	authorize string
	// refresh: the client refreshes its token (a refresh-token grant).
	refresh bool
}

var oauthScenarios = []oauthScenario{
	// 2025-06-18: WWW-Authenticate names the metadata (MUST) and the
	// scope; the metadata is at the path-based location; the client
	// registers dynamically and authenticates with client_secret_post.
	{name: "PathMetadata/Dynamic/ScopeFromChallenge", version: mcptest.V20250618,
		cfg: mcptest.ProtectedConfig{Scopes: []string{"mcp:read"}}},
	// 2025-11-25: no resource_metadata in the challenge, so the client
	// tries the path-based location (404) and then the root one; the
	// scopes come from scopes_supported; the issuer has a path; the client
	// is pre-registered.
	{name: "RootMetadata/Preregistered/ScopesSupported", version: mcptest.V20251125,
		cfg:    mcptest.ProtectedConfig{RootMetadata: true, NoChallengeURL: true, ScopesSupported: []string{"mcp:read", "mcp:tools"}},
		asPath: "/tenant", client: mcptest.OAuthClient{ID: "pre-registered", Secret: "audit-oauth-preregistered-secret"}},
	// Step-up: tools/call needs mcp:write, refused 403 insufficient_scope;
	// the client authorizes again with the larger scope and retries.
	{name: "StepUp", version: mcptest.V20251125,
		cfg: mcptest.ProtectedConfig{Scopes: []string{"mcp:read"}, StepUp: []string{"mcp:write"}}},
	// 2026-07-28: the stateless era; a public pre-registered client.
	{name: "Modern/PublicClient", version: mcptest.V20260728,
		cfg: mcptest.ProtectedConfig{Scopes: []string{"mcp:read"}}, client: mcptest.OAuthClient{ID: "public-client"}},
	// A headless client (as the Go SDK's conformance client): it fetches
	// the authorization URL without following redirects and reads the
	// code from the Location, from an authorization server that approves
	// at once. mcpvcr relays the authorization server's own answer.
	{name: "Headless/ApprovesAtOnce", version: mcptest.V20251125,
		cfg: mcptest.ProtectedConfig{Scopes: []string{"mcp:read"}}, client: mcptest.OAuthClient{Headless: true}, authorize: "relayed"},
	// An authorization server that redirects the browser to its own login
	// UI, binding the login to the browser with a cookie: mcpvcr sends the
	// browser to the real authorization URL, where it logs in.
	{name: "Browser/LoginRedirect", version: mcptest.V20250618,
		cfg: mcptest.ProtectedConfig{Scopes: []string{"mcp:read"}}, as: mcptest.AuthServerConfig{Login: mcptest.LoginRedirect}, authorize: "browser"},
	// An authorization server that answers with an HTML login page.
	{name: "Browser/LoginPage", version: mcptest.V20251125,
		cfg: mcptest.ProtectedConfig{Scopes: []string{"mcp:read"}}, as: mcptest.AuthServerConfig{Login: mcptest.LoginPage}, authorize: "browser"},
	// RFC 9207: the authorization response carries iss, which the client
	// compares with the issuer of the metadata (the fronted one): mcpvcr
	// rewrites it in the relayed Location.
	{name: "Iss/Headless", version: mcptest.V20251125,
		cfg: mcptest.ProtectedConfig{Scopes: []string{"mcp:read"}}, as: mcptest.AuthServerConfig{Iss: true, Path: "/tenant"},
		client: mcptest.OAuthClient{Headless: true}, authorize: "relayed"},
	// Protected-resource metadata at the path-based location with no
	// resource_metadata in WWW-Authenticate, and at the root with it.
	{name: "PathMetadata/NoChallengeURL", version: mcptest.V20251125,
		cfg: mcptest.ProtectedConfig{NoChallengeURL: true, Scopes: []string{"mcp:read"}}, client: mcptest.OAuthClient{Headless: true}},
	{name: "RootMetadata/ChallengeURL", version: mcptest.V20250618,
		cfg: mcptest.ProtectedConfig{RootMetadata: true, Scopes: []string{"mcp:read"}}},
	// Authorization-server metadata at the OpenID location, for an issuer
	// with a path (inserted and appended) and for one without: the client
	// finds nothing at the RFC 8414 location first.
	{name: "OpenID/Inserted", version: mcptest.V20251125, cfg: mcptest.ProtectedConfig{Scopes: []string{"mcp:read"}},
		as: mcptest.AuthServerConfig{Path: "/tenant", Metadata: mcptest.MetadataOpenIDInserted}, client: mcptest.OAuthClient{Headless: true}},
	{name: "OpenID/Appended", version: mcptest.V20251125, cfg: mcptest.ProtectedConfig{Scopes: []string{"mcp:read"}},
		as: mcptest.AuthServerConfig{Path: "/tenant", Metadata: mcptest.MetadataOpenIDAppended}},
	{name: "OpenID/Root", version: mcptest.V20251125, cfg: mcptest.ProtectedConfig{Scopes: []string{"mcp:read"}},
		as: mcptest.AuthServerConfig{Metadata: mcptest.MetadataOpenIDInserted}},
	// No scope in WWW-Authenticate nor in scopes_supported: the client
	// asks for none.
	{name: "ScopeOmitted", version: mcptest.V20251125, client: mcptest.OAuthClient{Headless: true}},
	// A pre-registered confidential client that must use
	// client_secret_basic (the authorization server checks the method).
	{name: "TokenAuth/Basic/Preregistered", version: mcptest.V20251125, cfg: mcptest.ProtectedConfig{Scopes: []string{"mcp:read"}},
		as:     mcptest.AuthServerConfig{AuthMethods: []string{"client_secret_basic"}},
		client: mcptest.OAuthClient{ID: "basic-client", Secret: "audit-oauth-basic-secret", Headless: true}},
	// A Client ID Metadata Document: the client_id is an HTTPS URL that
	// the authorization server resolves.
	{name: "ClientIDMetadataDocument", version: mcptest.V20251125, cfg: mcptest.ProtectedConfig{Scopes: []string{"mcp:read"}},
		as: mcptest.AuthServerConfig{ClientIDMetadata: map[string]mcptest.ClientIDMetadataDocument{
			"https://client.example/mcptest.json": {RedirectURIs: []string{mcptest.RedirectURI}}}},
		client: mcptest.OAuthClient{MetadataURL: "https://client.example/mcptest.json", Headless: true}},
	// 2025-03-26 back-compatibility: no protected-resource metadata, the
	// MCP server's origin is the authorization server, with its metadata
	// there, or none and the default endpoints /authorize, /token and
	// /register.
	{name: "BackCompat/OriginMetadata", version: mcptest.V20250326,
		cfg: mcptest.ProtectedConfig{OriginAS: &mcptest.AuthServerConfig{}, Scopes: []string{"mcp:read"}}, client: mcptest.OAuthClient{Headless: true},
		authorize: "relayed"},
	{name: "BackCompat/DefaultEndpoints", version: mcptest.V20250326,
		cfg: mcptest.ProtectedConfig{OriginAS: &mcptest.AuthServerConfig{Metadata: mcptest.MetadataNone, Login: mcptest.LoginRedirect}}, authorize: "browser"},
	// Tokens that expire at once: the client refreshes before each use.
	{name: "Refresh", version: mcptest.V20251125, cfg: mcptest.ProtectedConfig{Scopes: []string{"mcp:read"}},
		as: mcptest.AuthServerConfig{ExpiresIn: 1}, refresh: true},
}

// scenarioNamed returns the OAuth scenario named name.
func scenarioNamed(t *testing.T, name string) oauthScenario {
	t.Helper()
	for _, sc := range oauthScenarios {
		if sc.name == name {
			return sc
		}
	}
	t.Fatalf("no OAuth scenario %q", name)
	return oauthScenario{}
}

// startScenario starts the authorization server and the protected server
// of sc, with its client pre-registered.
func startScenario(t *testing.T, sc oauthScenario) (*mcptest.AuthServer, *mcptest.Protected) {
	cfg := sc.cfg
	if cfg.OriginAS == nil {
		cfg.AS = startScenarioAS(t, sc)
	}
	p := mcptest.StartProtected(t, cfg)
	if cfg.OriginAS != nil && sc.client.ID != "" {
		p.AS.Register(sc.client.ID, sc.client.Secret, mcptest.RedirectURI)
	}
	return p.AS, p
}

// startScenarioAS starts the authorization server of sc, with its client
// pre-registered.
func startScenarioAS(t *testing.T, sc oauthScenario) *mcptest.AuthServer {
	cfg := sc.as
	if cfg.Path == "" {
		cfg.Path = sc.asPath
	}
	as := mcptest.StartAuthServerWith(t, cfg)
	if sc.client.ID != "" {
		as.Register(sc.client.ID, sc.client.Secret, mcptest.RedirectURI)
	}
	return as
}

// TestOAuth runs each OAuth scenario directly, then twice through mcpvcr
// record (two sessions in one cassette that share their opening frames),
// and requires the same results; then it replays the cassette to a client
// with another clientInfo, which must complete its whole OAuth flow
// against mcpvcr replay alone: neither the server nor the authorization
// server sees a request.
func TestOAuth(t *testing.T) {
	parallel(t)
	for _, sc := range oauthScenarios {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			ctx := testCtx(t)
			as, p := startScenario(t, sc)

			direct := mcptest.OAuthRun(ctx, t, p.URL, sc.version, "oauth-client", sc.client, "first")
			directAS := len(as.Requests())

			db := filepath.Join(t.TempDir(), "oauth.db")
			dumpOnFailure(t, db)
			rec := startServing(t, "record", "--cassette", db, "--upstream", p.URL, "--listen", "127.0.0.1:0")
			recorded := mcptest.OAuthRun(ctx, t, rec.URL, sc.version, "oauth-client", sc.client, "first")
			mcptest.OAuthRun(ctx, t, rec.URL, sc.version, "oauth-client", sc.client, "second")
			if code := rec.Stop(); code != 0 {
				t.Fatalf("mcpvcr record exited %d:\n%s", code, rec.stderr)
			}
			if diff := cmp.Diff(direct, recorded); diff != "" {
				t.Errorf("through mcpvcr record the client saw otherwise than directly (-direct +record):\n%s", diff)
			}
			// The authorization server was fronted: its metadata, token
			// (and registration) exchanges went through the proxy and are
			// recorded, labelled, never malformed.
			if n := len(as.Requests()); n < 2*directAS {
				t.Errorf("the authorization server got %d requests in two recorded runs, %d in one direct run: %v", n, directAS, as.Requests())
			}
			show := mcpvcr(t, "", "show", "1", "--cassette", db)
			for _, want := range []string{"resource-metadata", "as-metadata", "authorize", "token", " http#"} {
				if !strings.Contains(show.stdout, want) {
					t.Errorf("show 1 lacks %q:\n%s", want, show.stdout)
				}
			}
			if sc.authorize != "" && !regexp.MustCompile(`GET 302 +(/_mcpvcr/as/\w+/author|/authorize).*[ ,]authorize,`+sc.authorize+`\n`).MatchString(show.stdout) {
				t.Errorf("show 1 does not flag the authorization request %q:\n%s", sc.authorize, show.stdout)
			}
			tokens := len(regexp.MustCompile(`(?m)= http#\d+ +POST 200 +(/_mcpvcr/as/\w+/token_endpoint|/token )`).FindAllString(show.stdout, -1))
			if len(sc.cfg.StepUp) > 0 && tokens != 2 || tokens == 0 || !strings.Contains(show.stdout, "POST 401") {
				t.Errorf("show 1 lacks the refusals and token exchanges of the scenario:\n%s", show.stdout)
			}
			for _, line := range strings.Split(show.stdout, "\n") {
				if strings.Contains(line, " http#") && strings.Contains(line, "malformed") {
					t.Errorf("an OAuth exchange is flagged malformed: %s", line)
				}
			}
			if sc.refresh && !regexp.MustCompile(`(?m)= http#\d+ +POST 200 +(/_mcpvcr/as/\w+/token_endpoint|/token )`).MatchString(show.stdout) {
				t.Errorf("no token exchange:\n%s", show.stdout)
			}
			if ls := mcpvcr(t, "", "ls", "--cassette", db); strings.Count(ls.stdout, "\n") != 3 {
				t.Errorf("ls: want two sessions:\n%s", ls.stdout)
			}
			if chk := mcpvcr(t, "", "check", db); chk.code != 0 {
				t.Errorf("check found problems (exit %d):\n%s%s", chk.code, chk.stdout, chk.stderr)
			}
			// The recording keeps what the client sent and got and what was
			// forwarded: the token request went upstream for the real
			// resource, and the metadata reached the client rewritten.
			export := mcpvcr(t, "", "export", "--cassette", db).stdout
			if sc.refresh && !strings.Contains(export, "grant_type=refresh_token") {
				t.Errorf("the export holds no refresh-token grant")
			}
			// The redaction audit, for every flow: no credential of the flow
			// is in the cassette or its exports (JSONL and HAR).
			stored := export + mcpvcr(t, "", "export", "--format", "har", "--cassette", db).stdout
			files, _ := filepath.Glob(db + "*")
			for _, f := range files {
				b, _ := os.ReadFile(f)
				stored += string(b)
			}
			for _, secret := range oauthSecrets(as, sc.client.Secret) {
				if strings.Contains(stored, secret) {
					t.Errorf("the cassette or its export holds the credential %q", secret)
				}
			}
			rewritten := `"Mcpvcr-Rewritten":["resource=\"http://127.0.0.1:`
			if sc.cfg.OriginAS != nil {
				rewritten = `"Mcpvcr-Rewritten":["issuer=\"http://127.0.0.1:` // no resource metadata, the origin's
				if sc.cfg.OriginAS.Metadata == mcptest.MetadataNone {
					rewritten = `"Mcpvcr-Forwarded-To":["` + as.Issuer + `/token"]` // no metadata: the default endpoints
				}
			}
			for _, want := range []string{`"Mcpvcr-Forwarded-Resource":["` + p.Resource + `"]`, `"Mcpvcr-Forwarded-To":["` + as.Issuer, rewritten} {
				if !strings.Contains(export, want) {
					t.Errorf("the export lacks %s", want)
				}
			}

			// Replay, offline, to a client with another clientInfo.
			asBefore, serverBefore := len(as.Requests()), len(p.Requests())
			rep := startServing(t, "replay", "--cassette", db, "--listen", "127.0.0.1:0")
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("replay stderr:\n%s", rep.stderr)
				}
			})
			replayed := mcptest.OAuthRun(ctx, t, rep.URL+"/mcp", sc.version, "another-oauth-client", sc.client, "first")
			if want := "point your client at " + rep.URL + "/mcp"; !strings.Contains(rep.stderr.String(), want) {
				t.Errorf("replay did not say %q:\n%s", want, rep.stderr)
			}
			code := rep.Stop()
			if diff := cmp.Diff(recorded, replayed); diff != "" {
				t.Errorf("replay differs from the recording (-record +replay):\n%s\nreplay stderr:\n%s", diff, rep.stderr)
			}
			if code != 0 || !strings.Contains(rep.stderr.String(), " 0 unmatched") {
				t.Errorf("mcpvcr replay exited %d; want 0 and every client frame matched:\n%s", code, rep.stderr)
			}
			if a, s := len(as.Requests()), len(p.Requests()); a != asBefore || s != serverBefore {
				t.Errorf("replay was not offline: the authorization server got %d requests, the server %d", a-asBefore, s-serverBefore)
			}
		})
	}
}

// oauthSecrets are the OAuth credentials a scenario's peers issued or
// received, for the redaction audit.
func oauthSecrets(as *mcptest.AuthServer, extra ...string) []string {
	s := append(as.Secrets(), extra...)
	return slices.DeleteFunc(s, func(v string) bool { return v == "" })
}

// TestOAuth_ProxyAuthOff shows why fronting is the default: with
// --proxy-auth=false the client, which sees mcpvcr as the resource, gets
// from the authorization server (directly, unrecorded) a token for
// mcpvcr's URL, and the server rejects a token issued for another
// audience.
func TestOAuth_ProxyAuthOff(t *testing.T) {
	parallel(t)
	ctx := testCtx(t)
	as := mcptest.StartAuthServer(t, "")
	p := mcptest.StartProtected(t, mcptest.ProtectedConfig{AS: as, Scopes: []string{"mcp:read"}})
	db := filepath.Join(t.TempDir(), "direct.db")
	rec := startServing(t, "record", "--cassette", db, "--upstream", p.URL, "--listen", "127.0.0.1:0", "--proxy-auth=false")
	transport := &mcp.StreamableClientTransport{Endpoint: rec.URL, OAuthHandler: mcptest.OAuthHandler(t, mcptest.OAuthClient{})}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "direct", Version: "1.0.0"}, nil).Connect(ctx, transport, nil)
	if err == nil {
		cs.Close()
		t.Fatal("the client connected with a token issued for mcpvcr's URL; want the server to refuse it")
	}
	if code := rec.Stop(); code != 0 {
		t.Fatalf("mcpvcr record exited %d:\n%s", code, rec.stderr)
	}
	if !slices.Contains(as.Requests(), "POST /token") {
		t.Errorf("the client never asked the authorization server for a token: %v", as.Requests())
	}
	show := mcpvcr(t, "", "show", "1", "--cassette", db).stdout
	if !strings.Contains(show, "resource-metadata") || strings.Contains(show, "token_endpoint") {
		t.Errorf("want the metadata recorded and the token exchange not (it went straight to the authorization server):\n%s", show)
	}
}

// TestOAuth_ReplayUnrecordedExchange asks mcpvcr replay for OAuth metadata
// the recording does not hold: it answers 404 and exits 1, naming it.
func TestOAuth_ReplayUnrecordedExchange(t *testing.T) {
	parallel(t)
	ctx := testCtx(t)
	as := mcptest.StartAuthServer(t, "")
	p := mcptest.StartProtected(t, mcptest.ProtectedConfig{AS: as, Scopes: []string{"mcp:read"}})
	db := filepath.Join(t.TempDir(), "oauth.db")
	rec := startServing(t, "record", "--cassette", db, "--upstream", p.URL, "--listen", "127.0.0.1:0")
	mcptest.OAuthRun(ctx, t, rec.URL, mcptest.V20250618, "oauth-client", mcptest.OAuthClient{}, "first")
	if code := rec.Stop(); code != 0 {
		t.Fatalf("mcpvcr record exited %d:\n%s", code, rec.stderr)
	}
	rep := startServing(t, "replay", "--cassette", db, "--listen", "127.0.0.1:0")
	resp, err := http.Get(rep.URL + "/.well-known/oauth-protected-resource/elsewhere")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("unrecorded metadata answered %s; want 404", resp.Status)
	}
	if code := rep.Stop(); code != 1 || !strings.Contains(rep.stderr.String(), "unmatched OAuth exchange GET /.well-known/oauth-protected-resource/elsewhere") {
		t.Errorf("replay exited %d; want 1 and the unmatched exchange named:\n%s", code, rep.stderr)
	}
}
