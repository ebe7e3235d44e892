package main

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
)

// TestOAuth_PreregisteredNoRegistration: an authorization server without
// dynamic registration (no registration_endpoint, no /register), and the
// Go SDK's client given its pre-registered credentials: recorded, then
// replayed offline, with a confidential client, a public one, and one
// led by protected-resource metadata at a custom location to an issuer
// with a path on another origin.
func TestOAuth_PreregisteredNoRegistration(t *testing.T) {
	parallel(t)
	for _, tt := range []struct {
		name   string
		as     mcptest.AuthServerConfig
		client mcptest.OAuthClient
		cfg    mcptest.ProtectedConfig
	}{
		{name: "Confidential", client: mcptest.OAuthClient{ID: "pre-registered", Secret: "audit-oauth-noreg-secret"}},
		{name: "Basic", as: mcptest.AuthServerConfig{AuthMethods: []string{"client_secret_basic"}},
			client: mcptest.OAuthClient{ID: "pre-registered", Secret: "audit-oauth-noreg-basic-secret", Headless: true}},
		{name: "Public", client: mcptest.OAuthClient{ID: "public-client"}},
		{name: "CustomMetadata/IssuerPath", as: mcptest.AuthServerConfig{Path: "/tenant1", Host: "localhost"},
			client: mcptest.OAuthClient{ID: "pre-registered", Secret: "audit-oauth-noreg-tenant-secret"},
			cfg:    mcptest.ProtectedConfig{MetadataPath: "/custom/resource-metadata"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := testCtx(t)
			tt.as.NoRegistration = true
			as := mcptest.StartAuthServerWith(t, tt.as)
			as.Register(tt.client.ID, tt.client.Secret, mcptest.RedirectURI)
			cfg := tt.cfg
			cfg.AS, cfg.Scopes = as, []string{"mcp:read"}
			p := mcptest.StartProtected(t, cfg)
			db, saw := oauthRecordReplay(t, as, p, func(url, name string) []string {
				return mcptest.OAuthRun(ctx, t, url, mcptest.V20251125, name, tt.client, "pre")
			})
			if !slices.Contains(saw, "echo pre") {
				t.Errorf("the client saw %q", saw)
			}
			show := mcpvcr(t, "", "show", "1", "--cassette", db).stdout
			if strings.Contains(show, "registration") || !strings.Contains(show, "token") {
				t.Errorf("want a token exchange and no registration:\n%s", show)
			}
			stored := mcpvcr(t, "", "export", "--cassette", db).stdout
			for _, secret := range oauthSecrets(as, tt.client.Secret) {
				if strings.Contains(stored, secret) {
					t.Errorf("the export holds the credential %q", secret)
				}
			}
		})
	}
}

// TestOAuth_ConformancePreregistration runs the Go SDK's conformance
// client in its auth/pre-registration scenario against an authorization
// server like the conformance suite's (no registration,
// client_secret_basic only). The client offers a Client ID Metadata
// Document, dynamic registration, and the credentials of
// MCP_CONFORMANCE_CONTEXT when there are some: given them, it records and
// replays offline. Without them it fails with "no configured client
// registration methods are supported by the authorization server" against
// the server itself, and against the replay just the same.
func TestOAuth_ConformancePreregistration(t *testing.T) {
	parallel(t)
	ctx := testCtx(t)
	bin := mcptest.ConformanceClient(t)
	server := mcp.NewServer(&mcp.Implementation{Name: "conformance-target", Version: "1.0.0"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "test-tool", Description: "answers ok"}, conformanceTool)
	as := mcptest.StartAuthServerWith(t, mcptest.AuthServerConfig{NoRegistration: true, AuthMethods: []string{"client_secret_basic"}})
	as.Register("conformance-client", "audit-oauth-conformance-secret", "http://localhost:3000/callback")
	p := mcptest.StartProtected(t, mcptest.ProtectedConfig{AS: as, Server: server, Scopes: []string{"mcp:read"}})
	run := func(url string, credentials bool) (string, error) {
		cmd := exec.CommandContext(ctx, bin, url)
		cmd.Env = append(os.Environ(), "MCP_CONFORMANCE_SCENARIO=auth/pre-registration")
		if credentials {
			cmd.Env = append(cmd.Env, `MCP_CONFORMANCE_CONTEXT={"client_id":"conformance-client","client_secret":"audit-oauth-conformance-secret"}`)
		}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	db, _ := oauthRecordReplay(t, as, p, func(url, _ string) []string {
		if out, err := run(url, true); err != nil {
			t.Fatalf("the conformance client against %s: %v\n%s", url, err, out)
		}
		return []string{"ok"}
	})
	const refusal = "no configured client registration methods are supported by the authorization server"
	if out, err := run(p.URL, false); err == nil || !strings.Contains(out, refusal) {
		t.Errorf("without credentials, against the server itself: %v; want the client to fail with %q:\n%s", err, refusal, out)
	}
	rep := startServing(t, "replay", "--cassette", db, "--listen", "127.0.0.1:0")
	out, err := run(rep.URL+"/mcp", false)
	rep.Stop()
	if err == nil || !strings.Contains(out, refusal) {
		t.Errorf("without credentials, against the replay: %v; want the client to fail with %q, as against the server:\n%s\nreplay stderr:\n%s", err, refusal, out, rep.stderr)
	}
}

// conformanceTool is the conformance client's test-tool: it answers ok.
func conformanceTool(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
}
