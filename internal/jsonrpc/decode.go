package jsonrpc

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// Decode decodes raw, one JSON value with white space around it, as
// encoding/json's Decoder does with UseNumber: objects as map[string]any
// (the last of equal keys wins), arrays as []any, numbers as json.Number
// and strings with invalid UTF-8 replaced by U+FFFD. It reads raw where
// it lies, checking it as it goes as Valid does: a json.Decoder first
// copies its input into a buffer it grows by doubling, twice the size of
// a huge frame more. ok is false when raw is not one JSON value, or is
// nested deeper than maxValidDepth; callers then use encoding/json.
func Decode(raw []byte) (v any, ok bool) {
	d := decoder{validator{scanner: scanner{b: raw}}}
	d.ws()
	if v, ok = d.value(0); !ok {
		return nil, false
	}
	d.ws()
	return v, d.i == len(raw)
}

// decoder is Decode's state: a validator that also builds the values
// it checks.
type decoder struct{ validator }

func (d *decoder) value(depth int) (any, bool) {
	if d.i >= len(d.b) {
		return nil, false
	}
	switch c := d.b[d.i]; {
	case c == '"':
		return d.str()
	case c == '{':
		return d.object(depth + 1)
	case c == '[':
		return d.array(depth + 1)
	case c == 't':
		return true, d.lit("true")
	case c == 'f':
		return false, d.lit("false")
	case c == 'n':
		return nil, d.lit("null")
	case c == '-' || isDigit(c):
		i := d.i
		if !d.number() {
			return nil, false
		}
		return json.Number(d.b[i:d.i]), true
	}
	return nil, false
}

// str decodes the string at d.i. Text with no escape and valid UTF-8 is
// its own value; anything else is unquoted by encoding/json.
func (d *decoder) str() (string, bool) {
	i := d.i
	if i >= len(d.b) || d.b[i] != '"' || !d.validator.str() {
		return "", false
	}
	lit := d.b[i:d.i]
	if in := lit[1 : len(lit)-1]; bytes.IndexByte(in, '\\') < 0 && utf8.Valid(in) {
		return string(in), true
	}
	var s string
	return s, json.Unmarshal(lit, &s) == nil
}

func (d *decoder) object(depth int) (any, bool) {
	if depth > maxValidDepth {
		return nil, false
	}
	m := map[string]any{}
	return m, d.seq('}', func() bool {
		k, ok := d.str()
		if !ok {
			return false
		}
		d.ws()
		if d.i >= len(d.b) || d.b[d.i] != ':' {
			return false
		}
		d.i++
		d.ws()
		v, ok := d.value(depth)
		m[k] = v
		return ok
	})
}

func (d *decoder) array(depth int) (any, bool) {
	if depth > maxValidDepth {
		return nil, false
	}
	a := []any{}
	ok := d.seq(']', func() bool {
		v, ok := d.value(depth)
		a = append(a, v)
		return ok
	})
	return a, ok
}
