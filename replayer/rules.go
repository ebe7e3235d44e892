package replayer

import (
	"context"
	"slices"
	"strings"

	"github.com/mcpvcr/mcpvcr/internal/rules"
	"github.com/mcpvcr/mcpvcr/store"
)

// Sessions names the sessions a replay serves, whose stored rules
// StoredMatch reads: sessions IDs of DB (every session when IDs is
// empty), or, when DB is nil, Recordings as loaded.
type Sessions struct {
	DB         *store.DB
	IDs        []int64
	Recordings []*store.Recording
}

// StoredMatch returns mt with the rules a replay of sessions s matches
// by: ignore (paths in the syntax of mcpvcr verify --ignore, one or more
// a line: the caller's own), then the sessions' MatchIgnoreLabel paths,
// each path once in that order; the JSON members the recorder redacted
// beyond RedactedJSON (RedactLabel), each once; and Scrubbed if any
// session carries ScrubLabel. A path that does not parse is an error
// wrapping the path error (errors.Is ErrBadPath of package diff); an
// error reading DB is returned as it is.
func StoredMatch(ctx context.Context, mt Match, ignore []string, s Sessions) (Match, error) {
	values := func(label string) ([]string, error) {
		if s.DB != nil {
			return s.DB.LabelValues(ctx, label, s.IDs...)
		}
		var vs []string
		for _, r := range s.Recordings {
			if v := r.Session.Labels[label]; v != "" {
				vs = append(vs, v)
			}
		}
		return vs, nil
	}
	stored, err := values(MatchIgnoreLabel)
	if err != nil {
		return mt, err
	}
	paths, err := rules.ParseLines(strings.Join(append(slices.Clone(ignore), stored...), "\n"))
	if err != nil {
		return mt, err
	}
	seen := map[string]bool{}
	for _, r := range mt.Ignore {
		seen[r.String()] = true
	}
	for _, p := range paths {
		if !seen[p.String()] {
			seen[p.String()] = true
			mt.Ignore = append(mt.Ignore, p)
		}
	}
	names, err := values(RedactLabel)
	if err != nil {
		return mt, err
	}
	for _, v := range names {
		for _, name := range strings.Split(v, "\n") {
			if name = strings.TrimSpace(name); name != "" && name != "off" && !slices.Contains(mt.Redact, name) {
				mt.Redact = append(mt.Redact, name)
			}
		}
	}
	scrubbed, err := values(ScrubLabel)
	if err != nil {
		return mt, err
	}
	if len(scrubbed) > 0 {
		mt.Scrubbed = true
	}
	return mt, nil
}
