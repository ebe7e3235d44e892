package recorder

import (
	"fmt"
	"net/http"
	"testing"
)

// TestRedactor_HeaderNamesBounded: a client that sends new header names
// all the time grows the Redactor's memory of names to maxSecretNames and
// no further, and every name is still decided, remembered or not.
func TestRedactor_HeaderNamesBounded(t *testing.T) {
	var r Redactor
	for i := range 4 * maxSecretNames {
		plain, secret := fmt.Sprintf("X-Plain-%d", i), fmt.Sprintf("X-Session-Token-%d", i)
		for range 2 { // decided, then remembered (or decided again)
			got := r.Header(http.Header{plain: {"v"}, secret: {"s"}})
			if got.Get(plain) != "v" || got.Get(secret) == "s" {
				t.Fatalf("request %d: stored %s=%q, %s=%q; want the first as sent, the second redacted", i, plain, got.Get(plain), secret, got.Get(secret))
			}
		}
	}
	if n := len(r.secret); n != maxSecretNames {
		t.Errorf("remembered %d names; want %d", n, maxSecretNames)
	}
}

// TestRedactor_PlaceholderStable: placeholders made with a reused HMAC
// stay the same for the same value and differ for different values.
func TestRedactor_PlaceholderStable(t *testing.T) {
	var r Redactor
	a, b := r.placeholder("tok-a"), r.placeholder("tok-b")
	for range 3 {
		if got := r.placeholder("tok-a"); got != a {
			t.Fatalf("placeholder(tok-a) = %q, then %q", a, got)
		}
	}
	if a == b {
		t.Errorf("tok-a and tok-b both stored as %q", a)
	}
}
