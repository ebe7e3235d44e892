package args

import (
	"errors"
	"fmt"
	"net/http"
	"net/textproto"
	"strings"
)

// SplitCommand splits a command line into words as a POSIX shell does
// for quoting: single quotes keep everything, double quotes keep
// everything but backslash escapes of \ " $ `, and a backslash outside
// quotes escapes the next character. Nothing is expanded. It is how a
// server command given as one string (a client config that carries only
// flags or environment) becomes a Command's Argv.
func SplitCommand(s string) ([]string, error) {
	var (
		words []string
		cur   strings.Builder
		in    bool // inside a word
	)
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == ' ' || ch == '\t' || ch == '\n':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		case ch == '\\':
			if i+1 >= len(s) {
				return nil, errors.New("a backslash ends the command")
			}
			i++
			cur.WriteByte(s[i])
			in = true
		case ch == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, errors.New("a single quote is not closed")
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			in = true
		case ch == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\\\"$`", s[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, errors.New("a double quote is not closed")
			}
			in = true
		default:
			cur.WriteByte(ch)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words, nil
}

// HeaderLineError reports a header line that is not "Name: value". It
// names the line by its first word only (Start), never by its value,
// which may be a token.
type HeaderLineError struct {
	// Start is the line's first word, at most 20 bytes and then "…".
	Start string
}

// Error says which line is wrong without showing its value.
func (e *HeaderLineError) Error() string {
	return fmt.Sprintf("header line is not \"Name: value\" (it starts %q)", e.Start)
}

// ParseHeaderLines reads "Name: value" lines, such as the headers a user
// gives HTTP's Header, into a header with canonical names; a value may
// hold commas and colons. A line without a colon, or whose name is empty
// or holds a blank, is a *HeaderLineError. No lines give a nil header.
func ParseHeaderLines(lines []string) (http.Header, error) {
	if len(lines) == 0 {
		return nil, nil
	}
	h := http.Header{}
	for _, l := range lines {
		name, value, ok := strings.Cut(l, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" || strings.ContainsAny(name, " \t") {
			return nil, &HeaderLineError{Start: firstWord(l)}
		}
		h.Add(textproto.CanonicalMIMEHeaderKey(name), strings.TrimSpace(value))
	}
	return h, nil
}

// firstWord is the first word of s, at most 20 bytes: enough to name a
// line without showing a token in it.
func firstWord(s string) string {
	f := strings.Fields(s)
	if len(f) == 0 {
		return ""
	}
	if len(f[0]) > 20 {
		return fmt.Sprintf("%s…", f[0][:20])
	}
	return f[0]
}
