package mcpvcrtest

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/mcpvcr/mcpvcr/clock"
)

// Mode says whether Proxy records or replays, as go-vcr's recorder modes do.
// NewServer, Transport and Command always replay: they have no server to
// record from.
type Mode int

const (
	// Replay serves the cassette; the upstream is never contacted. The
	// default.
	Replay Mode = iota
	// Record forwards to the upstream and records into the cassette,
	// replacing what it held.
	Record
	// ReplayOrRecord replays when the cassette exists and records it when
	// it does not.
	ReplayOrRecord
	// Off forwards to the upstream and records nothing.
	Off
)

var modeNames = []string{"replay", "record", "replay-or-record", "off"}

// String returns the mode as the -mcpvcr flag and MCPVCR_MODE spell it.
func (m Mode) String() string {
	if m >= 0 && int(m) < len(modeNames) {
		return modeNames[m]
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// ParseMode reads a mode as the -mcpvcr flag and MCPVCR_MODE spell it:
// replay, record, replay-or-record or off ("" is replay).
func ParseMode(s string) (Mode, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" {
		return Replay, nil
	}
	for i, n := range modeNames {
		if s == n {
			return Mode(i), nil
		}
	}
	return Replay, fmt.Errorf("mcpvcr mode %q is not replay, record, replay-or-record or off", s)
}

// ModeEnv is the environment variable that sets Proxy's Mode when neither
// a Mode option nor the -mcpvcr flag does.
const ModeEnv = "MCPVCR_MODE"

// ModeFlag is the test binary's flag that sets Proxy's Mode when no Mode
// option does: go test ./mypkg -mcpvcr=record. (Across ./..., set
// MCPVCR_MODE: test binaries that do not import this package lack the flag.)
const ModeFlag = "mcpvcr"

func init() {
	if flag.Lookup(ModeFlag) == nil {
		flag.String(ModeFlag, "", "mcpvcrtest.Proxy mode: replay (default), record, replay-or-record or off (also "+ModeEnv+")")
	}
}

// Option configures NewServer, Transport, Command and Proxy. A Mode is an
// Option too: Proxy(t, cassette, url, mcpvcrtest.Record).
type Option interface {
	apply(*config)
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// apply makes a Mode an Option: it sets the mode of Proxy, over the -mcpvcr
// flag and MCPVCR_MODE. NewServer, Transport and Command accept only Replay.
func (m Mode) apply(c *config) { c.mode = &m }

type config struct {
	sessions []int64
	rules    []string
	strict   bool
	pace     float64
	clock    clock.Clock
	mode     *Mode
	wait     time.Duration
}

// Session replays only the recorded sessions ids (as mcpvcr ls numbers
// them). By default every session of the cassette recorded over the
// transport served is a candidate, and each client is matched to the one its
// frames single out.
func Session(ids ...int64) Option {
	return optionFunc(func(c *config) { c.sessions = append(c.sessions, ids...) })
}

// Match adds matching rules, as mcpvcr replay's --match and --ignore take
// them: "exact" compares client frames as recorded (mcpvcr replay --match
// exact); any other rule is a path to ignore, in the syntax of
// mcpvcr verify --ignore, such as "tools/call:params.arguments.when". Rules
// stored with the sessions (label match-ignore) always apply.
func Match(rules ...string) Option {
	return optionFunc(func(c *config) { c.rules = append(c.rules, rules...) })
}

// Strict also checks the client's side of the HTTP transport: the headers
// the negotiated revision requires (mcpvcr replay --strict).
func Strict() Option {
	return optionFunc(func(c *config) { c.strict = true })
}

// Pace scales the recorded gaps between frames: 0 (the default) sends each
// frame as soon as it is due, 1 keeps the recorded timing, 2 doubles it.
func Pace(factor float64) Option {
	return optionFunc(func(c *config) { c.pace = factor })
}

// Clock paces the replay (see Pace) with c, such as a clock.Fake that the
// test advances, and times Proxy's recordings. Command refuses it: its
// replay runs in a child process (use Transport).
func Clock(c clock.Clock) Option {
	return optionFunc(func(cf *config) { cf.clock = c })
}

// Wait bounds how long a request waits for an answer that the recording
// gives only after client frames this client has not sent, before it is
// answered with a -32019 error (replayer.Server.Wait). If zero,
// replayer.DefaultWait.
func Wait(d time.Duration) Option {
	return optionFunc(func(c *config) { c.wait = d })
}

func newConfig(opts []Option) *config {
	c := &config{}
	for _, o := range opts {
		o.apply(c)
	}
	return c
}

// resolveMode returns the mode: the option's, else -mcpvcr's, else
// MCPVCR_MODE's, else Replay.
func (c *config) resolveMode() (Mode, error) {
	if c.mode != nil {
		return *c.mode, nil
	}
	if f := flag.Lookup(ModeFlag); f != nil && f.Value.String() != "" {
		m, err := ParseMode(f.Value.String())
		if err != nil {
			return Replay, fmt.Errorf("-mcpvcr: %w", err)
		}
		return m, nil
	}
	m, err := ParseMode(os.Getenv(ModeEnv))
	if err != nil {
		return Replay, fmt.Errorf("%s: %w", ModeEnv, err)
	}
	return m, nil
}
