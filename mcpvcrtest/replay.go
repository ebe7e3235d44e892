package mcpvcrtest

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpvcr/mcpvcr/chaos"
	"github.com/mcpvcr/mcpvcr/probe"
	"github.com/mcpvcr/mcpvcr/replayer"
	"github.com/mcpvcr/mcpvcr/store"
)

var (
	httpTransports  = []store.Transport{store.StreamableHTTP, store.LegacySSE}
	stdioTransports = []store.Transport{store.Stdio}
)

// load reads the sessions of cassette that a replay over one of ts serves
// (those named by Session, if any). It fails t when there are none.
func load(t testing.TB, cassette string, c *config, fn string, ts ...store.Transport) []*store.Recording {
	t.Helper()
	return pick(t, loadAll(t, cassette, c, fn), cassette, fn, ts...)
}

// loadAll reads the sessions of cassette (those named by Session, if any).
func loadAll(t testing.TB, cassette string, c *config, fn string) []*store.Recording {
	t.Helper()
	recs, err := loadFile(cassette, c.sessions)
	if err != nil {
		t.Fatalf("mcpvcrtest.%s: %v", fn, err)
	}
	return recs
}

// pick keeps the recordings made over one of ts; it fails t if none is.
func pick(t testing.TB, recs []*store.Recording, cassette, fn string, ts ...store.Transport) []*store.Recording {
	t.Helper()
	out, err := over(recs, cassette, ts...)
	if err != nil {
		t.Fatalf("mcpvcrtest.%s: %v", fn, err)
	}
	return out
}

func loadFile(cassette string, sessions []int64) ([]*store.Recording, error) {
	recs, err := store.LoadFile(context.Background(), cassette, sessions...)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w\ntry: mcpvcr ls --cassette %s to see its sessions", cassette, err, cassette)
	}
	return recs, nil
}

