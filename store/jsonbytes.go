package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
)

// lineString is a JSON string or null as a line holds it, kept as it is
// (it aliases the line): import decodes a frame's raw and data into the
// line's own bytes (decodeJSONString in place) once the rest of the line
// is read, so that a frame of tens of megabytes costs its line and no
// copy of it.
type lineString []byte

// UnmarshalJSON keeps the JSON string b (null leaves t nil), refusing
// any other value as encoding/json refuses it for a string field.
func (t *lineString) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*t = nil
		return nil
	}
	if err := stringToken(b); err != nil {
		return err
	}
	*t = b
	return nil
}

// stringToken returns an error, as encoding/json fails a string field
// (so that the error names the field: plainLineError), unless b is a
// JSON string.
func stringToken(b []byte) error {
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return &json.UnmarshalTypeError{Value: literalKind(b), Type: reflect.TypeFor[string]()}
	}
	return nil
}

// decodeJSONString returns the bytes of the JSON string b, nil for null
// or nothing. In place, it decodes them into b itself, from its start,
// and returns a slice of b: a JSON string's bytes are never longer than
// its text, except where the text is not UTF-8 (encoding/json writes
// U+FFFD for each such byte), which is decoded into new bytes.
func decodeJSONString(b []byte, inPlace bool) ([]byte, error) {
	b = bytes.Trim(b, " \t\r\n") // JSON's whitespace, which encoding/json allows around a value
	if len(b) == 0 || string(b) == "null" {
		return nil, nil
	}
	if err := stringToken(b); err != nil {
		return nil, err
	}
	in := b[1 : len(b)-1]
	if !utf8.Valid(in) {
		// Rare (an export writes such bytes in base64), so read it
		// encoding/json's way.
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return nil, err
		}
		return []byte(s), nil
	}
	if bytes.IndexByte(in, '\\') < 0 {
		if inPlace {
			return in, nil
		}
		return append([]byte(nil), in...), nil
	}
	// Each escape decodes to fewer bytes than its text: out never
	// overtakes in, when both are b.
	out := b[:0]
	if !inPlace {
		out = make([]byte, 0, len(in))
	}
	for len(in) > 0 {
		i := bytes.IndexByte(in, '\\')
		if i < 0 {
			out = append(out, in...)
			break
		}
		out, in = append(out, in[:i]...), in[i:]
		if len(in) < 2 {
			return nil, errors.New("a JSON string ends in a backslash")
		}
		switch c := in[1]; c {
		case '"', '\\', '/':
			out, in = append(out, c), in[2:]
		case 'b':
			out, in = append(out, '\b'), in[2:]
		case 'f':
			out, in = append(out, '\f'), in[2:]
		case 'n':
			out, in = append(out, '\n'), in[2:]
		case 'r':
			out, in = append(out, '\r'), in[2:]
		case 't':
			out, in = append(out, '\t'), in[2:]
		case 'u':
			r, n := unicodeEscape(in)
			if n == 0 {
				return nil, fmt.Errorf("a bad \\u escape in a JSON string: %.12q", in)
			}
			out, in = utf8.AppendRune(out, r), in[n:]
		default:
			return nil, fmt.Errorf("a bad escape in a JSON string: %.4q", in)
		}
	}
	return out, nil
}

// unicodeEscape decodes the \uXXXX escape (with its low surrogate, if it
// is a high one) at the start of in, as encoding/json does: a lone
// surrogate is U+FFFD. n is the bytes read, 0 if in holds no escape.
func unicodeEscape(in []byte) (r rune, n int) {
	hex := func(b []byte) (rune, bool) {
		if len(b) < 6 || b[0] != '\\' || b[1] != 'u' {
			return 0, false
		}
		var v rune
		for _, c := range b[2:6] {
			switch {
			case '0' <= c && c <= '9':
				v = v<<4 | rune(c-'0')
			case 'a' <= c && c <= 'f':
				v = v<<4 | rune(c-'a'+10)
			case 'A' <= c && c <= 'F':
				v = v<<4 | rune(c-'A'+10)
			default:
				return 0, false
			}
		}
		return v, true
	}
	r, ok := hex(in)
	if !ok {
		return 0, 0
	}
	if utf16.IsSurrogate(r) {
		if r2, ok := hex(in[6:]); ok {
			if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
				return d, 12
			}
		}
		return utf8.RuneError, 6
	}
	return r, 6
}

// frameKeys are the members a frame's line may have.
var frameKeys = jsonKeys(reflect.TypeFor[frameRecord]())

// jsonKeys returns the JSON names of struct type t's fields.
func jsonKeys(t reflect.Type) map[string]bool {
	keys := map[string]bool{}
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name != "" && name != "-" {
			keys[name] = true
		}
	}
	return keys
}

// knownKeys reports the first member of the JSON object line (valid
// JSON: json.Unmarshal read it) that keys does not hold, as
// json.Decoder.DisallowUnknownFields does, without copying the line.
func knownKeys(line []byte, keys map[string]bool) error {
	return jsonrpc.Members(line, func(name, _ []byte) error {
		var key string
		if err := json.Unmarshal(name, &key); err != nil {
			return err
		}
		if !keys[key] {
			return fmt.Errorf("json: unknown field %q", key)
		}
		return nil
	})
}

// literalKind names the JSON value b as encoding/json's
// UnmarshalTypeError does: "object", "array", "bool", "number", "string".
func literalKind(b []byte) string {
	if len(b) == 0 {
		return "nothing"
	}
	switch b[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "bool"
	case '"':
		return "string"
	}
	return "number"
}
