package recorder

import (
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// TestAuthLinks follows two interleaved dances through the links: each
// step finds its own session by what the previous steps bound, never by
// which session was refused last.
func TestAuthLinks(t *testing.T) {
	h := &HTTP{}
	l := &h.links
	a, b := &httpSession{}, &httpSession{}
	l.refused(a)
	l.refused(b)

	// Metadata links nothing: one each, oldest first.
	if got := l.next("/.well-known/oauth-protected-resource/mcp"); got != a {
		t.Fatalf("first metadata request went to %p; want a", got)
	}
	if got := l.next("/.well-known/oauth-protected-resource/mcp"); got != b {
		t.Fatalf("second metadata request went to %p; want b", got)
	}
	// Registration answers hand out client ids.
	l.bindAnswer(a, []byte(`{"client_id":"ca","client_secret":"x"}`))
	l.bindAnswer(b, []byte(`{"client_id":"cb"}`))

	verifier := func(s string) (v, challenge string) {
		sum := sha256.Sum256([]byte(s))
		return s, base64.RawURLEncoding.EncodeToString(sum[:])
	}
	va, cha := verifier("verifier-a")
	vb, chb := verifier("verifier-b")
	authorize := func(client, state, challenge string) *http.Request {
		return httptest.NewRequest("GET", "/_mcpvcr/as/x/authorization_endpoint?"+url.Values{
			"client_id": {client}, "state": {state}, "code_challenge": {challenge}}.Encode(), nil)
	}
	// b authorizes first.
	for _, tt := range []struct {
		r    *http.Request
		want *httpSession
	}{{authorize("cb", "sb", chb), b}, {authorize("ca", "sa", cha), a}} {
		keys := requestKeys(tt.r, nil)
		if got := l.lookup(keys); got != tt.want {
			t.Errorf("authorization request %s went to the wrong session", tt.r.URL)
		}
		l.bindAuthorize(tt.want, keys)
	}
	l.bind(a, linkCode, "code-a")
	// A token request of a pre-registered client (its id links nothing):
	// its verifier names the challenge.
	token := func(form url.Values) *http.Request {
		r := httptest.NewRequest("POST", "/_mcpvcr/as/x/token_endpoint", strings.NewReader(form.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		return r
	}
	body := url.Values{"grant_type": {"authorization_code"}, "code": {"code-b"}, "code_verifier": {vb}, "client_id": {"shared"}}
	if got := l.lookup(requestKeys(token(body), []byte(body.Encode()))); got != b {
		t.Errorf("token request with b's verifier went to the wrong session")
	}
	body = url.Values{"grant_type": {"authorization_code"}, "code": {"code-a"}, "code_verifier": {va}}
	if got := l.lookup(requestKeys(token(body), []byte(body.Encode()))); got != a {
		t.Errorf("token request with a's code went to the wrong session")
	}
	// Token answers: the retried initialize and refresh grants follow.
	l.bindAnswer(a, []byte(`{"access_token":"at-a","refresh_token":"rt-a"}`))
	r := httptest.NewRequest("POST", "/mcp", nil)
	r.Header.Set("Authorization", "Bearer at-a")
	if got := h.retrySession(r); got != a {
		t.Errorf("the initialize presenting a's token joins %p; want a", got)
	}
	body = url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"rt-a"}}
	if got := l.lookup(requestKeys(token(body), []byte(body.Encode()))); got != a {
		t.Errorf("a's refresh grant went to the wrong session")
	}
}
