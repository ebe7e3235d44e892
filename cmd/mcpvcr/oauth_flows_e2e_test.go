package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/internal/authwire"
	"github.com/mcpvcr/mcpvcr/internal/mcptest"
)

// oauthRecordReplay runs run (a client's whole OAuth flow and MCP calls,
// returning what it saw, under the clientInfo name it is given) directly
// against the protected server p, then through mcpvcr record, then
// against mcpvcr replay of that recording alone with another clientInfo,
// and requires the same results everywhere, replay exiting 0 with
// nothing unmatched and neither peer seeing a request. It returns the
// cassette and what the client saw.
func oauthRecordReplay(t *testing.T, as *mcptest.AuthServer, p *mcptest.Protected, run func(url, name string) []string) (string, []string) {
	t.Helper()
	direct := run(p.URL, "oauth-client")
	db := filepath.Join(t.TempDir(), "oauth.db")
	dumpOnFailure(t, db)
	rec := startServing(t, "record", "--cassette", db, "--upstream", p.URL, "--listen", "127.0.0.1:0")
	recorded := run(rec.URL, "oauth-client")
	if code := rec.Stop(); code != 0 {
		t.Fatalf("mcpvcr record exited %d:\n%s", code, rec.stderr)
	}
	if diff := cmp.Diff(direct, recorded); diff != "" {
		t.Errorf("through mcpvcr record the client saw otherwise than directly (-direct +record):\n%s", diff)
	}
	asBefore, serverBefore := len(as.Requests()), len(p.Requests())
	rep := startServing(t, "replay", "--cassette", db, "--listen", "127.0.0.1:0")
	replayed := run(rep.URL+"/mcp", "another-oauth-client")
	code := rep.Stop()
	if diff := cmp.Diff(recorded, replayed); diff != "" {
		t.Errorf("replay differs from the recording (-record +replay):\n%s\nreplay stderr:\n%s", diff, rep.stderr)
	}
	if code != 0 || !strings.Contains(rep.stderr.String(), " 0 unmatched") || strings.Contains(rep.stderr.String(), "unmatched OAuth") {
		t.Errorf("mcpvcr replay exited %d; want 0 and every client frame matched:\n%s", code, rep.stderr)
	}
	if a, s := len(as.Requests()), len(p.Requests()); a != asBefore || s != serverBefore {
		t.Errorf("replay was not offline: the authorization server got %d requests, the server %d", a-asBefore, s-serverBefore)
	}
	return db, recorded
}

// TestOAuth_TypeScriptClient records and replays the OAuth flows of a
// second, independent client: the TypeScript SDK's client with a
// headless OAuthClientProvider (dynamic registration,
// client_secret_post, PKCE, the code read from the authorization
// endpoint's redirect without following it), run by node, in the
// scenarios of TestOAuth it can play.
func TestOAuth_TypeScriptClient(t *testing.T) {
	parallel(t)
	for _, name := range []string{"PathMetadata/Dynamic/ScopeFromChallenge", "PathMetadata/NoChallengeURL", "RootMetadata/ChallengeURL",
		"OpenID/Appended", "ScopeOmitted", "Iss/Headless"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := testCtx(t)
			as, p := startScenario(t, scenarioNamed(t, name))
			db, saw := oauthRecordReplay(t, as, p, func(url, name string) []string {
				return mcptest.TSOAuthRun(ctx, t, url, name, "from node")
			})
			if !slices.Contains(saw, "echo from node") || !slices.Contains(saw, "tool echo") {
				t.Errorf("the client did not list the tools and call echo: %q", saw)
			}
			show := mcpvcr(t, "", "show", "1", "--cassette", db).stdout
			for _, want := range []string{"registration", "authorize,relayed", "token", "POST 401"} {
				if !strings.Contains(show, want) {
					t.Errorf("show 1 lacks %q:\n%s", want, show)
				}
			}
			stored := mcpvcr(t, "", "export", "--cassette", db).stdout
			for _, secret := range oauthSecrets(as) {
				if strings.Contains(stored, secret) {
					t.Errorf("the export holds the credential %q", secret)
				}
			}
		})
	}
}

// TestOAuth_ScopeRetryLimit: the server refuses every tools/call with 403
// insufficient_scope, even after the client stepped up. The Go SDK's
// client authorizes once more, is refused again and gives up: the call
// fails. The recording shows the same outcome, and replay brings the
// client to it again, offline.
func TestOAuth_ScopeRetryLimit(t *testing.T) {
	parallel(t)
	ctx := testCtx(t)
	as := mcptest.StartAuthServer(t, "")
	p := mcptest.StartProtected(t, mcptest.ProtectedConfig{AS: as, Scopes: []string{"mcp:read"}, StepUp: []string{"mcp:admin"}, RefuseCalls: true})
	db, saw := oauthRecordReplay(t, as, p, func(url, name string) []string {
		transport := &mcp.StreamableClientTransport{Endpoint: url, OAuthHandler: mcptest.OAuthHandler(t, mcptest.OAuthClient{Headless: true})}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1.0.0"}, nil).Connect(ctx, transport, nil)
		if err != nil {
			t.Fatalf("connect to %s: %v", url, err)
		}
		defer cs.Close()
		got := []string{"connected"}
		_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "no"}})
		if err == nil {
			return append(got, "the call succeeded")
		}
		return append(got, "the call was refused")
	})
	if !slices.Contains(saw, "the call was refused") {
		t.Errorf("the client saw %q; want the call refused", saw)
	}
	show := mcpvcr(t, "", "show", "1", "--cassette", db).stdout
	if n := strings.Count(show, "POST 403"); n != 2 {
		t.Errorf("show 1 holds %d refusals 403; want 2 (before and after the step-up):\n%s", n, show)
	}
}