func over(recs []*store.Recording, cassette string, ts ...store.Transport) ([]*store.Recording, error) {
	var out []*store.Recording
	var other []string
	for _, r := range recs {
		if slices.Contains(ts, r.Session.Transport) {
			out = append(out, r)
		} else {
			other = append(other, fmt.Sprintf("%d (%s)", r.Session.ID, r.Session.Transport))
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s has no session recorded over %s (it has %s)\ntry: %s", cassette, names(ts), strings.Join(other, ", "), otherHint(ts))
	}
	return out, nil
}

func names(ts []store.Transport) string {
	var s []string
	for _, t := range ts {
		s = append(s, t.String())
	}
	return strings.Join(s, " or ")
}

func otherHint(ts []store.Transport) string {
	if slices.Contains(ts, store.Stdio) {
		return "NewServer or Transport for HTTP sessions"
	}
	return "Transport or Command for stdio sessions"
}

// newServer builds the replayer for recs as c says.
func newServer(t testing.TB, recs []*store.Recording, c *config, fn string) *replayer.Server {
	t.Helper()
	if c.mode != nil && *c.mode != ModeReplayOnly {
		t.Fatalf("mcpvcrtest.%s: mode %s: %s only replays\ntry: mcpvcrtest.Proxy(t, cassette, upstreamURL, mcpvcrtest.%s) to record", fn, *c.mode, fn, goModeName(*c.mode))
	}
	if c.chaosErr != nil {
		t.Fatalf("mcpvcrtest.%s: Chaos: %v", fn, c.chaosErr)
	}
	if c.probeErr != nil {
		t.Fatalf("mcpvcrtest.%s: Probe: %v", fn, c.probeErr)
	}
	if c.probes != nil && (fn != "NewServer" || c.chaos != nil) {
		t.Fatalf("mcpvcrtest.%s: Probe places probes over a real HTTP listener (NewServer) only, and not beside Chaos\ntry: mcpvcrtest.NewServer(t, cassette, mcpvcrtest.Probe())", fn)
	}
	stdio := len(recs) > 0 && recs[0].Session.Transport == store.Stdio
	if c.chaos != nil && fn != "NewServer" && (fn != "Transport" || !stdio) {
		t.Fatalf("mcpvcrtest.%s: Chaos injects faults over a real HTTP listener (NewServer) or in-memory stdio (Transport of a stdio cassette) only\ntry: mcpvcrtest.NewServer(t, cassette, mcpvcrtest.Chaos(seed))", fn)
	}
	beforeReplay(recs, c.beforeReplay)
	mt, err := matchRules(c.rules, recs)
	if err != nil {
		t.Fatalf("mcpvcrtest.%s: %v", fn, err)
	}
	srv := &replayer.Server{
		Recordings: recs,
		Pace:       c.pace,
		Clock:      c.clock,
		Strict:     c.strict,
		Match:      mt,
		Wait:       c.wait,
	}
	if c.chaos != nil {
		cfg := *c.chaos
		cfg.Rate = c.chaosRate
		srv.Hook = chaos.New(cfg, nil)
	}
	if c.probes != nil {
		srv.Hook = probe.New(c.probes, nil)
	}
	return srv
}

// matchRules turns Match's rules and the sessions' stored match-ignore
// labels into a replayer.Match.
func matchRules(rules []string, recs []*store.Recording) (replayer.Match, error) {
	var mt replayer.Match
	var paths []string
	for _, r := range rules {
		switch strings.TrimSpace(r) {
		case "exact":
			mt.Exact = true
		case "tolerant", "":
		default:
			paths = append(paths, r)
		}
	}
	mt, err := replayer.StoredMatch(context.Background(), mt, paths, replayer.Sessions{Recordings: recs})
	if err != nil {
		return mt, fmt.Errorf("match rule: %w\ntry: a path in the syntax of mcpvcr verify --ignore, such as tools/call:params.arguments.when", err)
	}
	return mt, nil
}

// check fails t for every report with unmatched client frames, with the
// replayer's summary: the frame, the -32019 diff against the closest
// recorded frame, and the option that would have matched, written in Go.
func check(t testing.TB, fn, cassette string, reps []*replayer.Report) (ok bool) {
	t.Helper()
	var b bytes.Buffer
	for _, r := range reps {
		if !r.OK() {
			goHints(r).WriteSummary(&b)
		}
	}
	if b.Len() > 0 {
		t.Errorf("mcpvcrtest.%s: the client sent traffic that %s does not match (answered with JSON-RPC error %d):\n%s", fn, cassette, replayer.NoMatchCode, b.String())
		return false
	}
	return true
}

// reRecordHint says what to do when a test replayed through Proxy sent
// what its cassette lacks: the traffic changed on purpose, so record it
// again from the live server.
func reRecordHint(t testing.TB, mode Mode) string {
	rerun := fmt.Sprintf("go test -run '^%s$' -%s=record-only (or %s=record-only)", t.Name(), ModeFlag, ModeEnv)
	if mode == ModeReplayWithNewEpisodes {
		return "mcpvcrtest.Proxy: replay-with-new-episodes replays a test whose session the cassette holds already, so new traffic is not recorded: " +
			"if the change is intended, start the server and record this test again:\ntry: " + rerun
	}
	return "mcpvcrtest.Proxy: if the change is intended, start the server and record this test again:\ntry: " + rerun
}

// goHints returns a copy of r whose hints name the mcpvcrtest option that
// would have matched, as Go, instead of mcpvcr replay's flags.
func goHints(r *replayer.Report) *replayer.Report {
	out := *r
	out.Mismatches = make([]*replayer.Mismatch, len(r.Mismatches))
	for i, m := range r.Mismatches {
		c := *m
		c.Hint = goHint(m)
		out.Mismatches[i] = &c
	}
	return &out
}

// goHint is m's hint as the Go option that says it.
func goHint(m *replayer.Mismatch) string {
	switch {
	case m.Tolerant:
		return "try: the default tolerant matching would match it: drop mcpvcrtest.Match(\"exact\")"
	case len(m.Rules) > 0:
		quoted := make([]string, len(m.Rules))
		for i, r := range m.Rules {
			quoted[i] = strconv.Quote(r)
		}
		return "try: mcpvcrtest.Match(" + strings.Join(quoted, ", ") + ") would match it"
	case m.Hint != "" && !strings.Contains(m.Hint, "--"):
		return strings.ReplaceAll(m.Hint, "no matching rule should", "no mcpvcrtest.Match rule should")
	case m.Hint != "":
		// A hint this build cannot put in Go: its flags, said as such.
		return "(as mcpvcr replay's flags) " + m.Hint
	}
	return ""
}
