package jsonrpc

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

// validator checks JSON as it walks it, so that parseOne finds a
// message's members and knows the bytes are JSON in one pass: a frame is
// then read once rather than validated whole and scanned again. It
// accepts exactly what encoding/json.Valid accepts (FuzzValid compares
// them), apart from nesting deeper than maxValidDepth, which it leaves
// to the slower path (ok false, deep true).
type validator struct {
	scanner      // b and i; ws skips white space
	deep    bool // nesting beyond maxValidDepth was met
}

// maxValidDepth bounds the validator's recursion; a frame nested deeper
// goes to segmentio's validator, as every frame did before.
const maxValidDepth = 512

// longString is the length past which str first tries the vectorised
// search for a string's end.
const longString = 64

// SWAR masks: a word's bytes that are a quote, a backslash or below 0x20
// (the bytes a JSON string cannot hold as they are).
const (
	lsb   = 0x0101010101010101
	msb   = 0x8080808080808080
	quote = '"' * lsb
	bslsh = '\\' * lsb
)

// special returns a mask with the high bit set in the lowest byte of w
// that is a quote, a backslash or a control byte (and maybe in bytes
// above it, which callers ignore), or 0 if there is none.
func special(w uint64) uint64 {
	q := w ^ quote
	s := w ^ bslsh
	return ((q-lsb)&^q | (s-lsb)&^s | (w-0x20*lsb)&^w) & msb
}

// hasControl reports whether s holds a byte below 0x20.
func hasControl(s []byte) bool {
	var m uint64
	for len(s) >= 32 {
		w0 := binary.LittleEndian.Uint64(s)
		w1 := binary.LittleEndian.Uint64(s[8:])
		w2 := binary.LittleEndian.Uint64(s[16:])
		w3 := binary.LittleEndian.Uint64(s[24:])
		m |= (w0-0x20*lsb)&^w0 | (w1-0x20*lsb)&^w1 | (w2-0x20*lsb)&^w2 | (w3-0x20*lsb)&^w3
		s = s[32:]
	}
	for len(s) >= 8 {
		w := binary.LittleEndian.Uint64(s)
		m |= (w - 0x20*lsb) &^ w
		s = s[8:]
	}
	for _, c := range s {
		if c < 0x20 {
			return true
		}
	}
	return m&msb != 0
}

// plain moves i past the whole words of b from i that hold no quote,
// backslash or control byte, at most n of them (all, if n < 0), and to
// the first such byte if it meets one, which it reports.
func plain(b []byte, i, n int) (int, bool) {
	for ; n != 0 && i+8 <= len(b); n-- {
		if m := special(binary.LittleEndian.Uint64(b[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)/8, true
		}
		i += 8
	}
	return i, false
}

// str checks the string that starts at v.i (a quote) and moves past it.
func (v *validator) str() bool {
	b := v.b
	// Keys, methods and ids end within a word or two; a string that
	// goes on past them is most likely text without escapes, whose end
	// and any backslash vectorised searches find, and whose bytes before
	// it are checked for control bytes four words at a time. A string
	// with escapes is checked word by word below.
	i, met := plain(b, v.i+1, 2)
	if !met && len(b)-i > longString {
		rest := b[i:]
		if q := bytes.IndexByte(rest, '"'); q >= 0 && bytes.IndexByte(rest[:q], '\\') < 0 && !hasControl(rest[:q]) {
			v.i = i + q + 1
			return true
		}
	}
	for {
		i, _ = plain(b, i, -1)
		if i >= len(b) {
			return false
		}
		switch c := b[i]; {
		case c == '"':
			v.i = i + 1
			return true
		case c == '\\':
			if i+1 >= len(b) {
				return false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) || !isHex(b[i+5]) {
					return false
				}
				i += 6
			default:
				return false
			}
		case c < 0x20:
			return false
		default:
			i++ // a byte of the tail, shorter than a word
		}
	}
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// value checks the value that starts at v.i and moves past it.
func (v *validator) value(depth int) bool {
	b := v.b
	if v.i >= len(b) {
		return false
	}
	switch c := b[v.i]; {
	case c == '"':
		return v.str()
	case c == '{':
		return v.object(depth+1, nil)
	case c == '[':
		return v.array(depth + 1)
	case c == 't':
		return v.lit("true")
	case c == 'f':
		return v.lit("false")
	case c == 'n':
		return v.lit("null")
	case c == '-' || isDigit(c):
		return v.number()
	}
	return false
}

func (v *validator) lit(s string) bool {
	if len(v.b)-v.i < len(s) || string(v.b[v.i:v.i+len(s)]) != s {
		return false
	}
	v.i += len(s)
	return true
}

// number checks a number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (v *validator) number() bool {
	b, i := v.b, v.i
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && isDigit(b[i]):
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || !isDigit(b[i]) {
			return false
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			return false
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	v.i = i
	return true
}

// object checks the object that starts at v.i ('{') and moves past it,
// handing each member's key and raw value to member, if not nil.
func (v *validator) object(depth int, member func(key, val []byte)) bool {
	if depth > maxValidDepth {
		v.deep = true
		return false
	}
	return v.seq('}', func() bool {
		k0 := v.i
		if v.i >= len(v.b) || v.b[v.i] != '"' || !v.str() {
			return false
		}
		key := v.b[k0+1 : v.i-1]
		v.ws()
		if v.i >= len(v.b) || v.b[v.i] != ':' {
			return false
		}
		v.i++
		v.ws()
		v0 := v.i
		if !v.value(depth) {
			return false
		}
		if member != nil {
			member(key, v.b[v0:v.i])
		}
		return true
	})
}

// array checks the array that starts at v.i ('[') and moves past it.
func (v *validator) array(depth int) bool {
	if depth > maxValidDepth {
		v.deep = true
		return false
	}
	return v.seq(']', func() bool { return v.value(depth) })
}

// seq checks the elements, separated by commas, of the object or array
// whose opening bracket is at v.i and whose closing one is end, and
// moves past it; elem checks one element.
func (v *validator) seq(end byte, elem func() bool) bool {
	v.i++
	v.ws()
	if v.i < len(v.b) && v.b[v.i] == end {
		v.i++
		return true
	}
	for {
		if !elem() {
			return false
		}
		v.ws()
		if v.i >= len(v.b) {
			return false
		}
		switch v.b[v.i] {
		case ',':
			v.i++
			v.ws()
		case end:
			v.i++
			return true
		default:
			return false
		}
	}
}
