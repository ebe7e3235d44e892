package jsonrpc

import (
	"errors"
	"fmt"
)

// Strings calls visit for every string value in the JSON text raw, at any
// depth, in order: key is the name of the object member the string is the
// value of, as written between its quotes (escapes not decoded), or nil
// for an array element or the top-level value; [start, end) is the span
// of the string, quotes included. Keys themselves are not visited. It
// returns an error, after visiting what came before, when raw is not one
// JSON value (surrounding white space aside). Nesting depth is not
// limited: the walk keeps no recursion.
func Strings(raw []byte, visit func(key []byte, start, end int)) error {
	s := scanner{b: raw}
	var stack []byte // the open containers, '{' or '['
	var key []byte
	for {
		// A value.
		s.ws()
		if s.i >= len(s.b) {
			return errors.New("unexpected end of JSON")
		}
		switch c := s.b[s.i]; c {
		case '"':
			start := s.i
			if err := s.skipString(); err != nil {
				return err
			}
			visit(key, start, s.i)
		case '{', '[':
			s.i++
			s.ws()
			if s.i < len(s.b) && s.b[s.i] == c+2 { // '{'+2 is '}', '['+2 is ']'
				s.i++
				break
			}
			stack = append(stack, c)
			if c == '{' {
				k, err := s.memberKey()
				if err != nil {
					return err
				}
				key = k
			} else {
				key = nil
			}
			continue
		case '}', ']', ',', ':':
			return fmt.Errorf("unexpected %q at %d", c, s.i)
		default:
			if err := s.skipValue(); err != nil {
				return err
			}
		}
		// After a value: close containers, or go on to the next member or
		// element.
		for {
			s.ws()
			if len(stack) == 0 {
				if s.i != len(s.b) {
					return fmt.Errorf("data after the JSON value at %d", s.i)
				}
				return nil
			}
			if s.i >= len(s.b) {
				return errors.New("unterminated value")
			}
			top, c := stack[len(stack)-1], s.b[s.i]
			if c == top+2 {
				s.i++
				stack = stack[:len(stack)-1]
				continue
			}
			if c != ',' {
				return fmt.Errorf("unexpected %q at %d", c, s.i)
			}
			s.i++
			key = nil
			if top == '{' {
				k, err := s.memberKey()
				if err != nil {
					return err
				}
				key = k
			}
			break
		}
	}
}

// memberKey reads an object member's name and its colon, and returns the
// name as written between its quotes.
func (s *scanner) memberKey() ([]byte, error) {
	s.ws()
	k0 := s.i
	if err := s.skipString(); err != nil {
		return nil, err
	}
	k := s.b[k0+1 : s.i-1]
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != ':' {
		return nil, fmt.Errorf("expected ':' at %d", s.i)
	}
	s.i++
	return k, nil
}
