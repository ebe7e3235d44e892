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
