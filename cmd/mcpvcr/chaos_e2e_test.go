package main

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/chaos"
	"github.com/mcpvcr/mcpvcr/internal/mcptest"
	"github.com/mcpvcr/mcpvcr/store"
)

// chaosSeedsEnv names the seeds the chaos tests run: "1-50", or "3,7,9".
// By default a handful that, together, fire every kind.
const chaosSeedsEnv = "MCPVCR_CHAOS_SEEDS"

// defaultChaosSeeds fire every kind injected over Streamable HTTP of the
// initialize era between them (TestChaos_GoSDK checks it): 8 cut,
// expire, resume-late and retry; 23 503, cut-resumable, delay,
// late-result and refuse-get; 29 drop-priming, expire, refuse-get and
// resume-404.
var defaultChaosSeeds = []uint64{8, 23, 29}

func chaosSeeds(tb testing.TB) []uint64 {
	tb.Helper()
	return chaosSeedsOr(tb, defaultChaosSeeds)
}

// chaosSeedsOr is chaosSeeds with other default seeds.
func chaosSeedsOr(tb testing.TB, defaults []uint64) []uint64 {
	tb.Helper()
	spec := os.Getenv(chaosSeedsEnv)
	if spec == "" {
		return defaults
	}
	var seeds []uint64
	for _, part := range strings.Split(spec, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err1 := strconv.ParseUint(lo, 10, 64)
		b, err2 := a, error(nil)
		if isRange {
			b, err2 = strconv.ParseUint(hi, 10, 64)
		}
		if err1 != nil || err2 != nil || b < a {
			tb.Fatalf("%s=%q: want seeds such as 1-50 or 3,7,9", chaosSeedsEnv, spec)
		}
		for s := a; s <= b; s++ {
			seeds = append(seeds, s)
		}
	}
	return seeds
}

// chaosCassette is a cassette of several Streamable HTTP sessions that
// share their opening frames for a chaos script: for "script", the Go SDK
// script of gosdk-http-2025-11-25 (SSE answers with event ids and
// priming events) twice and run 0 of multi-gosdk-http-sse beside them;
// for "run0", the eight runs of multi-gosdk-http-sse (SSE answers without
// ids).
func chaosCassette(tb testing.TB, script string) string {
	tb.Helper()
	db := filepath.Join(tb.TempDir(), "chaos.db")
	files := []string{"multi-gosdk-http-sse.jsonl"}
	if script == "script" {
		files = []string{"gosdk-http-2025-11-25.jsonl", "gosdk-http-2025-11-25.jsonl"}
	}
	for _, c := range files {
		if res := mcpvcr(tb, "", "import", filepath.Join(cassetteDir, c), "--cassette", db); res.code != 0 {
			tb.Fatalf("import %s: %s", c, res.stderr)
		}
	}
	return db
}

// chaosRun is one chaos replay of cassette with seed and extra flags, to
// the client run: replay's exit code and stderr.
func chaosRun(t *testing.T, cassette string, seed uint64, run func(url string), extra ...string) (int, string) {
	t.Helper()
	args := append([]string{"replay", "--cassette", cassette, "--listen", "127.0.0.1:0", "--chaos", fmt.Sprint(seed)}, extra...)
	rep := startServing(t, args...)
	run(rep.URL + "/mcp")
	code := rep.Stop()
	return code, rep.stderr.String()
}

// chaosLineRE is one fault of the report: its number, the session, kind
// and place, the fault, what the client did and the verdict.
var chaosLineRE = regexp.MustCompile(`(?m)^chaos: \d+\. (session \d+, (\S+) at [^:]+: .*); the client (.*): (pass|fail|not observed)$`)

// chaosFaults returns the faults of a report (without what the client
// did), their kinds and their verdicts.
func chaosFaults(stderr string) (faults, kinds, verdicts []string) {
	for _, m := range chaosLineRE.FindAllStringSubmatch(stderr, -1) {
		faults = append(faults, m[1])
		kinds = append(kinds, m[2])
		verdicts = append(verdicts, m[4])
	}
	return faults, kinds, verdicts
}

