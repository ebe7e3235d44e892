// Package termtext makes recorded data safe to print on a terminal. A
// cassette may come from a stranger, and its bytes reach show, ls, check,
// diff and verify: a raw ESC or other control character in a tool name
// could set the window title, clear the screen or write the clipboard.
// Escape and Text write every C0 control, DEL, C1 control (U+0080 to
// U+009F), bidirectional control and zero-width character (see Invisible)
// and byte that is not UTF-8 as a visible escape (\x1b, \u009b, \u202e,
// \xff): a U+202E in a tool name would otherwise reverse what a reader
// sees. JSON outputs escape the same characters with JSON (see JSON and
// JSONWriter); HTML and XML outputs escape by their own rules.
package termtext

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Escape returns s with every control character escaped, newlines and
// tabs too: for a field that must stay on its line.
func Escape(s string) string { return escape(s, false) }

// Text returns s with every control character but newline and tab
// escaped: for a block of lines.
func Text(s string) string { return escape(s, true) }

func escape(s string, lines bool) string {
	i := unsafeAt(s, lines)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteString(`\x`)
			b.WriteString(hex2(s[i]))
		case lines && (r == '\n' || r == '\t'):
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			b.WriteString(shortEscape(r))
		case r >= 0x80 && r <= 0x9f:
			b.WriteString(`\u00`)
			b.WriteString(hex2(byte(r)))
		case Invisible(r):
			b.WriteString(uEscape(r))
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// unsafeAt returns the index of the first byte of s to escape, or -1.
func unsafeAt(s string, lines bool) int {
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c < 0x20:
			if !lines || (c != '\n' && c != '\t') {
				return i
			}
			i++
		case c == 0x7f:
			return i
		case c < 0x80:
			i++
		default:
			r, n := utf8.DecodeRuneInString(s[i:])
			if (r == utf8.RuneError && n == 1) || r <= 0x9f || Invisible(r) {
				return i
			}
			i += n
		}
	}
	return -1
}

// Invisible reports whether r is a bidirectional control (U+061C,
// U+200E, U+200F, U+202A to U+202E, U+2066 to U+2069) or a zero-width
// character (U+200B to U+200D, U+2060, U+FEFF): characters that print as
// nothing yet can reorder or hide what is around them.
func Invisible(r rune) bool {
	switch {
	case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	case r >= 0x200b && r <= 0x200d, r == 0x2060, r == 0xfeff:
		return true
	}
	return false
}

// uEscape is r as \uXXXX (r < 0x10000).
func uEscape(r rune) string {
	const hex = "0123456789abcdef"
	return string([]byte{'\\', 'u', hex[r>>12&0xf], hex[r>>8&0xf], hex[r>>4&0xf], hex[r&0xf]})
}

func shortEscape(r rune) string {
	switch r {
	case '\n':
		return `\n`
	case '\r':
		return `\r`
	case '\t':
		return `\t`
	}
	return `\x` + hex2(byte(r))
}

func hex2(c byte) string {
	s := strconv.FormatUint(uint64(c), 16)
	if len(s) == 1 {
		s = "0" + s
	}
	return s
}

// Count is n and noun, the noun plural when n is not 1: "1 session",
// "2 sessions". Nouns whose plural is not noun+"s" are not used.
func Count[N ~int | ~int64](n N, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.FormatInt(int64(n), 10) + " " + noun + "s"
}
