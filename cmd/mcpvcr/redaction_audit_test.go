package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
)

// A credential of the audit, in the form it travels in.
type credential struct {
	form  string
	value string // the bytes that must never reach the cassette
	// forwarded: the upstream must receive value unchanged. Hop-by-hop
	// headers (Proxy-Authorization) end at the proxy, as they should.
	forwarded bool
}

// The audit's credentials. Each value is unique, so that finding it
// anywhere in the cassette names the form that leaked.
var auditCredentials = []credential{
	{"Authorization: Bearer", "audit-bearer-0001", true},
	{"Authorization: Basic", base64.StdEncoding.EncodeToString([]byte("alice:audit-basic-0002")), true},
	{"Proxy-Authorization: Basic", base64.StdEncoding.EncodeToString([]byte("proxy:audit-proxy-0003")), false},
	{"Cookie", "audit-cookie-0004", true},
	{"Set-Cookie (answer)", "audit-setcookie-0005", false},
	{"X-Api-Key", "audit-apikey-0006", true},
	{"X-Auth-Token", "audit-authtoken-0007", true},
	{"--redact-header X-Tenant-Signature", "audit-tenantsig-0008", true},
	{"query access_token", "audit-querytoken-0009", true},
	{"--redact-query tenant", "audit-tenantq-0010", true},
	{"token in the HTTP+SSE endpoint URL", "audit-endpoint-0011", true},
	{"password in the --upstream URL", "audit-userinfo-0012", false},
	{"stdio child: --token VALUE", "audit-argtoken-0013", false},
	{"stdio child: --api-key=VALUE", "audit-argkey-0014", false},
	{"stdio child: URL argument ?key=", "audit-argurl-0015", false},
	{"Ocp-Apim-Subscription-Key", "audit-subkey-0016", true},
	{"X-Client-Secret", "audit-clientsecret-0017", true},
	{"tool argument password", "audit-bodypw-0018", true},
	{"tool argument api_key", "audit-bodykey-0019", true},
}

func auditSecret(tb testing.TB, form string) string {
	for _, c := range auditCredentials {
		if c.form == form {
			return c.value
		}
	}
	tb.Fatalf("no audit credential %q", form)
	return ""
}

// credentialHeaders is an http.RoundTripper that sends the audit's
// request credentials with every request, as an authenticated client
// would, and keeps the answers' Set-Cookie values.
type credentialHeaders struct {
	header     http.Header
	setCookies *syncBuffer
}

func (c credentialHeaders) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, vs := range c.header {
		r.Header[k] = vs
	}
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil {
		fmt.Fprintln(c.setCookies, resp.Header.Values("Set-Cookie"))
	}
	return resp, err
}

// auditUpstream serves the Go SDK test server over Streamable HTTP
// (/mcp) and HTTP+SSE (/sse). It writes every request's URL and headers
// to seen, answers with a session cookie, and puts a token into the
// HTTP+SSE endpoint URL, as servers that authenticate their message
// endpoint do.
func auditUpstream(tb testing.TB, seen *syncBuffer) string {
	server := mcptest.NewServer(mcptest.V1)
	get := func(*http.Request) *mcp.Server { return server }
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(get, nil))
	mux.Handle("/sse", mcp.NewSSEHandler(get, nil))
	token := auditSecret(tb, "token in the HTTP+SSE endpoint URL")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		fmt.Fprintf(seen, "%s %s %v %s\n", r.Method, r.URL, r.Header, body)
		w.Header().Add("Set-Cookie", "session="+auditSecret(tb, "Set-Cookie (answer)")+"; HttpOnly")
		mux.ServeHTTP(&endpointToken{ResponseWriter: w, token: token}, r)
	}))
	tb.Cleanup(srv.Close)
	return srv.URL
}

// endpointToken adds token=... to the query of an HTTP+SSE endpoint event.
type endpointToken struct {
	http.ResponseWriter
	token string
	done  bool
}

