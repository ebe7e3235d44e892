package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
)

// TestOAuth_CustomMetadataLocation: the protected-resource metadata is at
// a custom location of the server's origin (not a well-known one), named
// only by resource_metadata in WWW-Authenticate, and names an
// authorization server on another origin whose issuer has a path
// (http://localhost:PORT/tenant1, its metadata at the RFC 8414 inserted
// location). Through mcpvcr record the client must be led to that
// metadata, rewritten, and to the fronted authorization server; replay
// serves it all offline. Both SDK clients.
func TestOAuth_CustomMetadataLocation(t *testing.T) {
	parallel(t)
	for _, client := range []string{"go", "typescript"} {
		t.Run(client, func(t *testing.T) {
			t.Parallel()
			ctx := testCtx(t)
			as := mcptest.StartAuthServerWith(t, mcptest.AuthServerConfig{Path: "/tenant1", Host: "localhost"})
			p := mcptest.StartProtected(t, mcptest.ProtectedConfig{AS: as, MetadataPath: "/custom/resource-metadata", Scopes: []string{"mcp:read"}})
			db, saw := oauthRecordReplay(t, as, p, func(url, name string) []string {
				if client == "typescript" {
					return mcptest.TSOAuthRun(ctx, t, url, name, "custom", mcptest.TSKeepDiscovery)
				}
				return mcptest.OAuthRun(ctx, t, url, mcptest.V20251125, name, mcptest.OAuthClient{}, "custom")
			})
			if !slices.Contains(saw, "echo custom") {
				t.Errorf("the client saw %q", saw)
			}
			show := mcpvcr(t, "", "show", "1", "--cassette", db).stdout
			for _, want := range []string{"/custom/resource-metadata", "as-metadata", "registration", "token"} {
				if !strings.Contains(show, want) {
					t.Errorf("show 1 lacks %q:\n%s", want, show)
				}
			}
			if reqs := strings.Join(p.Requests(), "\n"); strings.Contains(reqs, "/.well-known/oauth-authorization-server") {
				t.Errorf("the resource server was asked for authorization-server metadata:\n%s", reqs)
			}
		})
	}
}
