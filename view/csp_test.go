package view_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"html"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpvcr/mcpvcr/store"
	"github.com/mcpvcr/mcpvcr/view"
)

// TestHTML_CSP (issue #48): the report carries its Content-Security-
// Policy in a meta element, before any script or style; the policy
// forbids everything by default, and the SHA-256 it names for script and
// for style are those of the inline script and style the page holds.
// The page has no style attribute and no other inline script, which the
// policy would block.
func TestHTML_CSP(t *testing.T) {
	var buf bytes.Buffer
	if err := view.WriteHTML(&buf, view.Page{Sessions: []*store.Recording{synthetic(30)}}); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	m := regexp.MustCompile(`<meta http-equiv="Content-Security-Policy" content="([^"]*)">`).FindStringSubmatchIndex(page)
	if m == nil {
		t.Fatal("no Content-Security-Policy meta in the report")
	}
	csp := html.UnescapeString(page[m[2]:m[3]])
	if csp != view.ReportCSP {
		t.Errorf("CSP meta = %q; want view.ReportCSP %q", csp, view.ReportCSP)
	}
	if i := strings.Index(page, "<style"); i < m[0] || strings.Index(page, "<script") < m[0] {
		t.Error("the CSP meta comes after a style or script")
	}
	hash := func(s string) string {
		sum := sha256.Sum256([]byte(s))
		return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
	}
	styles := regexp.MustCompile(`(?s)<style>(.*?)</style>`).FindAllStringSubmatch(page, -1)
	scripts := regexp.MustCompile(`(?s)<script>(.*?)</script>`).FindAllStringSubmatch(page, -1)
	if len(styles) != 1 || len(scripts) != 1 {
		t.Fatalf("%d inline styles and %d inline scripts; want one each", len(styles), len(scripts))
	}
	directives := map[string]string{}
	for _, d := range strings.Split(csp, ";") {
		name, value, _ := strings.Cut(strings.TrimSpace(d), " ")
		directives[name] = value
	}
	want := map[string]string{
		"default-src": "'none'", "script-src": hash(scripts[0][1]), "style-src": hash(styles[0][1]),
		"img-src": "'none'", "connect-src": "'none'", "base-uri": "'none'", "form-action": "'none'",
	}
	for name, v := range want {
		if directives[name] != v {
			t.Errorf("CSP %s = %q; want %q", name, directives[name], v)
		}
	}
	if strings.Contains(csp, "unsafe") || strings.Contains(csp, "http") || strings.Contains(csp, "*") {
		t.Errorf("CSP %q allows more than the report's own script and style", csp)
	}
	if strings.Contains(page, "style=") || regexp.MustCompile(`\son[a-z]+=`).MatchString(page) {
		t.Error("the page has a style or event handler attribute, which the CSP blocks")
	}
}
