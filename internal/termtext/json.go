package termtext

import (
	"bytes"
	"io"
	"unicode/utf8"
)

// jsonUnsafe reports whether r is written as a \u escape by JSON: a C1
// control or an Invisible character. encoding/json leaves both raw.
func jsonUnsafe(r rune) bool { return (r >= 0x80 && r <= 0x9f) || Invisible(r) }

// JSON returns the JSON text b with every C1 control (U+0080 to U+009F)
// and Invisible character written as a \u escape: the same JSON value,
// but one a terminal or an editor shows as it is. Outside its strings
// JSON text is ASCII, so these characters can only be inside strings,
// where \uXXXX means the same; the bytes of what is encoded do not
// change. b is returned as is when there is nothing to escape.
func JSON(b []byte) []byte {
	i := jsonUnsafeAt(b)
	if i < 0 {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	for i >= 0 {
		out = append(out, b[:i]...)
		r, n := utf8.DecodeRune(b[i:])
		out = append(out, uEscape(r)...)
		b = b[i+n:]
		i = jsonUnsafeAt(b)
	}
	return append(out, b...)
}

func jsonUnsafeAt(b []byte) int {
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if jsonUnsafe(r) {
			return i
		}
		i += n
	}
	return -1
}

// JSONWriter passes JSON text on to its writer as JSON does: with C1
// controls and Invisible characters as \u escapes. A character cut
// between two writes is held back until the next; Flush writes what is
// held back (an incomplete character at the end of the text as it is).
type JSONWriter struct {
	w    io.Writer
	tail []byte // the start of a character the next write completes
}

// NewJSONWriter returns a JSONWriter writing to w.
func NewJSONWriter(w io.Writer) *JSONWriter { return &JSONWriter{w: w} }

// Write writes p, escaped, to the underlying writer. It returns len(p)
// when all of p was taken.
func (j *JSONWriter) Write(p []byte) (int, error) {
	n := len(p)
	if len(j.tail) > 0 {
		p = append(j.tail, p...)
		j.tail = nil
	}
	// Hold back an incomplete character at the end (at most 3 bytes).
	cut := len(p)
	for k := len(p) - 1; k >= 0 && k >= len(p)-3; k-- {
		if utf8.RuneStart(p[k]) {
			if p[k] >= utf8.RuneSelf && !utf8.FullRune(p[k:]) {
				cut = k
			}
			break
		}
	}
	if cut < len(p) {
		j.tail = bytes.Clone(p[cut:])
		p = p[:cut]
	}
	if _, err := j.w.Write(JSON(p)); err != nil {
		return 0, err
	}
	return n, nil
}

// Flush writes what Write held back.
func (j *JSONWriter) Flush() error {
	if len(j.tail) == 0 {
		return nil
	}
	t := j.tail
	j.tail = nil
	_, err := j.w.Write(t)
	return err
}
