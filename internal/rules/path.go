package rules

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ErrBadPath is wrapped by ParsePath's errors.
var ErrBadPath = errors.New("bad path")

// Path names places in the JSON compared by Diff and Verify: where to
// ignore differences. See PathSyntax. The zero Path matches nothing.
type Path struct {
	// Scope limits the path to some requests; "" is every request.
	Scope string
	Segs  []Seg
}

// SegKind says what a Seg matches.
type SegKind uint8

const (
	SegKey      SegKind = iota // .key or ["key"]
	SegIndex                   // [N]
	SegKeyed                   // [name=add]: key holds "name=add"
	SegAnyIndex                // [*]
	SegAnyKey                  // .*
	SegAnyDepth                // .**
)

// Seg is one step of a path. Concrete paths (of a difference) use
// SegKey, SegIndex and SegKeyed only.
type Seg struct {
	Kind  SegKind
	Key   string
	Index int
}

// KeyedFields are the fields whose value identifies an element of a list,
// in order of preference: tools and prompts have names, resources URIs.
var KeyedFields = []string{"name", "uri", "uriTemplate"}

// ParsePath parses s (see diff.PathSyntax).
func ParsePath(s string) (Path, error) {
	p := Path{}
	rest := s
	if i := scopeEnd(s); i >= 0 {
		p.Scope, rest = strings.TrimSpace(s[:i]), strings.TrimSpace(s[i+1:])
		if p.Scope == "" {
			return Path{}, fmt.Errorf("%w %q: empty scope before ':'", ErrBadPath, s)
		}
	}
	segs, err := parseSegs(rest)
	if err != nil {
		return Path{}, fmt.Errorf("%w %q: %w", ErrBadPath, s, err)
	}
	p.Segs = segs
	return p, nil
}

// scopeEnd returns the index of the last ':' outside brackets and quotes,
// or -1.
func scopeEnd(s string) int {
	depth, inStr, last := 0, false, -1
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inStr && c == '\\':
			i++
		case c == '"':
			inStr = !inStr
		case inStr:
		case c == '[':
			depth++
		case c == ']':
			depth--
		case c == ':' && depth == 0:
			last = i
		}
	}
	return last
}

func parseSegs(s string) ([]Seg, error) {
	var segs []Seg
	i := 0
	if s == "" {
		return nil, errors.New("empty path")
	}
	if s[0] != '.' && s[0] != '[' {
		s = "." + s
	}
	for i < len(s) {
		switch s[i] {
		case '.':
			i++
			switch {
			case strings.HasPrefix(s[i:], "**"):
				segs = append(segs, Seg{Kind: SegAnyDepth})
				i += 2
			case strings.HasPrefix(s[i:], "*"):
				segs = append(segs, Seg{Kind: SegAnyKey})
				i++
			default:
				j := i
				for j < len(s) && bareKeyByte(s[j]) {
					j++
				}
				if j == i {
					return nil, fmt.Errorf("expected a key at offset %d", i)
				}
				segs = append(segs, Seg{Kind: SegKey, Key: s[i:j]})
				i = j
			}
		case '[':
			seg, n, err := parseBracket(s[i:])
			if err != nil {
				return nil, fmt.Errorf("at offset %d: %w", i, err)
			}
			segs = append(segs, seg)
			i += n
		default:
			return nil, fmt.Errorf("unexpected %q at offset %d (quote keys with [\"...\"])", s[i], i)
		}
	}
	return segs, nil
}

// parseBracket parses one [...] segment at the start of s and returns it
// with the bytes it took.
func parseBracket(s string) (Seg, int, error) {
	if strings.HasPrefix(s, `["`) {
		d := json.NewDecoder(strings.NewReader(s[1:]))
		var key string
		if err := d.Decode(&key); err != nil {
			return Seg{}, 0, fmt.Errorf("bad quoted key: %w", err)
		}
		n := 1 + int(d.InputOffset())
		if n >= len(s) || s[n] != ']' {
			return Seg{}, 0, errors.New(`expected ] after a quoted key`)
		}
		return Seg{Kind: SegKey, Key: key}, n + 1, nil
	}
	end := strings.IndexByte(s, ']')
	if end < 0 {
		return Seg{}, 0, errors.New("missing ]")
	}
	inner := s[1:end]
	switch {
	case inner == "*":
		return Seg{Kind: SegAnyIndex}, end + 1, nil
	case strings.Contains(inner, "="):
		field, _, _ := strings.Cut(inner, "=")
		if !isKeyedField(field) {
			return Seg{}, 0, fmt.Errorf("[%s]: elements are named by %s", inner, strings.Join(KeyedFields, ", "))
		}
		return Seg{Kind: SegKeyed, Key: inner}, end + 1, nil
	}
	n, err := strconv.Atoi(inner)
	if err != nil || n < 0 {
		return Seg{}, 0, fmt.Errorf("[%s] is not an index, [*] or [name=...]", inner)
	}
	return Seg{Kind: SegIndex, Index: n}, end + 1, nil
}

func isKeyedField(f string) bool {
	for _, k := range KeyedFields {
		if f == k {
			return true
		}
	}
	return false
}