// TestOAuth_AuthorizationServerMoves: during a session the server moves
// to another authorization server; the client's token is refused (401),
// the protected-resource metadata now names the new server, and the Go
// SDK's client goes through a second dance with it (registration
// included) and retries. mcpvcr fronts the new server as it did the old
// one; the replay serves both dances in order.
func TestOAuth_AuthorizationServerMoves(t *testing.T) {
	parallel(t)
	ctx := testCtx(t)
	first, second := mcptest.StartAuthServer(t, ""), mcptest.StartAuthServer(t, "/moved")
	p := mcptest.StartProtected(t, mcptest.ProtectedConfig{AS: first, Scopes: []string{"mcp:read"}})
	db, saw := oauthRecordReplay(t, first, p, func(url, name string) []string {
		p.Move(first)
		transport := &mcp.StreamableClientTransport{Endpoint: url, OAuthHandler: mcptest.OAuthHandler(t, mcptest.OAuthClient{Headless: true})}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1.0.0"}, nil).Connect(ctx, transport, nil)
		if err != nil {
			t.Fatalf("connect to %s: %v", url, err)
		}
		defer cs.Close()
		var got []string
		if _, err := cs.ListTools(ctx, nil); err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		p.Move(second)
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "moved"}})
		if err != nil {
			t.Fatalf("tools/call after the move: %v", err)
		}
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				got = append(got, "echo "+tc.Text)
			}
		}
		return got
	})
	if !slices.Contains(saw, "echo moved") {
		t.Errorf("the client saw %q", saw)
	}
	show := mcpvcr(t, "", "show", "1", "--cassette", db).stdout
	if n := len(regexp.MustCompile(`POST 201 +/_mcpvcr/as/\w+/registration`).FindAllString(show, -1)); n != 2 || len(second.Requests()) == 0 {
		t.Errorf("want a registration with each authorization server, through mcpvcr:\n%s", show)
	}
	if !strings.Contains(show, authwire.FrontPrefix+authwire.FrontID(second.Issuer)) {
		t.Errorf("show 1 does not show the new authorization server fronted:\n%s", show)
	}
}

// TestOAuth_ConformanceClient runs the Go SDK's own conformance client
// (its OAuth scenario: dynamic registration, the authorization URL
// fetched without following redirects, the code read from the Location)
// against a protected server directly, through mcpvcr record, and
// against mcpvcr replay alone: it succeeds each time.
func TestOAuth_ConformanceClient(t *testing.T) {
	parallel(t)
	ctx := testCtx(t)
	bin := mcptest.ConformanceClient(t)
	server := mcp.NewServer(&mcp.Implementation{Name: "conformance-target", Version: "1.0.0"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "test-tool", Description: "answers ok"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
	})
	as := mcptest.StartAuthServer(t, "")
	p := mcptest.StartProtected(t, mcptest.ProtectedConfig{AS: as, Server: server, Scopes: []string{"mcp:read"}})
	oauthRecordReplay(t, as, p, func(url, _ string) []string {
		cmd := exec.CommandContext(ctx, bin, url)
		cmd.Env = append(os.Environ(), "MCP_CONFORMANCE_SCENARIO=auth/metadata-default")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("the conformance client against %s: %v\n%s", url, err, out)
		}
		return []string{"ok"}
	})
}

// TestOAuth_IssAfterBrowserLogin shows the limit of fronting with RFC
// 9207: after a login in the browser the authorization server redirects
// the browser to the client directly, with iss naming the real issuer,
// which the client (shown the fronted one) refuses. mcpvcr record says so
// as it sends the browser there, naming the way out.
func TestOAuth_IssAfterBrowserLogin(t *testing.T) {
	parallel(t)
	ctx := testCtx(t)
	as := mcptest.StartAuthServerWith(t, mcptest.AuthServerConfig{Iss: true, Login: mcptest.LoginRedirect})
	p := mcptest.StartProtected(t, mcptest.ProtectedConfig{AS: as, Scopes: []string{"mcp:read"}})
	db := filepath.Join(t.TempDir(), "iss.db")
	rec := startServing(t, "record", "--cassette", db, "--upstream", p.URL, "--listen", "127.0.0.1:0")
	transport := &mcp.StreamableClientTransport{Endpoint: rec.URL, OAuthHandler: mcptest.OAuthHandler(t, mcptest.OAuthClient{})}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "iss", Version: "1.0.0"}, nil).Connect(ctx, transport, nil)
	if err == nil {
		cs.Close()
		t.Fatal("the client accepted the real issuer's iss; the limit is gone: update the README and this test")
	}
	if !strings.Contains(err.Error(), "does not match expected issuer") {
		t.Errorf("connect failed otherwise than on iss: %v", err)
	}
	rec.Stop()
	if want := "--proxy-auth=false"; !strings.Contains(rec.stderr.String(), "RFC 9207") || !strings.Contains(rec.stderr.String(), want) {
		t.Errorf("mcpvcr record did not warn about iss and name %s:\n%s", want, rec.stderr)
	}
}
