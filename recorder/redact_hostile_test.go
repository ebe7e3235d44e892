package recorder_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/mcpvcr/mcpvcr/recorder"
)

// TestRedactor_CredentialHeaders: headers that carry credentials under
// names without "token" or "key" (issue #48) are stored redacted; the
// challenge and the protocol identifiers are kept.
func TestRedactor_CredentialHeaders(t *testing.T) {
	r := &recorder.Redactor{}
	secret := []string{"Authentication", "X-Auth", "X-Custom-Auth", "X-Forwarded-Authorization",
		"X-Goog-Iap-Jwt-Assertion", "X-Jwt", "X-Hub-Signature-256", "X-Signature", "X-Client-Cert",
		"X-Amz-Security-Token", "X-Session-Cookie"}
	h := http.Header{}
	for _, n := range secret {
		h.Set(n, "credential-of-"+n)
	}
	kept := map[string]string{"Www-Authenticate": `Bearer resource_metadata="http://x/.well-known/oauth-protected-resource"`,
		"Mcp-Session-Id": "abc", "Content-Type": "application/json", "X-Author": "ann"}
	for n, v := range kept {
		h.Set(n, v)
	}
	got := r.Header(h)
	for _, n := range secret {
		if v := got.Get(n); strings.Contains(v, "credential-of-") {
			t.Errorf("%s stored in clear: %q", n, v)
		}
	}
	for n, v := range kept {
		if got.Get(n) != v {
			t.Errorf("%s = %q; want %q kept", n, got.Get(n), v)
		}
	}
}

// TestRedactor_ArgsShortFlags: -p VALUE and --passphrase=VALUE in a
// server's command line are stored redacted (ls shows the stored line);
// other flags are kept, -P (a port, usually) among them.
func TestRedactor_ArgsShortFlags(t *testing.T) {
	r := &recorder.Redactor{}
	got := strings.Join(r.Args(strings.Fields("db-server --user admin -p s3cr3tpw --passphrase=open-sesame --pin 4821 -P 5432 --port 5432")), " ")
	for _, v := range []string{"s3cr3tpw", "open-sesame", "4821"} {
		if strings.Contains(got, v) {
			t.Errorf("Args kept %q: %s", v, got)
		}
	}
	if !strings.Contains(got, "--user admin") || !strings.Contains(got, "-P 5432 --port 5432") {
		t.Errorf("Args changed what is not secret: %s", got)
	}
}