func bareKeyByte(c byte) bool {
	return c == '_' || c == '$' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// String returns the path in the syntax ParsePath reads.
func (p Path) String() string {
	s := FormatSegs(p.Segs)
	if p.Scope != "" {
		return p.Scope + ":" + s
	}
	return s
}

// FormatSegs writes segments in path syntax, the first key without its
// leading dot.
func FormatSegs(segs []Seg) string {
	var b strings.Builder
	for i, sg := range segs {
		switch sg.Kind {
		case SegKey:
			bare := sg.Key != ""
			for j := 0; j < len(sg.Key); j++ {
				bare = bare && bareKeyByte(sg.Key[j])
			}
			if bare {
				if i > 0 {
					b.WriteByte('.')
				}
				b.WriteString(sg.Key)
			} else {
				q, _ := json.Marshal(sg.Key)
				b.WriteString("[" + string(q) + "]")
			}
		case SegIndex:
			b.WriteString("[" + strconv.Itoa(sg.Index) + "]")
		case SegKeyed:
			b.WriteString("[" + sg.Key + "]")
		case SegAnyIndex:
			b.WriteString("[*]")
		case SegAnyKey:
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString("*")
		case SegAnyDepth:
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString("**")
		}
	}
	return b.String()
}

// Covers reports whether p applies to the exchange sc and names path or
// one of its ancestors: differences below a path are ignored with it.
func (p Path) Covers(sc Exchange, path []Seg) bool {
	if len(p.Segs) == 0 || !sc.In(p.Scope) {
		return false
	}
	return prefixMatch(p.Segs, path)
}

// prefixMatch reports whether pattern matches a prefix of path.
func prefixMatch(pattern, path []Seg) bool {
	if len(pattern) == 0 {
		return true
	}
	pt := pattern[0]
	if pt.Kind == SegAnyDepth {
		for i := 0; i <= len(path); i++ {
			if prefixMatch(pattern[1:], path[i:]) {
				return true
			}
		}
		return false
	}
	if len(path) == 0 {
		return false
	}
	got := path[0]
	ok := false
	switch pt.Kind {
	case SegKey:
		ok = got.Kind == SegKey && got.Key == pt.Key
	case SegIndex:
		ok = got.Kind == SegIndex && got.Index == pt.Index
	case SegKeyed:
		ok = got.Kind == SegKeyed && got.Key == pt.Key
	case SegAnyIndex:
		ok = got.Kind == SegIndex || got.Kind == SegKeyed
	case SegAnyKey:
		ok = got.Kind == SegKey
	}
	return ok && prefixMatch(pattern[1:], path[1:])
}

// Exchange identifies one compared exchange for Path.Scope.
type Exchange struct {
	Seq    int64  // the request's seq in the expected session; 0 for server traffic
	Method string // the request's method; "" for server traffic
	Name   string // the tool or prompt name or resource URI, if any
}

// ServerScope is the Scope naming the traffic the server sent on its own.
const ServerScope = "server"

// In reports whether the exchange is in scope s.
func (sc Exchange) In(s string) bool {
	switch {
	case s == "" || s == "*":
		return true
	case s == ServerScope:
		return sc.Method == ""
	case strings.HasPrefix(s, "#"):
		n, err := strconv.ParseInt(s[1:], 10, 64)
		return err == nil && sc.Method != "" && n == sc.Seq
	case sc.Method == "":
		return false
	case s == sc.Method:
		return true
	}
	return sc.Name != "" && s == sc.Method+" "+sc.Name
}

// Apply removes from msg, a client request or notification decoded as
// {"method": …, "params": …} (or a client's answer to a server request,
// as {"method": <the server request's>, "result": …}), every value p
// names: a Path is a replay
// matching rule (replayer.Rule) for --ignore. The scope is the message's method (and tool, prompt or
// resource name); #SEQ and server scopes match nothing here.
func (p Path) Apply(msg map[string]any) {
	method, _ := msg["method"].(string)
	sc := Exchange{Seq: -1, Method: method}
	if params, ok := msg["params"].(map[string]any); ok {
		for _, k := range []string{"name", "uri"} {
			if s, ok := params[k].(string); ok {
				sc.Name = s
				break
			}
		}
	}
	if len(p.Segs) == 0 || !sc.In(p.Scope) {
		return
	}
	stripAt(p.Segs, msg, nil)
}

// stripAt deletes from v (reached by path) every member pattern names.
func stripAt(pattern []Seg, v any, path []Seg) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			p := append(slices.Clip(path), Seg{Kind: SegKey, Key: k})
			if prefixMatch(pattern, p) {
				delete(x, k)
				continue
			}
			stripAt(pattern, e, p)
		}
	case []any:
		for i, e := range x {
			stripAt(pattern, e, append(slices.Clip(path), Seg{Kind: SegIndex, Index: i}))
		}
	}
}

// ParseLines parses the paths of s, one a line (the form of a noise mask
// or a match-ignore label); blank lines and lines starting with "//" are
// skipped.
func ParseLines(s string) ([]Path, error) {
	var ps []Path
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "//") {
			continue
		}
		p, err := ParsePath(line)
		if err != nil {
			return nil, err
		}
		ps = append(ps, p)
	}
	return ps, nil
}
