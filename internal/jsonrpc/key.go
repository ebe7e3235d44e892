package jsonrpc

import (
	"encoding/json"
	"io"
	"maps"
	"slices"
	"unicode/utf8"
)

// Key returns the canonical text of a decoded JSON value, to compare two
// values cheaply: objects marshal with sorted keys.
func Key(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// WriteKey writes Key(v) to w as it makes it, a few kilobytes at a time,
// so that the key of a huge value can be hashed without being held: the
// bytes are the same as Key's. It returns the error json.Marshal meets
// on v (Key is "" then), or w's. Objects (map[string]any), arrays
// ([]any) and strings are walked; other values are small leaves and are
// marshalled whole.
func WriteKey(w io.Writer, v any) error {
	return writeKey(w, v, keyChunk)
}

// keyChunk is how much of a long string WriteKey encodes at once.
const keyChunk = 32 << 10

func writeKey(w io.Writer, v any, chunk int) error {
	e := &keyEncoder{w: w, chunk: chunk}
	e.value(v)
	e.flush()
	return e.err
}

// keyEncoder is WriteKey's state: what it has not written to w yet, and
// the first error met.
type keyEncoder struct {
	w     io.Writer
	chunk int
	buf   []byte
	err   error
}

// plainASCII reports whether json.Marshal writes s as it is, between
// quotes: ASCII with no control, quote, backslash or HTML character.
func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20, c >= utf8.RuneSelf, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}

// validNumber reports whether s is a JSON number, as json.Marshal checks
// a json.Number.
func validNumber(s string) bool {
	v := validator{scanner: scanner{b: []byte(s)}}
	return v.number() && v.i == len(s)
}

// write adds s to what goes to w, which gets it a chunk at a time.
func (e *keyEncoder) write(s string) {
	e.buf = append(e.buf, s...)
	if len(e.buf) >= e.chunk {
		e.flush()
	}
}

func (e *keyEncoder) writeBytes(b []byte) {
	e.buf = append(e.buf, b...)
	if len(e.buf) >= e.chunk {
		e.flush()
	}
}

func (e *keyEncoder) flush() {
	if e.err == nil && len(e.buf) > 0 {
		_, e.err = e.w.Write(e.buf)
	}
	e.buf = e.buf[:0]
}

func (e *keyEncoder) value(v any) {
	if e.err != nil {
		return
	}
	switch x := v.(type) {
	case string:
		e.str(x)
	case nil:
		e.write("null")
	case bool:
		if x {
			e.write("true")
		} else {
			e.write("false")
		}
	case json.Number:
		n := string(x)
		if n == "" {
			n = "0" // as json.Marshal writes it
		}
		if !validNumber(n) {
			_, e.err = json.Marshal(x) // its error
			return
		}
		e.write(n)
	case map[string]any:
		if x == nil {
			e.write("null")
			return
		}
		e.write("{")
		for i, k := range slices.Sorted(maps.Keys(x)) { // as json.Marshal orders them
			if i > 0 {
				e.write(",")
			}
			e.str(k)
			e.write(":")
			e.value(x[k])
		}
		e.write("}")
	case []any:
		if x == nil {
			e.write("null")
			return
		}
		e.write("[")
		for i, el := range x {
			if i > 0 {
				e.write(",")
			}
			e.value(el)
		}
		e.write("]")
	default:
		b, err := json.Marshal(x)
		if err != nil {
			e.err = err
			return
		}
		e.writeBytes(b)
	}
}

// str writes s as json.Marshal quotes it, a chunk at a time:
// json.Marshal escapes rune by rune, with no context, so the pieces of s
// cut between runes encode to the pieces of its encoding. A piece of
// plain ASCII is its own encoding.
func (e *keyEncoder) str(s string) {
	e.write(`"`)
	for len(s) > 0 {
		n := runeCut(s, min(len(s), e.chunk))
		if n == 0 { // a rune longer than the chunk
			_, n = utf8.DecodeRuneInString(s)
		}
		if piece := s[:n]; plainASCII(piece) {
			e.write(piece)
		} else {
			b, _ := json.Marshal(piece)
			e.writeBytes(b[1 : len(b)-1])
		}
		s = s[n:]
	}
	e.write(`"`)
}

// runeCut returns a place at or just before n (0 < n <= len(s)) where s
// can be cut without cutting a valid UTF-8 sequence: s's end, the start
// of a rune at most three bytes before n (0 when that is s's start), or
// n itself when s[n] cannot belong to a valid sequence (four
// continuation bytes in a row end at it).
func runeCut(s string, n int) int {
	if n >= len(s) {
		return len(s)
	}
	for i := n; i >= 0 && i >= n-3; i-- {
		if utf8.RuneStart(s[i]) {
			return i
		}
	}
	return n
}
