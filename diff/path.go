package diff

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

// PathSyntax describes the syntax of a Path, for help texts.
const PathSyntax = `PATH is [SCOPE:]JSONPATH. JSONPATH starts at the compared answer: result.content[*].text,
error.data, progress[*].message. Segments: .key, ["key with . or /"], [N] (an index),
[*] (any index), [name=add] (the element of a tools, prompts or resources list with that
name, uri or uriTemplate), .* (any key), .** (any number of segments). SCOPE limits the
path to some requests: a method (tools/list), a method and a tool, prompt or resource
(tools/call info), #SEQ (the request recorded at seq SEQ), or server (requests and
notifications the server sent on its own). Without SCOPE the path applies to every answer.`

// Path names places in the JSON compared by Diff and Verify: where to
// ignore differences. See PathSyntax. The zero Path matches nothing.
type Path struct {
	// Scope limits the path to some requests; "" is every request.
	Scope string
	segs  []pathSeg
}

type segKind uint8

const (
	segKey      segKind = iota // .key or ["key"]
	segIndex                   // [N]
	segKeyed                   // [name=add]: key holds "name=add"
	segAnyIndex                // [*]
	segAnyKey                  // .*
	segAnyDepth                // .**
)

// pathSeg is one step of a path. Concrete paths (of a difference) use
// segKey, segIndex and segKeyed only.
type pathSeg struct {
	kind  segKind
	key   string
	index int
}

// keyedFields are the fields whose value identifies an element of a list,
// in order of preference: tools and prompts have names, resources URIs.
var keyedFields = []string{"name", "uri", "uriTemplate"}

// ParsePath parses s (see PathSyntax).
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
	p.segs = segs
	return p, nil
}