// checkChaosExit: replay exits 1 when a verdict failed, and prints the
// command line that replays the run, seed included.
func checkChaosExit(t *testing.T, seed uint64, code int, stderr string) {
	t.Helper()
	_, _, verdicts := chaosFaults(stderr)
	if slices.Contains(verdicts, "fail") && code != 1 {
		t.Errorf("seed %d: a verdict failed but replay exited %d:\n%s", seed, code, stderr)
	}
	if code != 0 && code != 1 {
		t.Errorf("seed %d: replay exited %d:\n%s", seed, code, stderr)
	}
	if !strings.Contains(stderr, fmt.Sprintf("chaos: replay this run: mcpvcr replay --cassette ")) || !strings.Contains(stderr, fmt.Sprintf("--chaos %d", seed)) {
		t.Errorf("seed %d: no command line replaying the run:\n%s", seed, stderr)
	}
	if strings.Contains(stderr, "invented an answer") {
		t.Errorf("seed %d: replay invented an answer beyond the faults:\n%s", seed, stderr)
	}
}

// TestChaos_GoSDK replays the cassette under each seed twice to the Go
// SDK client in process, doing each of the chaos scripts: the faults
// injected are the same in both runs, each was announced on stderr as
// injected, and the exit code follows the verdicts. Between them, the
// seeds fire every kind injected over Streamable HTTP.
func TestChaos_GoSDK(t *testing.T) {
	parallel(t) // each replay waits on its client, not on the CPU

	var mu sync.Mutex // guards fired
	fired := map[string][]uint64{}
	t.Cleanup(func() { // once every seed's subtest has ended
		t.Logf("kinds fired, by seed: %v", fired)
		for _, k := range chaos.FaultKinds() {
			// Reorder has no place in these cassettes: TestChaos_Reorder.
			if chaos.Injected(k, store.StreamableHTTP, mcptest.V20251125) && k != chaos.FaultReorder && !chaos.OptIn(k) && len(fired[k.String()]) == 0 {
				t.Errorf("kind %s fired in no seed of %v (fired: %v)", k, chaosSeeds(t), fired)
			}
		}
	})
	for _, script := range []string{"script", "run0"} {
		for _, seed := range chaosSeeds(t) {
			t.Run(fmt.Sprint(script, "/seed", seed), func(t *testing.T) {
				t.Parallel()
				cassette := chaosCassette(t, script) // a cassette of its own: replay may write its index
				kinds := chaosSameSeed(t, cassette, seed, func(url string) {
					saw := mcptest.ChaosRun(testCtx(t), &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: 2}, upgradedClient, script)
					t.Logf("Go SDK client saw %q", saw)
				})
				mu.Lock()
				defer mu.Unlock()
				for _, k := range kinds {
					if !slices.Contains(fired[k], seed) {
						fired[k] = append(fired[k], seed)
					}
				}
			})
		}
	}
}

// chaosSameSeed replays cassette under seed twice to the client run and
// checks that both runs injected the same faults; it returns their kinds.
func chaosSameSeed(t *testing.T, cassette string, seed uint64, run func(url string), extra ...string) []string {
	t.Helper()
	return chaosSameRuns(t, seed, func() (int, string) { return chaosRun(t, cassette, seed, run, extra...) })
}

