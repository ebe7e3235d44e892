package authwire

import (
	"net/http"
	"net/url"
	"testing"
)

// TestExchangeKey: what differs from run to run does not count, a scope is
// a set, a redacted value equals any other, and what stays counts.
func TestExchangeKey(t *testing.T) {
	const form = "application/x-www-form-urlencoded"
	base := ExchangeKey("POST", "/token", "", form, []byte("grant_type=authorization_code&code=a&code_verifier=v&scope=x+y&client_id=REDACTED-1"))
	for name, body := range map[string]string{
		"OtherRunValues": "grant_type=authorization_code&code=b&code_verifier=w&scope=x+y&client_id=REDACTED-1",
		"ScopeOrder":     "grant_type=authorization_code&code=a&code_verifier=v&scope=y+x&client_id=REDACTED-1",
		"OtherRedacted":  "grant_type=authorization_code&code=a&code_verifier=v&scope=x+y&client_id=REDACTED-2",
	} {
		if got := ExchangeKey("POST", "/token", "", form, []byte(body)); got != base {
			t.Errorf("%s: ExchangeKey = %q; want %q", name, got, base)
		}
	}
	for name, got := range map[string]string{
		"OtherGrant":  ExchangeKey("POST", "/token", "", form, []byte("grant_type=refresh_token&scope=x+y&client_id=REDACTED-1")),
		"OtherPath":   ExchangeKey("POST", "/other", "", form, []byte("grant_type=authorization_code&scope=x+y&client_id=REDACTED-1")),
		"JSONNotRead": ExchangeKey("POST", "/token", "", "application/json", []byte("grant_type=authorization_code&scope=x+y&client_id=REDACTED-1")),
	} {
		if got == base {
			t.Errorf("%s: ExchangeKey = %q, the same as the base's", name, got)
		}
	}
}

// TestAuthorizeBack: a relayed answer gives its parameters back (iss
// naming the replay's issuer where the recorder had rewritten it), a
// browser login the code of the recording, both with the live state.
func TestAuthorizeBack(t *testing.T) {
	live := url.Values{"redirect_uri": {"http://127.0.0.1:9/cb"}, "state": {"live-state"}}
	relayed := http.Header{AuthorizeHeader: {AuthorizeRelayed}, "Location": {"http://client/cb?code=REDACTED-1&state=old&iss=http://as"}, "Mcpvcr-Rewritten": {"iss=http://as"}}
	loc, status, ok := AuthorizeBack(live, relayed, http.StatusSeeOther, "http://replay/issuer", func() string { t.Error("code() called for a relayed answer"); return "" })
	u, _ := url.Parse(loc)
	if q := u.Query(); !ok || status != http.StatusSeeOther || u.Host != "127.0.0.1:9" || q.Get("code") != "REDACTED-1" || q.Get("state") != "live-state" || q.Get("iss") != "http://replay/issuer" {
		t.Errorf("AuthorizeBack(relayed) = %q, %d, %v", loc, status, ok)
	}
	loc, status, ok = AuthorizeBack(live, http.Header{}, http.StatusOK, "", func() string { return "recorded-code" })
	u, _ = url.Parse(loc)
	if q := u.Query(); !ok || status != http.StatusFound || q.Get("code") != "recorded-code" || q.Get("state") != "live-state" || q.Has("iss") {
		t.Errorf("AuthorizeBack(browser) = %q, %d, %v", loc, status, ok)
	}
	if _, _, ok := AuthorizeBack(url.Values{"redirect_uri": {"/relative"}}, http.Header{}, 0, "", func() string { return "" }); ok {
		t.Error("AuthorizeBack(relative redirect_uri) succeeded")
	}
}
