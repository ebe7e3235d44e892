package audit

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/mcpvcr/mcpvcr/internal/mcpwire"
	"github.com/mcpvcr/mcpvcr/store"
)

// ErrUnknownRule is wrapped by Select's error for a rule id it does not know.
var ErrUnknownRule = errors.New("unknown rule")

// Level is how strongly the specification states a rule.
type Level int

// Levels. A MUST broken is an error, a SHOULD broken a warning.
const (
	Error   Level = iota // MUST
	Warning              // SHOULD
)

// String returns "error" or "warning".
func (l Level) String() string {
	if l == Warning {
		return "warning"
	}
	return "error"
}

// Keyword returns "MUST" or "SHOULD".
func (l Level) Keyword() string {
	if l == Warning {
		return "SHOULD"
	}
	return "MUST"
}

// Rule is one thing a client must (or should) do that a recording shows
// kept or broken.
type Rule struct {
	// ID names the rule, "area/what": "http/protocol-version-negotiated".
	ID string
	// Revisions are the protocol revisions it applies to; a recording of
	// another revision is not checked.
	Revisions []string
	// Unknown also checks sessions of a version no revision has (the
	// recorder names a session by the version initialize returned).
	Unknown bool
	// Transports limits the rule to sessions over these; nil is any.
	Transports []store.Transport
	Level      Level
	// Section is the specification page (and heading) it comes from.
	Section string
	// Description states the rule in one sentence.
	Description string
	// Check returns where the recording breaks the rule. It is called
	// only for recordings of Revisions over Transports.
	Check func(r *Rule, v *view) []Finding
}

// Applies reports whether r is checked on rec.
func (r *Rule) Applies(rec *store.Recording) bool {
	if !slices.Contains(r.Revisions, rec.Session.Revision) && !(r.Unknown && rec.Session.Revision != "" && !mcpwire.Known(rec.Session.Revision)) {
		return false
	}
	return r.Transports == nil || slices.Contains(r.Transports, rec.Session.Transport)
}

// Finding is one place where a recording breaks a rule.
type Finding struct {
	Rule     string `json:"rule"`
	Level    Level  `json:"-"`
	Section  string `json:"section"`
	Session  int64  `json:"session"`
	Revision string `json:"revision"`
	// Stream is the stream's position in the session, as show numbers
	// them (post#3 is 3), and StreamLabel that name; 0 and "" for none.
	Stream      int    `json:"stream"`
	StreamLabel string `json:"streamLabel"`
	// Seq is the frame, as show numbers them; 0 for the session.
	Seq int64 `json:"seq"`
	// Sent is what the client sent; Required what the revision requires.
	Sent     string `json:"sent"`
	Required string `json:"required"`
}

// Where renders the finding's place: "session 1 post#3 seq 7".
func (f Finding) Where() string {
	s := fmt.Sprintf("session %d", f.Session)
	if f.StreamLabel != "" {
		s += " " + f.StreamLabel
	}
	if f.Seq > 0 {
		s += fmt.Sprintf(" seq %d", f.Seq)
	}
	return s
}

// Rules returns every rule, sorted by id. The slice is a copy; the rules
// are shared and must not be changed.
func Rules() []*Rule {
	out := slices.Clone(registry)
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Lookup returns the rule with id, nil if there is none.
func Lookup(id string) *Rule {
	for _, r := range registry {
		if r.ID == id {
			return r
		}
	}
	return nil
}

// Select returns the rules named in only (every rule when empty) less
// those named in skip. An entry may be a rule id or an area prefix
// ("http/" or "http"). A name matching no rule is an error wrapping
// ErrUnknownRule.
func Select(only, skip []string) ([]*Rule, error) {
	match := func(name string, r *Rule) bool {
		name = strings.TrimSuffix(name, "/")
		return r.ID == name || strings.HasPrefix(r.ID, name+"/")
	}
	for _, name := range append(slices.Clone(only), skip...) {
		if !slices.ContainsFunc(registry, func(r *Rule) bool { return match(name, r) }) {
			return nil, fmt.Errorf("rule %q: %w", name, ErrUnknownRule)
		}
	}
	var out []*Rule
	for _, r := range Rules() {
		if len(only) > 0 && !slices.ContainsFunc(only, func(n string) bool { return match(n, r) }) {
			continue
		}
		if slices.ContainsFunc(skip, func(n string) bool { return match(n, r) }) {
			continue
		}
		out = append(out, r)
	}
	return out, nil
}

// Audit runs rules (every rule when nil) over recs and returns the
// findings in session, seq and rule order.
func Audit(recs []*store.Recording, rules []*Rule) []Finding {
	if rules == nil {
		rules = Rules()
	}
	var out []Finding
	for _, rec := range recs {
		v := newView(rec)
		var fs []Finding
		for _, r := range rules {
			if r.Applies(rec) {
				fs = append(fs, r.Check(r, v)...)
			}
		}
		fs = dedupe(fs)
		sort.SliceStable(fs, func(i, j int) bool {
			if fs[i].Seq != fs[j].Seq {
				return fs[i].Seq < fs[j].Seq
			}
			return fs[i].Rule < fs[j].Rule
		})
		out = append(out, fs...)
	}
	return out
}

// Errors counts the findings of level Error.
func Errors(fs []Finding) int {
	n := 0
	for _, f := range fs {
		if f.Level == Error {
			n++
		}
	}
	return n
}

// registry holds every rule; each rules file adds its own in init.
var registry []*Rule

func register(rs ...*Rule) { registry = append(registry, rs...) }

// dedupe drops a finding that repeats another's rule, frame and text.
func dedupe(fs []Finding) []Finding {
	seen := map[Finding]bool{}
	out := fs[:0]
	for _, f := range fs {
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	return out
}
