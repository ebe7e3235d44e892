package authwire

import (
	"encoding/json"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRewriteChallenges(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"Quoted", `Bearer resource_metadata="http://up:1/.well-known/oauth-protected-resource/mcp", scope="a b"`,
			`Bearer resource_metadata="http://proxy:2/.well-known/oauth-protected-resource/mcp", scope="a b"`},
		{"Token", `Bearer error="insufficient_scope", Resource_Metadata=http://up:1/x`,
			`Bearer error="insufficient_scope", Resource_Metadata=http://proxy:2/x`},
		{"None", `Bearer realm="x"`, `Bearer realm="x"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := RewriteChallenges([]string{tt.in}, "http://proxy:2")[0]; got != tt.want {
				t.Errorf("RewriteChallenges(%q) = %q; want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestResourceMetadataURLs(t *testing.T) {
	got := ResourceMetadataURLs([]string{
		`Bearer resource_metadata="http://up:1/custom/prm", scope="a b"`,
		`Bearer realm="x"`,
		`Bearer error="insufficient_scope", Resource_Metadata=http://other:3/.well-known/oauth-protected-resource`,
	})
	want := []string{"http://up:1/custom/prm", "http://other:3/.well-known/oauth-protected-resource"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ResourceMetadataURLs mismatch (-want +got):\n%s", diff)
	}
}

