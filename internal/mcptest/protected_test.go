package mcptest

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestProtected runs the Go SDK client with its authorization code
// handler against the protected server and the authorization server
// directly: dynamic registration with path-based metadata, and a
// pre-registered client with root metadata and step-up.
func TestProtected(t *testing.T) {
	tests := []struct {
		name   string
		cfg    ProtectedConfig
		asPath string
		client OAuthClient
		want   []string // requests the protected server got
	}{
		{"PathDynamic", ProtectedConfig{Scopes: []string{"mcp:read"}}, "", OAuthClient{}, nil},
		{"PathDynamicStepUp", ProtectedConfig{Scopes: []string{"mcp:read"}, StepUp: []string{"mcp:write"}}, "", OAuthClient{}, nil},
		{"RootPreregisteredStepUp", ProtectedConfig{RootMetadata: true, NoChallengeURL: true, ScopesSupported: []string{"mcp:read"}, StepUp: []string{"mcp:write"}}, "/tenant", OAuthClient{ID: "pre", Secret: "pre-secret"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			as := StartAuthServer(t, tt.asPath)
			if tt.client.ID != "" {
				as.Register(tt.client.ID, tt.client.Secret, RedirectURI)
			}
			tt.cfg.AS = as
			p := StartProtected(t, tt.cfg)
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx,
				&mcp.StreamableClientTransport{Endpoint: p.URL, OAuthHandler: OAuthHandler(t, tt.client)}, nil)
			if err != nil {
				t.Fatalf("connect: %v\nserver: %v\nas: %v", err, p.Requests(), as.Requests())
			}
			defer cs.Close()
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
			if err != nil {
				t.Fatalf("call: %v\nserver: %v\nas: %v", err, p.Requests(), as.Requests())
			}
			if got := res.Content[0].(*mcp.TextContent).Text; got != "hi" {
				t.Errorf("echo = %q; want hi", got)
			}
			t.Logf("server: %v\nas: %v", p.Requests(), as.Requests())
		})
	}
}