func (w *endpointToken) Write(p []byte) (int, error) {
	if !w.done && bytes.HasPrefix(p, []byte("event: endpoint\n")) {
		w.done = true
		q := bytes.Replace(p, []byte("?sessionid="), []byte("?token="+w.token+"&sessionid="), 1)
		if _, err := w.ResponseWriter.Write(q); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	return w.ResponseWriter.Write(p)
}

func (w *endpointToken) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// TestRedactionAudit records, through the mcpvcr binary and real Go SDK
// peers, traffic carrying credentials in nineteen forms: request headers
// (bearer, basic, proxy basic, cookie, API-key and token headers, a
// *-Key and a *-Secret header, one named by --redact-header), the
// answer's Set-Cookie, tokens in query strings (one named by
// --redact-query), a token in an HTTP+SSE endpoint URL (and so in every
// POST to it), a password in the upstream URL, a stdio server's
// command-line arguments, and password and api_key tool arguments. The
// peers get every forwarded credential unchanged; none of their bytes is
// in the cassette's files, its JSONL export, what show prints, or a
// scrubbed copy (which passes check).
func TestRedactionAudit(t *testing.T) {
	parallel(t)
	ctx := testCtx(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "audit.db")
	dumpOnFailure(t, db)
	seen, setCookies := &syncBuffer{}, &syncBuffer{}
	base := auditUpstream(t, seen)
	record := func(path string, hdr http.Header, query string, transport func(endpoint string, c *http.Client) mcp.Transport) {
		t.Helper()
		up, _ := url.Parse(base + path)
		up.User = url.UserPassword("audit", auditSecret(t, "password in the --upstream URL"))
		rec := startServing(t, "record", "--cassette", db, "--upstream", up.String(), "--listen", "127.0.0.1:0",
			"--redact-header", "X-Tenant-Signature", "--redact-query", "tenant")
		client := &http.Client{Transport: credentialHeaders{header: hdr, setCookies: setCookies}}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "audit", Version: "1.0.0"}, nil).Connect(ctx, transport(rec.URL+query, client), nil)
		if err != nil {
			t.Fatalf("connect through mcpvcr record: %v\n%s", err, rec.stderr)
		}
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}}); err != nil {
			t.Errorf("call echo: %v", err)
		}
		// Secrets among a tool's arguments: the server may refuse
		// arguments its schema lacks; the request is recorded either way.
		_, _ = cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi",
			"password": auditSecret(t, "tool argument password"), "api_key": auditSecret(t, "tool argument api_key")}})
		cs.Close()
		if code := rec.Stop(); code != 0 {
			t.Fatalf("mcpvcr record exited %d:\n%s", code, rec.stderr)
		}
	}

	// Streamable HTTP: bearer token, cookie, API-key headers, tokens in
	// the query string.
	record("/mcp", http.Header{
		"Authorization":             {"Bearer " + auditSecret(t, "Authorization: Bearer")},
		"Cookie":                    {"sid=" + auditSecret(t, "Cookie")},
		"X-Api-Key":                 {auditSecret(t, "X-Api-Key")},
		"X-Auth-Token":              {auditSecret(t, "X-Auth-Token")},
		"X-Tenant-Signature":        {auditSecret(t, "--redact-header X-Tenant-Signature")},
		"Ocp-Apim-Subscription-Key": {auditSecret(t, "Ocp-Apim-Subscription-Key")},
		"X-Client-Secret":           {auditSecret(t, "X-Client-Secret")},
	}, "?access_token="+auditSecret(t, "query access_token")+"&tenant="+auditSecret(t, "--redact-query tenant"),
		func(endpoint string, c *http.Client) mcp.Transport {
			return &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: c}
		})
	// HTTP+SSE: basic auth, proxy basic auth, the endpoint's token.
	record("/sse", http.Header{
		"Authorization":       {"Basic " + auditSecret(t, "Authorization: Basic")},
		"Proxy-Authorization": {"Basic " + auditSecret(t, "Proxy-Authorization: Basic")},
	}, "", func(endpoint string, c *http.Client) mcp.Transport {
		return &mcp.SSEClientTransport{Endpoint: endpoint, HTTPClient: c}
	})
	// stdio: a server started with credentials on its command line.
	recordScript(ctx, t, db, mcptest.V20251125, mcp.NewClient(&mcp.Implementation{Name: "audit", Version: "1.0.0"}, nil),
		func(ctx context.Context, cs *mcp.ClientSession) error {
			_, err := cs.ListTools(ctx, nil)
			return err
		},
		"sh", "-c", `exec "$0"`, mcptest.BuildServer(t),
		"--token", auditSecret(t, "stdio child: --token VALUE"),
		"--api-key="+auditSecret(t, "stdio child: --api-key=VALUE"),
		"https://api.example/v1?key="+auditSecret(t, "stdio child: URL argument ?key="))

	// What was forwarded is unchanged.
	for _, c := range auditCredentials {
		if c.forwarded && !strings.Contains(seen.String(), c.value) {
			t.Errorf("%s: the upstream never got %q; the proxy must forward credentials unchanged", c.form, c.value)
		}
	}
	if !strings.Contains(setCookies.String(), auditSecret(t, "Set-Cookie (answer)")) {
		t.Errorf("the client never got the server's Set-Cookie unchanged:\n%s", setCookies)
	}

	// What was stored holds none of it.
	places := map[string]string{}
	files, _ := filepath.Glob(db + "*")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		places[filepath.Base(f)] = string(b)
	}
	ls := mcpvcr(t, "", "ls", "--cassette", db)
	if ls.code != 0 || strings.Count(ls.stdout, "\n") != 4 {
		t.Fatalf("ls: want three sessions (http, sse, stdio), got exit %d:\n%s%s", ls.code, ls.stdout, ls.stderr)
	}
	places["ls"] = ls.stdout
	places["export"] = mcpvcr(t, "", "export", "--cassette", db).stdout
	for i := 1; i <= 3; i++ {
		places[fmt.Sprintf("show %d", i)] = mcpvcr(t, "", "show", fmt.Sprint(i), "--cassette", db).stdout
	}
	// A scrubbed copy for sharing holds none of it either, and is sound.
	scrubbed := filepath.Join(dir, "shared.db")
	if res := mcpvcr(t, "", "scrub", db, "-o", scrubbed); res.code != 0 {
		t.Fatalf("scrub exited %d:\n%s", res.code, res.stderr)
	}
	if res := mcpvcr(t, "", "check", scrubbed); res.code != 0 {
		t.Errorf("check of the scrubbed copy exited %d:\n%s%s", res.code, res.stdout, res.stderr)
	}
	places["scrub export"] = mcpvcr(t, "", "export", "--cassette", scrubbed).stdout
	scrubFiles, _ := filepath.Glob(scrubbed + "*")
	for _, f := range scrubFiles {
		b, _ := os.ReadFile(f)
		places["scrub "+filepath.Base(f)] = string(b)
	}
	for _, c := range auditCredentials {
		for place, content := range places {
			if strings.Contains(content, c.value) {
				t.Errorf("%s: %s holds %q", c.form, place, c.value)
			}
		}
	}
	// The redacted things are there, as placeholders: the audit looked at
	// a cassette that recorded them.
	export := places["export"]
	for _, want := range []string{"Bearer REDACTED-", "Basic REDACTED-", "access_token=REDACTED-", "tenant=REDACTED-", "token=REDACTED-", "audit:REDACTED-", "--token REDACTED-", "--api-key=REDACTED-", "key=REDACTED-", `"X-Tenant-Signature":["REDACTED-`,
		`"Ocp-Apim-Subscription-Key":["REDACTED-`, `"X-Client-Secret":["REDACTED-`, `\"password\":\"REDACTED-`, `\"api_key\":\"REDACTED-`} {
		if !strings.Contains(export, want) {
			t.Errorf("the export lacks %q: the credential was not recorded at all, or not as a placeholder", want)
		}
	}
}

