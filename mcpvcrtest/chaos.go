package mcpvcrtest

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpvcr/mcpvcr/chaos"
	"github.com/mcpvcr/mcpvcr/internal/args"
	"github.com/mcpvcr/mcpvcr/replayer"
)

// Chaos replays with faults drawn from seed at places in each recorded
// session (mcpvcr replay --chaos): cut streams, refused or late
// resumptions, an expired session, a refused GET stream, delays, a left
// out priming event, a 503, a result after the client cancelled, a
// changed retry value, a 2026-07-28 response stream closed early. kinds names the kinds to draw from
// (chaos.FaultKind names such as "cut-resumable" or "expire"); none
// draws from every kind. The same seed and client behaviour give the
// same faults. At t.Cleanup, t fails for each fault whose verdict failed
// (the client did not do what the protocol asks next), naming the seed.
// NewServer (Streamable HTTP, HTTP+SSE, 2026-07-28 exchanges) and
// Transport of a stdio cassette (delays and late results); Command and
// Transport of an HTTP cassette refuse it.
func Chaos(seed uint64, kinds ...string) Option {
	return optionFunc(func(c *config) {
		ks, err := args.ParseFaultKinds(strings.Join(kinds, ","))
		c.chaos = &chaos.Config{Seed: seed, Kinds: ks}
		c.chaosErr = err
	})
}

// ChaosRate sets how many faults [Chaos] draws per recorded session, as
// replay's --chaos-rate does: n faults where the session has room for
// them (chaos.DefaultRate when n is 0). Without Chaos it does
// nothing; with it, the order of the two options does not matter.
func ChaosRate(n int) Option {
	return optionFunc(func(c *config) { c.chaosRate = max(n, 0) })
}

// ChaosSeedsEnv names the environment variable that widens ChaosSeeds'
// range: MCPVCR_CHAOS_SEEDS=1-50 (or a list, 3,7,9).
const ChaosSeedsEnv = "MCPVCR_CHAOS_SEEDS"

// ChaosSeeds runs body once per seed from first to last as subtests named
// seed=N, so that each failure names its seed and go test -run
// 'TestX/seed=N' runs it again. MCPVCR_CHAOS_SEEDS, when set, gives the
// seeds instead. body typically passes Chaos(seed) to NewServer.
func ChaosSeeds(t *testing.T, first, last uint64, body func(t *testing.T, seed uint64)) {
	t.Helper()
	seeds, err := chaosSeeds(os.Getenv(ChaosSeedsEnv), first, last)
	if err != nil {
		t.Fatalf("mcpvcrtest.ChaosSeeds: %s: %v\ntry: %s=1-50", ChaosSeedsEnv, err, ChaosSeedsEnv)
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) { body(t, seed) })
	}
}

// chaosSeeds reads a list of seeds and ranges (1-50,77); "" is first to
// last.
func chaosSeeds(spec string, first, last uint64) ([]uint64, error) {
	if spec == "" {
		spec = fmt.Sprintf("%d-%d", first, last)
	}
	var seeds []uint64
	for _, part := range strings.Split(spec, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err := strconv.ParseUint(lo, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a seed or a range of seeds", part)
		}
		b := a
		if isRange {
			if b, err = strconv.ParseUint(hi, 10, 64); err != nil || b < a {
				return nil, fmt.Errorf("%q is not a range of seeds", part)
			}
		}
		for s := a; s <= b; s++ {
			seeds = append(seeds, s)
		}
	}
	return seeds, nil
}

// checkChaos fails t for each failing verdict of a chaos replay, with the
// whole chaos report.
func checkChaos(t testing.TB, fn string, srv *replayer.Server) {
	t.Helper()
	h, _ := srv.Hook.(*chaos.Hook)
	if h == nil {
		return
	}
	var b strings.Builder
	if !h.Write(&b, "") {
		t.Errorf("mcpvcrtest.%s: chaos seed %d: the client failed a fault's verdict:\n%s", fn, h.Seed, b.String())
		return
	}
	t.Logf("mcpvcrtest.%s: chaos seed %d:\n%s", fn, h.Seed, b.String())
}