// MustParsePath is ParsePath for paths known to be valid; it panics on
// an error.
func MustParsePath(s string) Path {
	p, err := ParsePath(s)
	if err != nil {
		panic(err)
	}
	return p
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

func parseSegs(s string) ([]pathSeg, error) {
	var segs []pathSeg
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
				segs = append(segs, pathSeg{kind: segAnyDepth})
				i += 2
			case strings.HasPrefix(s[i:], "*"):
				segs = append(segs, pathSeg{kind: segAnyKey})
				i++
			default:
				j := i
				for j < len(s) && bareKeyByte(s[j]) {
					j++
				}
				if j == i {
					return nil, fmt.Errorf("expected a key at offset %d", i)
				}
				segs = append(segs, pathSeg{kind: segKey, key: s[i:j]})
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
func parseBracket(s string) (pathSeg, int, error) {
	if strings.HasPrefix(s, `["`) {
		d := json.NewDecoder(strings.NewReader(s[1:]))
		var key string
		if err := d.Decode(&key); err != nil {
			return pathSeg{}, 0, fmt.Errorf("bad quoted key: %w", err)
		}
		n := 1 + int(d.InputOffset())
		if n >= len(s) || s[n] != ']' {
			return pathSeg{}, 0, errors.New(`expected ] after a quoted key`)
		}
		return pathSeg{kind: segKey, key: key}, n + 1, nil
	}
	end := strings.IndexByte(s, ']')
	if end < 0 {
		return pathSeg{}, 0, errors.New("missing ]")
	}
	inner := s[1:end]
	switch {
	case inner == "*":
		return pathSeg{kind: segAnyIndex}, end + 1, nil
	case strings.Contains(inner, "="):
		field, _, _ := strings.Cut(inner, "=")
		if !isKeyedField(field) {
			return pathSeg{}, 0, fmt.Errorf("[%s]: elements are named by %s", inner, strings.Join(keyedFields, ", "))
		}
		return pathSeg{kind: segKeyed, key: inner}, end + 1, nil
	}
	n, err := strconv.Atoi(inner)
	if err != nil || n < 0 {
		return pathSeg{}, 0, fmt.Errorf("[%s] is not an index, [*] or [name=...]", inner)
	}
	return pathSeg{kind: segIndex, index: n}, end + 1, nil
}

func isKeyedField(f string) bool {
	for _, k := range keyedFields {
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
	s := formatSegs(p.segs)
	if p.Scope != "" {
		return p.Scope + ":" + s
	}
	return s
}

// formatSegs writes segments in path syntax, the first key without its
// leading dot.
func formatSegs(segs []pathSeg) string {
	var b strings.Builder
	for i, sg := range segs {
		switch sg.kind {
		case segKey:
			bare := sg.key != ""
			for j := 0; j < len(sg.key); j++ {
				bare = bare && bareKeyByte(sg.key[j])
			}
			if bare {
				if i > 0 {
					b.WriteByte('.')
				}
				b.WriteString(sg.key)
			} else {
				q, _ := json.Marshal(sg.key)
				b.WriteString("[" + string(q) + "]")
			}
		case segIndex:
			b.WriteString("[" + strconv.Itoa(sg.index) + "]")
		case segKeyed:
			b.WriteString("[" + sg.key + "]")
		case segAnyIndex:
			b.WriteString("[*]")
		case segAnyKey:
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString("*")
		case segAnyDepth:
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString("**")
		}
	}
	return b.String()
}

// covers reports whether p applies to the exchange sc and names path or
// one of its ancestors: differences below a path are ignored with it.
func (p Path) covers(sc scope, path []pathSeg) bool {
	if len(p.segs) == 0 || !sc.in(p.Scope) {
		return false
	}
	return prefixMatch(p.segs, path)
}

// prefixMatch reports whether pattern matches a prefix of path.
func prefixMatch(pattern, path []pathSeg) bool {
	if len(pattern) == 0 {
		return true
	}
	pt := pattern[0]
	if pt.kind == segAnyDepth {
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
	switch pt.kind {
	case segKey:
		ok = got.kind == segKey && got.key == pt.key
	case segIndex:
		ok = got.kind == segIndex && got.index == pt.index
	case segKeyed:
		ok = got.kind == segKeyed && got.key == pt.key
	case segAnyIndex:
		ok = got.kind == segIndex || got.kind == segKeyed
	case segAnyKey:
		ok = got.kind == segKey
	}
	return ok && prefixMatch(pattern[1:], path[1:])
}

// scope identifies one compared exchange for Path.Scope.
type scope struct {
	seq    int64  // the request's seq in the expected session; 0 for server traffic
	method string // the request's method; "" for server traffic
	name   string // the tool or prompt name or resource URI, if any
}

// serverScope is the Scope naming the traffic the server sent on its own.
const serverScope = "server"

// in reports whether the exchange is in scope s.
func (sc scope) in(s string) bool {
	switch {
	case s == "" || s == "*":
		return true
	case s == serverScope:
		return sc.method == ""
	case strings.HasPrefix(s, "#"):
		n, err := strconv.ParseInt(s[1:], 10, 64)
		return err == nil && sc.method != "" && n == sc.seq
	case sc.method == "":
		return false
	case s == sc.method:
		return true
	}
	return sc.name != "" && s == sc.method+" "+sc.name
}

// Apply removes from msg, a client request or notification decoded as
// {"method": …, "params": …}, every value p names: a Path is a replay
// matching rule (replayer.Rule) for --ignore. The scope is the message's method (and tool, prompt or
// resource name); #SEQ and server scopes match nothing here.
func (p Path) Apply(msg map[string]any) {
	method, _ := msg["method"].(string)
	sc := scope{seq: -1, method: method}
	if params, ok := msg["params"].(map[string]any); ok {
		for _, k := range []string{"name", "uri"} {
			if s, ok := params[k].(string); ok {
				sc.name = s
				break
			}
		}
	}
	if len(p.segs) == 0 || !sc.in(p.Scope) {
		return
	}
	stripAt(p.segs, msg, nil)
}

// stripAt deletes from v (reached by path) every member pattern names.
func stripAt(pattern []pathSeg, v any, path []pathSeg) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			p := append(slices.Clip(path), pathSeg{kind: segKey, key: k})
			if prefixMatch(pattern, p) {
				delete(x, k)
				continue
			}
			stripAt(pattern, e, p)
		}
	case []any:
		for i, e := range x {
			stripAt(pattern, e, append(slices.Clip(path), pathSeg{kind: segIndex, index: i}))
		}
	}
}
