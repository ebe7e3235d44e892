package mcpvcrtest

import (
	"flag"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpvcr/mcpvcr/chaos"
	"github.com/mcpvcr/mcpvcr/clock"
	"github.com/mcpvcr/mcpvcr/probe"
)

// Mode says whether Proxy records or replays, as go-vcr's recorder modes
// do, with go-vcr's names. NewServer, Transport and Command always replay:
// they have no server to record from.
//
// An episode is what one test recorded: the sessions Proxy recorded for it
// are named after the test (t.Name()), so tests can share one cassette and
// ModeReplayWithNewEpisodes records only the tests it lacks. With one
// cassette per test (Cassette), every mode works per test.
type Mode int

const (
	// ModeRecordOnce replays the cassette when it exists and records it
	// when it does not. The default.
	ModeRecordOnce Mode = iota
	// ModeReplayOnly serves the cassette and never contacts the upstream,
	// for CI: a missing cassette fails the test at once, a client frame
	// the cassette does not match fails it (the client gets a -32019
	// error meanwhile), and nothing is ever written.
	ModeReplayOnly
	// ModeReplayWithNewEpisodes replays the test's episode when the
	// cassette has one (sessions named t.Name()); otherwise it records the
	// test through to the upstream and appends its sessions to the
	// cassette, keeping every other session.
	ModeReplayWithNewEpisodes
	// ModeRecordOnly forwards to the upstream and records into the
	// cassette, replacing what it held: re-record all.
	ModeRecordOnly
	// ModePassthrough forwards to the upstream and records nothing.
	ModePassthrough
)

// The modes of earlier releases, kept as names for the go-vcr ones.
const (
	Replay         = ModeReplayOnly  // replay, never contact the upstream
	Record         = ModeRecordOnly  // record, replacing the cassette
	ReplayOrRecord = ModeRecordOnce  // record when the cassette is missing
	Off            = ModePassthrough // forward, keep nothing
)

// modeNames are the modes as the -mcpvcr flag and MCPVCR_MODE spell them,
// in Mode order; modeAliases are the names they also take.
var (
	modeNames   = []string{"record-once", "replay-only", "replay-with-new-episodes", "record-only", "passthrough"}
	modeAliases = map[string]Mode{
		"replay":           ModeReplayOnly,
		"record":           ModeRecordOnly,
		"replay-or-record": ModeRecordOnce,
		"new-episodes":     ModeReplayWithNewEpisodes,
		"off":              ModePassthrough,
	}
)

// modeList is the list of names for messages.
const modeList = "record-once (default), replay-only, replay-with-new-episodes, record-only or passthrough"

