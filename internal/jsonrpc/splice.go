package jsonrpc

import (
	"bytes"
	"errors"
	"fmt"
)

// ErrNoPath is returned by Find and Splice when the path does not lead to a
// value.
var ErrNoPath = errors.New("no value at path")

// Find returns the byte span [start, end) of the value reached by following
// the object keys in path from the top-level value of raw. An empty path
// spans the whole top-level value.
func Find(raw []byte, path ...string) (start, end int, err error) {
	start, end, missing, err := find(raw, path)
	if missing != "" {
		return 0, 0, fmt.Errorf("find %q: %w", missing, ErrNoPath)
	}
	return start, end, err
}

// Lookup returns the value reached by following the object keys in path
// from the top-level value of raw, and whether there is one. Unlike Find
// it allocates nothing when there is none, which is the common case of
// the lookups done for every frame.
func Lookup(raw []byte, path ...string) ([]byte, bool) {
	start, end, missing, err := find(raw, path)
	if missing != "" || err != nil {
		return nil, false
	}
	return raw[start:end], true
}

// find is Find; a key that is missing (or a value on the way that is not
// an object) is reported in missing, other failures in err.
func find(raw []byte, path []string) (start, end int, missing string, err error) {
	s := scanner{b: raw}
	s.ws()
	for _, key := range path {
		if s.i >= len(s.b) || s.b[s.i] != '{' {
			return 0, 0, key, nil
		}
		s.i++
		found := false
		for {
			s.ws()
			if s.i < len(s.b) && s.b[s.i] == '}' {
				break
			}
			k0 := s.i
			if err := s.skipString(); err != nil {
				return 0, 0, "", err
			}
			name := s.b[k0+1 : s.i-1]
			s.ws()
			if s.i >= len(s.b) || s.b[s.i] != ':' {
				return 0, 0, "", fmt.Errorf("find %q: expected ':' at %d", key, s.i)
			}
			s.i++
			s.ws()
			if string(name) == key { // keys with escapes are not matched
				found = true
				break
			}
			if err := s.skipValue(); err != nil {
				return 0, 0, "", err
			}
			s.ws()
			if s.i < len(s.b) && s.b[s.i] == ',' {
				s.i++
			}
		}
		if !found {
			return 0, 0, key, nil
		}
	}
	start = s.i
	if err := s.skipValue(); err != nil {
		return 0, 0, "", err
	}
	return start, s.i, "", nil
}

// Splice returns a copy of raw with the value at path replaced by value.
// Every byte outside that value is kept.
func Splice(raw []byte, value []byte, path ...string) ([]byte, error) {
	start, end, err := Find(raw, path...)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(raw)-(end-start)+len(value))
	out = append(out, raw[:start]...)
	out = append(out, value...)
	return append(out, raw[end:]...), nil
}

type scanner struct {
	b []byte
	i int
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\r', '\n':
			s.i++
		default:
			return
		}
	}
}

func (s *scanner) skipString() error {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return fmt.Errorf("expected string at %d", s.i)
	}
	// Jump from quote to quote (IndexByte is vectorised); a quote is the
	// end unless the escapes before it, from the last quote on, escape
	// it. Each byte is looked at once or twice, however many escapes
	// there are: looking for the quote again after each escape took a
	// string of n bytes with e escapes n*e.
	s.i++
	for s.i < len(s.b) {
		rest := s.b[s.i:]
		q := bytes.IndexByte(rest, '"')
		if q < 0 {
			break
		}
		j := 0 // rest[:j] is read: no escape in it runs on past j
		for {
			bs := bytes.IndexByte(rest[j:q], '\\')
			if bs < 0 {
				s.i += q + 1
				return nil
			}
			j += bs + 2 // the backslash and the byte it escapes
			if j > q {
				break // the quote is escaped: on to the next one
			}
		}
		s.i += j
	}
	s.i = len(s.b)
	return errors.New("unterminated string")
}

func (s *scanner) skipValue() error {
	if s.i >= len(s.b) {
		return errors.New("unexpected end of JSON")
	}
	switch c := s.b[s.i]; c {
	case '"':
		return s.skipString()
	case '{', '[':
		depth := 0
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case '"':
				if err := s.skipString(); err != nil {
					return err
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					s.i++
					return nil
				}
			}
			s.i++
		}
		return errors.New("unterminated value")
	default:
		start := s.i
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case ',', '}', ']', ' ', '\t', '\r', '\n':
				if s.i == start {
					return fmt.Errorf("unexpected %q at %d", c, s.i)
				}
				return nil
			}
			s.i++
		}
		return nil
	}
}

// Elements returns the byte spans [start, end) of the elements of the
// top-level JSON array in raw.
func Elements(raw []byte) ([][2]int, error) {
	s := scanner{b: raw}
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != '[' {
		return nil, errors.New("not an array")
	}
	s.i++
	var spans [][2]int
	for {
		s.ws()
		if s.i < len(s.b) && s.b[s.i] == ']' {
			return spans, nil
		}
		start := s.i
		if err := s.skipValue(); err != nil {
			return nil, err
		}
		spans = append(spans, [2]int{start, s.i})
		s.ws()
		if s.i < len(s.b) && s.b[s.i] == ',' {
			s.i++
		} else if s.i >= len(s.b) {
			return nil, errors.New("unterminated array")
		}
	}
}

// Members calls fn with the name (the JSON string, quotes included) and
// the value of each member of the object raw holds, in order, and returns
// fn's first error. It copies nothing: a member tens of megabytes long
// costs a scan.
func Members(raw []byte, fn func(name, value []byte) error) error {
	s := scanner{b: raw}
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != '{' {
		return errors.New("not a JSON object")
	}
	s.i++
	for {
		s.ws()
		if s.i < len(s.b) && s.b[s.i] == '}' {
			return nil
		}
		k0 := s.i
		if err := s.skipString(); err != nil {
			return err
		}
		name := s.b[k0:s.i]
		s.ws()
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			return fmt.Errorf("expected ':' at %d", s.i)
		}
		s.i++
		s.ws()
		v0 := s.i
		if err := s.skipValue(); err != nil {
			return err
		}
		if err := fn(name, s.b[v0:s.i]); err != nil {
			return err
		}
		s.ws()
		if s.i < len(s.b) && s.b[s.i] == ',' {
			s.i++
		}
	}
}
