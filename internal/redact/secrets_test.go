package redact

import (
	"fmt"
	"testing"
)

// secretSamples hold one credential of each kind Text finds by format.
var secretSamples = map[string]string{
	KindAWSKeyID:   "id AKIAIOSFODNN7EXAMPLE here",
	KindAWSSecret:  "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n",
	KindSlack:      "xoxb-1234-abcd",
	KindGitHub:     "ghp_R2d2C3poBb8AaKk9Zz1Yy0Xx7Ww6Vv5Uu4",
	KindPrivateKey: "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBk\nAoGCCqGSM49\n-----END EC PRIVATE KEY-----",
	KindJWT:        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJl",
	KindGoogleKey:  "AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW",
	KindStripe:     "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
	KindOAuthCode:  "http://127.0.0.1/cb?code=SplxlOBeZQ&state=1",
	KindKeyword:    `{"Password": "hunter2"} and PIN: 4821`,
}

// TestSecrets_Kinds: each sample is found as its kind, and replay's mask
// of the scrubbed text is the mask of the original (so that a scrubbed
// session still matches the client that recorded it).
func TestSecrets_Kinds(t *testing.T) {
	for kind, s := range secretSamples {
		var kinds []string
		n := 0
		out := Text(s, func(k, found string) string {
			kinds = append(kinds, k)
			n++
			return "REDACTED-" + fmt.Sprintf("%012x", n)
		})
		if len(kinds) == 0 || kinds[0] != kind {
			t.Errorf("%q: found %v; want %s first", s, kinds, kind)
		}
		if MaskText(out) != MaskText(s) {
			t.Errorf("%q: MaskText of the scrubbed %q = %q; of the original %q", s, out, MaskText(out), MaskText(s))
		}
	}
}

// TestSecrets_Words: words and identifiers near secret names are kept.
func TestSecrets_Words(t *testing.T) {
	for _, s := range []string{
		`{"tokens": 512, "token_type": "Bearer", "progressToken": "p-1"}`,
		"pin: true", "the password is required", "spinning: 3", "bypass: off",
		"123e4567-e89b-12d3-a456-426614174000",
		"internationalization_and_localization",
		"tools/call for resource templates/list",
		"code review of src/main.go",
	} {
		if got := Text(s, func(k, found string) string { return "<" + k + ">" }); got != s {
			t.Errorf("Text(%q) = %q; want it kept", s, got)
		}
	}
}
