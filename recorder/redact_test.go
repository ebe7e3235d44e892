package recorder_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/mcpvcr/mcpvcr/recorder"
)

func TestRedactor_Body(t *testing.T) {
	r := &recorder.Redactor{}
	bearer := r.Header(map[string][]string{"Authorization": {"Bearer tok-1"}})["Authorization"][0]
	placeholder := strings.TrimPrefix(bearer, "Bearer ")
	tests := []struct {
		name, contentType, in, want string
	}{
		{"TokenAnswer", "application/json; charset=utf-8",
			`{"access_token":"tok-1", "token_type":"Bearer","expires_in":3600,"refresh_token":"rt"}`,
			`{"access_token":"` + placeholder + `", "token_type":"Bearer","expires_in":3600,"refresh_token":"REDACTED-`},
		{"Registration", "application/json",
			`{"client_id":"c1","client_secret":"s","registration_access_token":"rat","token_endpoint_auth_method":"client_secret_basic"}`,
			`{"client_id":"c1","client_secret":"REDACTED-`},
		{"TokenRequest", "application/x-www-form-urlencoded",
			"grant_type=authorization_code&code=abc&code_verifier=ver&redirect_uri=http%3A%2F%2Fx&client_id=c1&client_secret=s",
			"grant_type=authorization_code&code=REDACTED-"},
		{"NotJSON", "text/plain", "code=abc", "code=abc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(r.Body(tt.contentType, []byte(tt.in)))
			if !strings.HasPrefix(got, tt.want) {
				t.Errorf("Body(%q) = %q; want it to start with %q", tt.in, got, tt.want)
			}
			for _, secret := range []string{"tok-1", `"rt"`, `"s"`, `"rat"`, "=abc", "=ver", "=s"} {
				if tt.name != "NotJSON" && strings.Contains(got, secret) {
					t.Errorf("Body(%q) = %q keeps %s", tt.in, got, secret)
				}
			}
			for _, kept := range []string{"token_type", "client_id", "redirect_uri", "token_endpoint_auth_method\":\"client_secret_basic"} {
				if strings.Contains(tt.in, kept) && !strings.Contains(got, kept) {
					t.Errorf("Body(%q) = %q lost %s", tt.in, got, kept)
				}
			}
		})
	}
}

// BenchmarkRedactorHeader: the headers of a typical Streamable HTTP
// request, one of them a credential, as record stores every request's.
func BenchmarkRedactorHeader(b *testing.B) {
	h := http.Header{
		"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"},
		"User-Agent": {"node"}, "Content-Length": {"120"}, "Accept-Encoding": {"gzip, deflate"},
		"Mcp-Session-Id": {"3f0c2a9e-5d1b-4c47-9a43-2b8f1e6d7c50"}, "Mcp-Protocol-Version": {"2025-06-18"},
		"Authorization": {"Bearer abc.def.ghi"},
	}
	var r recorder.Redactor
	b.ReportAllocs()
	for b.Loop() {
		_ = r.Header(h)
	}
}
