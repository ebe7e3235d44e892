package redact

import (
	"regexp"
	"strings"

	"github.com/mcpvcr/mcpvcr/internal/jsonval"
)

// What mcpvcr scrub replaces in any string, besides secret members: the
// kinds it reports, and the patterns that find them. Replay of a scrubbed
// session masks the same patterns in live and recorded frames alike, so
// that the client that recorded it still matches.
const (
	KindEmail = "email"
	KindHome  = "home-path"
	KindToken = "token"
)

var (
	emailRE = regexp.MustCompile(`[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}`)
	// homeRE matches a home directory, capturing its prefix: /home/NAME,
	// /Users/NAME, C:\Users\NAME (or C:/Users/NAME).
	homeRE = regexp.MustCompile(`(/home/|/Users/|\b[A-Za-z]:[\\/]+Users[\\/]+)([^/\\\s"'<>:;,]+)`)
	// runRE matches the candidates for a random-looking token: long runs
	// of base64url and base64 characters, with base64's padding ('=' only
	// at the end, so that a query's name=value stays two runs).
	runRE = regexp.MustCompile(`[A-Za-z0-9_+-]{24,}=*`)
	// wordRE matches the runs that may be placeholders the recorder or
	// scrub wrote.
	wordRE = regexp.MustCompile(`[A-Za-z0-9_+-]+`)
	hexRE  = regexp.MustCompile(`^[0-9a-fA-F]{32,}$`)
)

// randomLooking reports whether a run looks like a key or token rather
// than a word: upper and lower case letters and digits mixed, or 32 hex
// digits or more.
func randomLooking(s string) bool {
	if hexRE.MatchString(s) {
		return true
	}
	var upper, lower, digit int
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'A' <= c && c <= 'Z':
			upper++
		case 'a' <= c && c <= 'z':
			lower++
		case '0' <= c && c <= '9':
			digit++
		}
	}
	return upper > 0 && lower > 0 && digit > 0
}

// Text returns s with every credential of a known format (SecretKinds),
// e-mail address, home directory's user name and long random-looking
// token replaced by what replace returns for its
// kind and the text found (for a home directory, the user name; its
// prefix is kept).
func Text(s string, replace func(kind, found string) string) string {
	return text(s, replace, false)
}

// text is Text; masked says s holds MaskText's "{token}" for
// placeholders, where "=" before one is a separator, as before the run of
// characters it stands for.
func text(s string, replace func(kind, found string) string, masked bool) string {
	if s == "" {
		return s
	}
	s = secrets(s, replace)
	if strings.IndexByte(s, '@') >= 0 {
		s = emailRE.ReplaceAllStringFunc(s, func(m string) string { return replace(KindEmail, m) })
	}
	if strings.Contains(s, "/home/") || strings.Contains(s, "Users") {
		s = homeRE.ReplaceAllStringFunc(s, func(m string) string {
			sub := homeRE.FindStringSubmatch(m)
			return sub[1] + replace(KindHome, sub[2])
		})
	}
	if len(s) >= 24 {
		s = tokens(s, replace, masked)
	}
	return s
}

// tokens replaces the random-looking runs of s. Padding counts only at
// the end of a run: "=" followed by more run characters is a separator.
func tokens(s string, replace func(kind, found string) string, masked bool) string {
	var b strings.Builder
	last := 0
	for _, loc := range runRE.FindAllStringIndex(s, -1) {
		start, end := loc[0], loc[1]
		if end < len(s) && s[end-1] == '=' && (isRunByte(s[end]) || masked && strings.HasPrefix(s[end:], maskedToken)) {
			for end > start && s[end-1] == '=' {
				end--
			}
		}
		m := s[start:end]
		if !randomLooking(m) && !lowerRandom(m) {
			continue
		}
		b.WriteString(s[last:start])
		b.WriteString(replace(KindToken, m))
		last = end
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

func isRunByte(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || c == '+' || c == '-'
}

// MaskText is Text with fixed replacements ("{email}"), placeholders
// masked as tokens first: for a string s and what scrub made of it,
// MaskText gives the same (but for an e-mail address glued to a token).
func MaskText(s string) string {
	if strings.Contains(s, "REDACTED-") {
		s = wordRE.ReplaceAllStringFunc(s, func(m string) string {
			if IsPlaceholder(m) {
				return "{" + KindToken + "}"
			}
			return m
		})
	}
	return text(s, func(kind, _ string) string {
		if kind == KindEmail || kind == KindHome {
			return "{" + kind + "}"
		}
		return maskedToken // scrub writes a placeholder for every other kind
	}, true)
}

// maskedToken is MaskText's mask of a token.
const maskedToken = "{" + KindToken + "}"

// MaskStrings applies MaskText to every string value in v (JSON decoded
// into any), in place, and returns v.
func MaskStrings(v any) any {
	return jsonval.Leaves(v, func(leaf any) any {
		if s, ok := leaf.(string); ok {
			return MaskText(s)
		}
		return leaf
	})
}