// chaosSameRuns is chaosSameSeed for any replay: once runs one chaos
// replay under seed and returns its exit code and stderr.
func chaosSameRuns(t *testing.T, seed uint64, once func() (int, string)) []string {
	t.Helper()
	var runs, reached [2][]string
	var kinds []string
	for i := range runs {
		code, stderr := once()
		faults, _, _ := chaosFaults(stderr)
		if got, want := strings.Count(stderr, "chaos: injected"), len(faults); got != want {
			t.Errorf("seed %d: %d faults announced as injected, %d reported:\n%s", seed, got, want, stderr)
		}
		checkChaosExit(t, seed, code, stderr)
		reached[i] = faults
		runs[i] = append(slices.Clone(faults), chaosNotReached(stderr)...)
		slices.Sort(runs[i])
		if len(runs[i]) == 0 {
			t.Errorf("seed %d run %d: no fault planned in the session served:\n%s", seed, i+1, stderr)
		}
		_, kinds, _ = chaosFaults(stderr)
		t.Logf("seed %d run %d:\n%s", seed, i+1, strings.Join(chaosReport(stderr), "\n"))
	}
	// The faults drawn (injected or not reached) must be the same; which
	// of them a client reaches may differ where it sends concurrently (a
	// notification fired beside its next request reaches replay in
	// either order, and faults are placed by the session's POSTs).
	if !slices.Equal(runs[0], runs[1]) {
		t.Errorf("seed %d: two runs drew different faults:\n%s\n--\n%s", seed, strings.Join(runs[0], "\n"), strings.Join(runs[1], "\n"))
	} else if !slices.Equal(reached[0], reached[1]) {
		t.Logf("seed %d: the same faults drawn, but the client reached different ones (it sent concurrently):\n%s\n--\n%s", seed, strings.Join(reached[0], "\n"), strings.Join(reached[1], "\n"))
	}
	return kinds
}

// chaosNotReached returns the faults planned that the client did not
// reach, as chaosFaults writes an injected one.
func chaosNotReached(stderr string) []string {
	var out []string
	for _, l := range strings.Split(stderr, "\n") {
		if f, ok := strings.CutPrefix(l, "chaos: not reached: "); ok {
			out = append(out, f)
		}
	}
	return out
}

// chaosReport returns the chaos lines of stderr.
func chaosReport(stderr string) []string {
	var out []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "chaos: ") {
			out = append(out, l)
		}
	}
	return out
}

// dropLastEventID is a deliberately broken client: an HTTP transport
// that drops Last-Event-ID from every request, so that a resumption
// starts the stream afresh.
type dropLastEventID struct{ rt http.RoundTripper }

func (d dropLastEventID) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Header.Get("Last-Event-ID") != "" {
		r = r.Clone(r.Context())
		r.Header.Del("Last-Event-ID")
	}
	return d.rt.RoundTrip(r)
}

// TestChaos_BrokenClientFails: the Go SDK client behind a transport that
// drops Last-Event-ID is cut on a resumable stream; the verdict fails,
// naming the id it should have sent, and replay exits 1. The same seed
// with the client unbroken passes.
func TestChaos_BrokenClientFails(t *testing.T) {
	parallel(t) // each replay waits on its client, not on the CPU
	cassette := chaosCassette(t, "script")
	const seed = 1
	for _, broken := range []bool{false, true} {
		code, stderr := chaosRun(t, cassette, seed, func(url string) {
			tr := &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: 2}
			if broken {
				tr.HTTPClient = &http.Client{Transport: dropLastEventID{http.DefaultTransport}}
			}
			mcptest.ChaosRun(testCtx(t), tr, upgradedClient, "script")
		}, "--chaos-faults", "cut-resumable", "--chaos-rate", "1")
		_, kinds, verdicts := chaosFaults(stderr)
		if !slices.Equal(kinds, []string{"cut-resumable"}) {
			t.Fatalf("broken=%t: faults %v; want one cut-resumable:\n%s", broken, kinds, stderr)
		}
		want := "pass"
		if broken {
			want = "fail"
			if !strings.Contains(stderr, "without Last-Event-ID") {
				t.Errorf("the failing verdict does not say the client resumed without Last-Event-ID:\n%s", stderr)
			}
			if code != 1 {
				t.Errorf("replay exited %d with a failing verdict; want 1:\n%s", code, stderr)
			}
		}
		if verdicts[0] != want {
			t.Errorf("broken=%t: verdict %s; want %s:\n%s", broken, verdicts[0], want, stderr)
		}
	}
}

// tsChaosScript is the TypeScript SDK client of the chaos tests.
var tsChaosScript = filepath.Join("..", "..", "internal", "mcptest", "testdata", "tsclient", "chaos.mjs")

