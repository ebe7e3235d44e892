package diff

import "github.com/mcpvcr/mcpvcr/internal/rules"

// ErrBadPath is wrapped by ParsePath's errors.
var ErrBadPath error = rules.ErrBadPath

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

// The path syntax is package rules'; diff names its parts as before.
type (
	pathSeg = rules.Seg
	scope   = rules.Exchange
)

const (
	segKey      = rules.SegKey
	segIndex    = rules.SegIndex
	segKeyed    = rules.SegKeyed
	segAnyIndex = rules.SegAnyIndex
	segAnyKey   = rules.SegAnyKey
	segAnyDepth = rules.SegAnyDepth

	serverScope = rules.ServerScope
)

var keyedFields = rules.KeyedFields

func (p Path) rule() rules.Path { return rules.Path{Scope: p.Scope, Segs: p.segs} }

// ParsePath parses s (see PathSyntax).
func ParsePath(s string) (Path, error) {
	r, err := rules.ParsePath(s)
	if err != nil {
		return Path{}, err
	}
	return Path{Scope: r.Scope, segs: r.Segs}, nil
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

// String returns the path in the syntax ParsePath reads.
func (p Path) String() string { return p.rule().String() }

// Apply removes from msg, a client request or notification decoded as
// {"method": …, "params": …}, every value p names: a Path is a replay
// matching rule (replayer.Rule) for --ignore. The scope is the message's
// method (and tool, prompt or resource name); #SEQ and server scopes
// match nothing here.
func (p Path) Apply(msg map[string]any) { p.rule().Apply(msg) }

// covers reports whether p applies to the exchange sc and names path or
// one of its ancestors: differences below a path are ignored with it.
func (p Path) covers(sc scope, path []pathSeg) bool { return p.rule().Covers(sc, path) }

// formatSegs writes segments in path syntax, the first key without its
// leading dot.
func formatSegs(segs []pathSeg) string { return rules.FormatSegs(segs) }
