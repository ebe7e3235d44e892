package termtext_test

import (
	"testing"

	"github.com/mcpvcr/mcpvcr/internal/termtext"
)

func TestEscape(t *testing.T) {
	tests := []struct {
		name, in, escape, text string
	}{
		{"Plain", "tools/call héllo ✓", "tools/call héllo ✓", "tools/call héllo ✓"},
		{"TitleSequence", "\x1b]0;pwned\x07x", `\x1b]0;pwned\x07x`, `\x1b]0;pwned\x07x`},
		{"LinesAndTabs", "a\nb\tc\r", `a\nb\tc\r`, "a\nb\tc\\r"},
		{"DEL", "a\x7fb", `a\x7fb`, `a\x7fb`},
		{"C1", "a\u009b2Jb", `a\u009b2Jb`, `a\u009b2Jb`},
		{"NotUTF8", "x\xff\x9b", `x\xff\x9b`, `x\xff\x9b`},
		{"Empty", "", "", ""},
		// Issue #48: bidi controls and zero-width characters print as
		// nothing yet can reverse or hide what a reader sees.
		{"RightToLeftOverride", "evil\u202etxt.exe", `evil\u202etxt.exe`, `evil\u202etxt.exe`},
		{"BidiControls", "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069",
			`\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069`, `\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069`},
		{"ZeroWidth", "a\u200bb\u200cc\u200dd\u2060e\ufefff", `a\u200bb\u200cc\u200dd\u2060e\ufefff`, `a\u200bb\u200cc\u200dd\u2060e\ufefff`},
		{"AllOfThem", "x\u202e\u200b\u009b\n", `x\u202e\u200b\u009b\n`, "x\\u202e\\u200b\\u009b\n"},
		{"VisibleNeighbours", "\u2010\u201d\u2030\u2070\ufeef", "\u2010\u201d\u2030\u2070\ufeef", "\u2010\u201d\u2030\u2070\ufeef"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := termtext.Escape(tt.in); got != tt.escape {
				t.Errorf("Escape(%q) = %q; want %q", tt.in, got, tt.escape)
			}
			if got := termtext.Text(tt.in); got != tt.text {
				t.Errorf("Text(%q) = %q; want %q", tt.in, got, tt.text)
			}
		})
	}
}