// TestChaos_TSClient is TestChaos_GoSDK with the TypeScript SDK client
// (a node process): the same faults in both runs of a seed, each
// announced, the exit code following the verdicts. Its initialize asks
// for other capabilities than the recorded Go SDK client's, and its
// cancellation gives another reason, which --ignore leaves aside.
func TestChaos_TSClient(t *testing.T) {
	parallel(t) // each replay waits on its client, not on the CPU
	node := mcptest.Everything(t)[0]
	for _, script := range []string{"script", "run0"} {
		for _, seed := range chaosSeeds(t) {
			t.Run(fmt.Sprint(script, "/seed", seed), func(t *testing.T) {
				t.Parallel()
				cassette := chaosCassette(t, script) // a cassette of its own: replay may write its index
				chaosSameSeed(t, cassette, seed, func(url string) {
					cmd := exec.CommandContext(testCtx(t), node, tsChaosScript, url, script)
					cmd.Env = append(os.Environ(), "CLIENT_NAME=ts-chaos-client")
					var stdout, stderr syncBuffer
					cmd.Stdout, cmd.Stderr = &stdout, &stderr
					if err := cmd.Run(); err != nil {
						t.Errorf("TypeScript client: %v\n%s", err, stderr.String())
					}
					t.Logf("TypeScript client saw %s", stdout.String())
				}, "--ignore", "initialize:params.capabilities", "--ignore", "notifications/cancelled:params.reason")
			})
		}
	}
}

// TestChaos_GoSDKProcess is TestChaos_GoSDK with the Go SDK client as a
// process of its own (internal/mcptest/chaosclient), for the default
// seeds: the same faults in both runs of a seed.
func TestChaos_GoSDKProcess(t *testing.T) {
	parallel(t) // each replay waits on its client, not on the CPU
	bin := filepath.Join(t.TempDir(), "chaosclient")
	build := exec.Command("go", "build", "-o", bin, "github.com/mcpvcr/mcpvcr/internal/mcptest/chaosclient")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build chaosclient: %v\n%s", err, out)
	}
	for _, script := range []string{"script", "run0"} {
		for _, seed := range chaosSeeds(t) {
			t.Run(fmt.Sprint(script, "/seed", seed), func(t *testing.T) {
				t.Parallel()
				cassette := chaosCassette(t, script) // a cassette of its own: replay may write its index
				chaosSameSeed(t, cassette, seed, func(url string) {
					cmd := exec.CommandContext(testCtx(t), bin, "-url", url, "-script", script)
					var stdout, stderr syncBuffer
					cmd.Stdout, cmd.Stderr = &stdout, &stderr
					if err := cmd.Run(); err != nil {
						t.Errorf("chaosclient: %v\n%s", err, stderr.String())
					}
					t.Logf("Go SDK client process saw %s", stdout.String())
				})
			})
		}
	}
}

// TestChaos_InspectorCLI is TestChaos_TSClient with Inspector's CLI, the
// client most users try first: one run of it is one session (initialize,
// the echo call of run 0, close). Its exit code is the client's business
// (a fault may make it give up); the faults drawn must be the same in
// both runs of a seed, and replay's verdicts and exit code must agree.
func TestChaos_InspectorCLI(t *testing.T) {
	parallel(t) // each replay waits on its client, not on the CPU
	cli := mcptest.InspectorCLI(t)
	for _, seed := range chaosSeeds(t) {
		t.Run(fmt.Sprint("run0/seed", seed), func(t *testing.T) {
			t.Parallel()
			cassette := chaosCassette(t, "run0") // a cassette of its own: replay may write its index
			chaosSameSeed(t, cassette, seed, func(url string) {
				args := append(cli[1:], url, "--connect-timeout", "3000", "--method", "tools/call", "--tool-name", "echo", "--tool-arg", "text=run 0")
				cmd := exec.CommandContext(testCtx(t), cli[0], args...)
				cmd.Env = append(os.Environ(), "MCP_CATALOG_PATH="+filepath.Join(t.TempDir(), "mcp.json"))
				out, err := cmd.CombinedOutput()
				t.Logf("Inspector CLI (%v): %s", err, out)
			}, "--ignore", "initialize:params.capabilities")
		})
	}
}