// String returns the mode as the -mcpvcr flag and MCPVCR_MODE spell it:
// record-once, replay-only, replay-with-new-episodes, record-only or
// passthrough.
func (m Mode) String() string {
	if m >= 0 && int(m) < len(modeNames) {
		return modeNames[m]
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// goModeName is the mode's Go name, for hints: ModeRecordOnce.
func goModeName(m Mode) string {
	names := []string{"ModeRecordOnce", "ModeReplayOnly", "ModeReplayWithNewEpisodes", "ModeRecordOnly", "ModePassthrough"}
	if m >= 0 && int(m) < len(names) {
		return names[m]
	}
	return m.String()
}

// ParseMode reads a mode as the -mcpvcr flag and MCPVCR_MODE spell it (see
// String; "" is ModeRecordOnce). It takes go-vcr's names too, in any case
// and with or without the Mode prefix (ReplayOnly, ModeRecordOnce), and the
// names of earlier releases: replay, record, replay-or-record, new-episodes
// and off.
func ParseMode(s string) (Mode, error) {
	in := s
	s = strings.ToLower(strings.TrimSpace(s))
	s = strings.TrimPrefix(s, "mode")
	if s == "" {
		return ModeRecordOnce, nil
	}
	flat := strings.NewReplacer("-", "", "_", "").Replace(s)
	for i, n := range modeNames {
		if s == n || flat == strings.ReplaceAll(n, "-", "") {
			return Mode(i), nil
		}
	}
	if m, ok := modeAliases[s]; ok {
		return m, nil
	}
	return ModeRecordOnce, fmt.Errorf("mcpvcr mode %q is not %s", in, modeList)
}

// ModeEnv is the environment variable that sets Proxy's Mode when neither
// a Mode option nor the -mcpvcr flag does: MCPVCR_MODE=record-only go test
// ./... re-records every cassette, MCPVCR_MODE=replay-only keeps CI from
// ever contacting a server.
const ModeEnv = "MCPVCR_MODE"

// ModeFlag is the test binary's flag that sets Proxy's Mode when no Mode
// option does: go test ./mypkg -mcpvcr=record-only. (Across ./..., set
// MCPVCR_MODE: test binaries that do not import this package lack the flag.)
const ModeFlag = "mcpvcr"

func init() {
	if flag.Lookup(ModeFlag) == nil {
		flag.String(ModeFlag, "", "mcpvcrtest.Proxy mode: "+modeList+" (also "+ModeEnv+")")
	}
}

// Option configures NewServer, Transport, Command and Proxy. A Mode is an
// Option too: Proxy(t, cassette, url, mcpvcrtest.ModeRecordOnly).
type Option interface {
	apply(*config)
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// apply makes a Mode an Option: it sets the mode of Proxy, over the -mcpvcr
// flag and MCPVCR_MODE. NewServer, Transport and Command accept only
// ModeReplayOnly.
func (m Mode) apply(c *config) { c.mode = &m }

type config struct {
	// via names the function that replays through NewServer (Proxy),
	// for messages, and the mode it resolved.
	via     string
	viaMode Mode

	sessions  []int64
	rules     []string
	strict    bool
	pace      float64
	clock     clock.Clock
	mode      *Mode
	wait      time.Duration
	chaos     *chaos.Config // nil: no chaos
	chaosErr  error         // a kind Chaos could not read
	chaosRate int           // ChaosRate: faults per session, 0 for the default
	probes    []probe.Kind  // Probe: nil for none
	probeErr  error         // a kind Probe could not read

	afterCapture, beforeSave, beforeReplay []func(*Frame)
	redactHeaders, redactQuery             []string
}

// Redact names more HTTP headers and query parameters whose values Proxy
// stores as placeholders, on top of the recorder's defaults
// (Authorization, Cookie, API-key headers, token-like parameters and any
// name with token, secret, password, apikey or credential in it), as
// mcpvcr record's --redact-header and --redact-query do. A value in a
// message is redacted with an AfterCapture hook (Frame.Redact).
func Redact(headers, query []string) Option {
	return optionFunc(func(c *config) {
		c.redactHeaders = append(c.redactHeaders, headers...)
		c.redactQuery = append(c.redactQuery, query...)
	})
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

// Pace scales the recorded gaps between frames. 0, the default, replays as
// fast as possible: each frame as soon as the client frames it answers
// have arrived, whatever the recorded gaps. 1 keeps the recorded timing,
// 0.5 halves the gaps and 2 doubles them. The gaps are waited for on the
// Clock, so a fake clock replays recorded timing without sleeping.
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
// MCPVCR_MODE's, else ModeRecordOnce.
func (c *config) resolveMode() (Mode, error) {
	if c.mode != nil {
		return *c.mode, nil
	}
	if f := flag.Lookup(ModeFlag); f != nil && f.Value.String() != "" {
		m, err := ParseMode(f.Value.String())
		if err != nil {
			return ModeRecordOnce, fmt.Errorf("-mcpvcr: %w", err)
		}
		return m, nil
	}
	m, err := ParseMode(os.Getenv(ModeEnv))
	if err != nil {
		return ModeRecordOnce, fmt.Errorf("%s: %w", ModeEnv, err)
	}
	return m, nil
}

// Cassette returns the path of the test's own cassette,
// testdata/NAME.jsonl, where NAME is t.Name() with each subtest a
// directory: TestClient/empty_list is testdata/TestClient/empty_list.jsonl.
// Characters other than letters, digits, '.', '-' and '_' become '_', so
// a table test records one file per case whatever its names:
//
//	for _, tt := range tests {
//		t.Run(tt.name, func(t *testing.T) {
//			srv := mcpvcrtest.Proxy(t, mcpvcrtest.Cassette(t), upstream)
//			...
//		})
//	}
func Cassette(t testing.TB) string {
	parts := []string{"testdata"}
	for seg := range strings.SplitSeq(t.Name(), "/") {
		parts = append(parts, fileSafe(seg))
	}
	return filepath.Join(parts...) + ".jsonl"
}

// fileSafe makes one segment of a test name a file name on every system:
// other characters become '_', names that are only dots or that Windows
// reserves get a leading '_', and a long name is cut (with a hash of the
// whole, so that cases stay apart).
func fileSafe(seg string) string {
	b := []byte(seg)
	for i, c := range b {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_'
		if !ok {
			b[i] = '_'
		}
	}
	s := string(b)
	if strings.Trim(s, ".") == "" {
		s = "_" + s
	}
	switch base, _, _ := strings.Cut(strings.ToUpper(s), "."); base {
	case "CON", "PRN", "AUX", "NUL", "COM1", "COM2", "COM3", "COM4", "COM5", "COM6", "COM7", "COM8", "COM9",
		"LPT1", "LPT2", "LPT3", "LPT4", "LPT5", "LPT6", "LPT7", "LPT8", "LPT9":
		s = "_" + s
	}
	if len(s) > 100 {
		s = fmt.Sprintf("%s-%08x", s[:91], crc32.ChecksumIEEE([]byte(seg)))
	}
	return s
}
