package termtext_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcpvcr/mcpvcr/internal/termtext"
)

// FuzzEscape: whatever the input, Escape's output holds no control
// character and only UTF-8, Text's only newlines and tabs besides, and
// an input with nothing to escape comes back unchanged.
func FuzzEscape(f *testing.F) {
	for _, s := range []string{"tools/call", "\x1b]0;x\x07", "a\u009bb\x7f", "x\xff\xfe", "a\nb\tc\r", "x\u202e\u200b\ufeff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, x := termtext.Escape(s), termtext.Text(s)
		for name, out := range map[string]string{"Escape": e, "Text": x} {
			if !utf8.ValidString(out) {
				t.Fatalf("%s(%q) = %q: not UTF-8", name, s, out)
			}
			for _, r := range out {
				if (r < 0x20 && (name == "Escape" || (r != '\n' && r != '\t'))) || r == 0x7f || (r >= 0x80 && r <= 0x9f) || termtext.Invisible(r) {
					t.Fatalf("%s(%q) = %q holds %U", name, s, out, r)
				}
			}
		}
		safe := utf8.ValidString(s) && !strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) || termtext.Invisible(r) })
		if safe && e != s {
			t.Fatalf("Escape(%q) = %q; want it unchanged", s, e)
		}
	})
}