// TestRedactionAudit_OAuth records OAuth flows through mcpvcr record, with
// the authorization server fronted: dynamic registration (client secret
// and registration access token issued, client_secret_basic at the token
// endpoint) with step-up, and a pre-registered client using
// client_secret_post. Every credential of the flows (codes, code
// verifiers, access and refresh tokens, client secrets, registration
// access tokens, Authorization values) reached its peer unchanged, since
// the flows succeeded, and none of their bytes is in the cassette's
// files, its export, ls or show. The access token is stored as the same
// placeholder in the token answer and in the Authorization header of the
// requests that carried it, so replay can hand it out and recognise it.
func TestRedactionAudit_OAuth(t *testing.T) {
	parallel(t)
	ctx := testCtx(t)
	db := filepath.Join(t.TempDir(), "oauth-audit.db")
	dumpOnFailure(t, db)
	var secrets []string
	names := []string{"StepUp", "RootMetadata/Preregistered/ScopesSupported", "Headless/ApprovesAtOnce", "Browser/LoginRedirect", "Iss/Headless"}
	for _, name := range names {
		sc := scenarioNamed(t, name)
		as := startScenarioAS(t, sc)
		cfg := sc.cfg
		cfg.AS = as
		p := mcptest.StartProtected(t, cfg)
		rec := startServing(t, "record", "--cassette", db, "--upstream", p.URL, "--listen", "127.0.0.1:0")
		mcptest.OAuthRun(ctx, t, rec.URL, sc.version, "audit", sc.client, "audit")
		if code := rec.Stop(); code != 0 {
			t.Fatalf("mcpvcr record exited %d:\n%s", code, rec.stderr)
		}
		secrets = append(secrets, oauthSecrets(as)...)
	}
	// The TypeScript SDK's client, headless.
	{
		as := mcptest.StartAuthServer(t, "")
		p := mcptest.StartProtected(t, mcptest.ProtectedConfig{AS: as, Scopes: []string{"mcp:read"}})
		rec := startServing(t, "record", "--cassette", db, "--upstream", p.URL, "--listen", "127.0.0.1:0")
		mcptest.TSOAuthRun(ctx, t, rec.URL, "audit", "audit")
		if code := rec.Stop(); code != 0 {
			t.Fatalf("mcpvcr record exited %d:\n%s", code, rec.stderr)
		}
		secrets = append(secrets, oauthSecrets(as)...)
	}
	sessions := len(names) + 1
	if len(secrets) < 12 {
		t.Fatalf("the flows used only %d credentials: %v", len(secrets), secrets)
	}
	places := map[string]string{}
	files, _ := filepath.Glob(db + "*")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		places[filepath.Base(f)] = string(b)
	}
	places["ls"] = mcpvcr(t, "", "ls", "--cassette", db).stdout
	places["export"] = mcpvcr(t, "", "export", "--cassette", db).stdout
	for i := 1; i <= sessions; i++ {
		places[fmt.Sprintf("show %d", i)] = mcpvcr(t, "", "show", fmt.Sprint(i), "--cassette", db).stdout
	}
	for _, s := range secrets {
		for place, content := range places {
			if strings.Contains(content, s) {
				t.Errorf("%s holds the credential %q", place, s)
			}
		}
	}
	export := places["export"]
	for _, want := range []string{`access_token\":\"REDACTED-`, `refresh_token\":\"REDACTED-`, `client_secret\":\"REDACTED-`,
		`registration_access_token\":\"REDACTED-`, "code=REDACTED-", "code_verifier=REDACTED-", "client_secret=REDACTED-",
		"Basic REDACTED-", "Bearer REDACTED-", `token_type\":\"Bearer`, `"Location":["http://127.0.0.1:9/oauth/callback?code=REDACTED-`} {
		if !strings.Contains(export, want) {
			t.Errorf("the export lacks %q: the credential was not recorded at all, or not as a placeholder", want)
		}
	}
	handed := regexp.MustCompile(`\\"access_token\\":\\"(REDACTED-[0-9a-f]+)`).FindAllStringSubmatch(export, -1)
	if len(handed) != sessions+1 {
		t.Errorf("found %d access tokens handed out; want %d (two for step-up, one for each other flow)", len(handed), sessions+1)
	}
	for _, m := range handed {
		if !strings.Contains(export, "Bearer "+m[1]) {
			t.Errorf("the access token %s handed out is never presented as Bearer %s: placeholders are not stable", m[1], m[1])
		}
	}
}