func TestRewriteResourceMetadata(t *testing.T) {
	in := `{"resource":"http://up:1/mcp", "authorization_servers" : ["http://as:3/t"],"scopes_supported":["a"]}`
	got, md, err := RewriteResourceMetadata([]byte(in), "http://proxy:2", true)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"resource":"http://proxy:2/mcp", "authorization_servers" : ["http://proxy:2/_mcpvcr/as/` + FrontID("http://as:3/t") + `"],"scopes_supported":["a"]}`
	if string(got) != want {
		t.Errorf("RewriteResourceMetadata = %s; want %s", got, want)
	}
	if diff := cmp.Diff(ResourceMetadata{Resource: "http://up:1/mcp", ClientResource: "http://proxy:2/mcp", Issuers: []string{"http://as:3/t"}}, md); diff != "" {
		t.Errorf("metadata mismatch (-want +got):\n%s", diff)
	}
}

func TestRewriteAuthServerMetadata(t *testing.T) {
	in := `{"issuer":"http://as:3/t","authorization_endpoint":"http://as:3/t/authorize","token_endpoint":"http://as:3/t/token","jwks_uri":"http://as:3/jwks"}`
	got, real, err := RewriteAuthServerMetadata([]byte(in), "http://proxy:2/_mcpvcr/as/ab")
	if err != nil {
		t.Fatal(err)
	}
	want := `{"issuer":"http://proxy:2/_mcpvcr/as/ab","authorization_endpoint":"http://proxy:2/_mcpvcr/as/ab/authorization_endpoint","token_endpoint":"http://proxy:2/_mcpvcr/as/ab/token_endpoint","jwks_uri":"http://as:3/jwks"}`
	if string(got) != want {
		t.Errorf("RewriteAuthServerMetadata = %s; want %s", got, want)
	}
	if diff := cmp.Diff(map[string]string{"authorization_endpoint": "http://as:3/t/authorize", "token_endpoint": "http://as:3/t/token"}, real); diff != "" {
		t.Errorf("endpoints mismatch (-want +got):\n%s", diff)
	}
}

func TestParseFront(t *testing.T) {
	tests := []struct {
		path   string
		want   Front
		ok     bool
		metaOf string // MetadataURL for issuer http://as/t
	}{
		{"/.well-known/oauth-authorization-server/_mcpvcr/as/ab", Front{ID: "ab", WellKnown: AuthServerPath}, true, "http://as/.well-known/oauth-authorization-server/t"},
		{"/.well-known/openid-configuration/_mcpvcr/as/ab", Front{ID: "ab", WellKnown: OpenIDPath}, true, "http://as/.well-known/openid-configuration/t"},
		{"/_mcpvcr/as/ab/.well-known/openid-configuration", Front{ID: "ab", WellKnown: OpenIDPath, Append: true}, true, "http://as/t/.well-known/openid-configuration"},
		{"/_mcpvcr/as/ab/token_endpoint", Front{ID: "ab", Endpoint: "token_endpoint"}, true, ""},
		{"/_mcpvcr/as/ab/other", Front{}, false, ""},
		{"/mcp", Front{}, false, ""},
	}
	for _, tt := range tests {
		got, ok := ParseFront(tt.path)
		if got != tt.want || ok != tt.ok {
			t.Errorf("ParseFront(%q) = %+v, %t; want %+v, %t", tt.path, got, ok, tt.want, tt.ok)
		}
		if tt.metaOf != "" {
			if u, _ := got.MetadataURL("http://as/t"); u != tt.metaOf {
				t.Errorf("ParseFront(%q).MetadataURL = %q; want %q", tt.path, u, tt.metaOf)
			}
		}
	}
}

func TestMapForm(t *testing.T) {
	in := "grant_type=authorization_code&resource=http%3A%2F%2Fproxy%3A2%2Fmcp&code=x"
	got := MapForm(in, "resource", func(v string) string { return Rebase(v, "http://up:1") })
	if want := "grant_type=authorization_code&resource=http%3A%2F%2Fup%3A1%2Fmcp&code=x"; got != want {
		t.Errorf("MapForm = %q; want %q", got, want)
	}
}

func TestEditJSON(t *testing.T) {
	in := "{ \"a\\u0062\" : {\"resource\":\"x\"},\n\t\"resource\"\t:\t\"http://up/mcp\" , \"n\":[1,{\"resource\":2}] }"
	got, err := EditJSON([]byte(in), func(key string, v json.RawMessage) (json.RawMessage, bool) {
		if key == "resource" {
			return json.RawMessage(`"R"`), true
		}
		return nil, false
	})
	if err != nil {
		t.Fatal(err)
	}
	// Only the top-level member changes; nested ones and every other
	// byte stay.
	want := "{ \"a\\u0062\" : {\"resource\":\"x\"},\n\t\"resource\"\t:\t\"R\" , \"n\":[1,{\"resource\":2}] }"
	if string(got) != want {
		t.Errorf("EditJSON = %q; want %q", got, want)
	}
	if _, err := EditJSON([]byte(`[1]`), nil); err == nil {
		t.Error("EditJSON of an array: want an error")
	}
}

func TestIsAuthorizationResponse(t *testing.T) {
	base, _ := url.Parse("http://as:3/authorize?client_id=c")
	tests := []struct {
		name, loc, redirect, state string
		want                       bool
	}{
		{"ToRedirectURI", "http://127.0.0.1:9/cb?code=k&state=s", "http://127.0.0.1:9/cb", "s", true},
		{"ErrorToRedirectURI", "http://127.0.0.1:9/cb?error=access_denied&state=s", "http://127.0.0.1:9/cb", "s", true},
		{"LoginUI", "/login?txn=1", "http://127.0.0.1:9/cb", "s", false},
		{"OtherPath", "http://127.0.0.1:9/other?code=k", "http://127.0.0.1:9/cb", "s", false},
		{"NoRedirectURIButState", "http://app/cb?code=k&state=s", "", "s", true},
		{"NoRedirectURIOwnHost", "http://as:3/consent?code=k&state=s", "", "s", false},
		{"Empty", "", "http://127.0.0.1:9/cb", "s", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := IsAuthorizationResponse(tt.loc, base, tt.redirect, tt.state); got != tt.want {
				t.Errorf("IsAuthorizationResponse(%q, %q, %q) = %v; want %v", tt.loc, tt.redirect, tt.state, got, tt.want)
			}
		})
	}
}

func TestRewriteIss(t *testing.T) {
	tests := []struct {
		name, in, want string
		ok             bool
	}{
		{"Rewritten", "http://c/cb?code=k&iss=http%3A%2F%2Fas%3A3%2Ft&state=s", "http://c/cb?code=k&iss=http%3A%2F%2Fproxy%3A2%2F_mcpvcr%2Fas%2Fab&state=s", true},
		{"TrailingSlash", "http://c/cb?iss=http%3A%2F%2Fas%3A3%2Ft%2F", "http://c/cb?iss=http%3A%2F%2Fproxy%3A2%2F_mcpvcr%2Fas%2Fab", true},
		{"WrongIssuerKept", "http://c/cb?iss=http%3A%2F%2Fevil", "http://c/cb?iss=http%3A%2F%2Fevil", false},
		{"None", "http://c/cb?code=k", "http://c/cb?code=k", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := RewriteIss(tt.in, "http://as:3/t", "http://proxy:2/_mcpvcr/as/ab")
			if got != tt.want || ok != tt.ok {
				t.Errorf("RewriteIss(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
			}
		})
	}
}
