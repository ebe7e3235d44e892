package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
)

// chaosPageData is what TestChaos_HTMLReport reads of a report's data.
type chaosPageData struct {
	Sessions []struct{ ID int64 }
	Chaos    struct {
		Seed    uint64 `json:",string"`
		Kinds   []string
		Rate    int
		Command string
		Faults  []struct {
			Session           int64
			Kind, Where, What string
			Did, Verdict      string
			At                int64
			St                int
			Stream, Request   int
		}
	}
}

var pageDataRE = regexp.MustCompile(`(?s)<script id="data" type="application/json">(.*?)</script>`)

// readChaosPage reads the report at path: its embedded data, after
// checking the file is 0600 and left no temporary file beside it.
func readChaosPage(t *testing.T, path string) chaosPageData {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatalf("no report written: %v", err)
	}
	if got := fi.Mode().Perm(); got != 0o600 {
		t.Errorf("report mode = %v; want 0600", got)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*tmp*")); len(left) > 0 {
		t.Errorf("temporary files left beside the report: %v", left)
	}
	page, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := pageDataRE.FindSubmatch(page)
	if m == nil {
		t.Fatalf("no data in the report:\n%.2000s", page)
	}
	var d chaosPageData
	if err := json.Unmarshal(m[1], &d); err != nil {
		t.Fatalf("report data: %v", err)
	}
	return d
}

// TestChaos_HTMLReport: replay --chaos-report writes, when replay is
// interrupted (as Ctrl-C does), an HTML report that names every fault
// stderr names, injected and not reached, with the same verdicts, each
// placed on a stream of its recorded session; with the command that
// replays the run. Under the client that drops Last-Event-ID, the failed
// verdict is in the report, on the event the cut followed, and replay
// still exits 1; a client that leaves after initialize reaches no fault,
// and the report lists and places each as not reached.
func TestChaos_HTMLReport(t *testing.T) {
	parallel(t) // each replay waits on its client, not on the CPU
	cassette := chaosCassette(t, "script")
	for _, tt := range []struct {
		name   string
		seed   uint64
		broken bool // the client drops Last-Event-ID
		leaves bool // the client leaves after initialize
		extra  []string
	}{
		{name: "BrokenClient", seed: 1, broken: true, extra: []string{"--chaos-faults", "cut-resumable", "--chaos-rate", "1"}},
		{name: "AllKinds", seed: 7},
		{name: "NotReached", seed: 7, leaves: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "chaos.html")
			extra := append([]string{"--chaos-report", out}, tt.extra...)
			code, stderr := chaosRun(t, cassette, tt.seed, func(url string) {
				tr := &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: 2}
				if tt.broken {
					tr.HTTPClient = &http.Client{Transport: dropLastEventID{http.DefaultTransport}}
				}
				if tt.leaves {
					cs, err := mcptest.NewClientAs(upgradedClient).Connect(testCtx(t), tr, &mcp.ClientSessionOptions{ProtocolVersion: mcptest.V20251125})
					if err != nil {
						t.Fatalf("connect: %v", err)
					}
					cs.Close()
					return
				}
				mcptest.ChaosRun(testCtx(t), tr, upgradedClient, "script")
			}, extra...)
			checkChaosExit(t, tt.seed, code, stderr)
			if !strings.Contains(stderr, "chaos: report written to "+out) {
				t.Errorf("stderr does not say where the report is:\n%s", stderr)
			}
			d := readChaosPage(t, out)

			// The faults of stderr, in its order, then those not reached.
			var want, wantVerdicts []string
			for _, m := range chaosLineRE.FindAllStringSubmatch(stderr, -1) {
				want, wantVerdicts = append(want, m[1]), append(wantVerdicts, m[4])
			}
			for _, l := range chaosNotReached(stderr) {
				want, wantVerdicts = append(want, l), append(wantVerdicts, "not reached")
			}
			if len(want) == 0 {
				t.Fatalf("seed %d: no fault on stderr:\n%s", tt.seed, stderr)
			}
			var got, verdicts []string
			sessions := map[int64]bool{}
			for _, s := range d.Sessions {
				sessions[s.ID] = true
			}
			for i, f := range d.Chaos.Faults {
				got = append(got, fmt.Sprintf("session %d, %s at %s: %s", f.Session, f.Kind, f.Where, f.What))
				verdicts = append(verdicts, f.Verdict)
				if !sessions[f.Session] {
					t.Errorf("fault %d is in session %d, which the report does not show (it shows %v)", i+1, f.Session, d.Sessions)
				}
				if f.St < 0 {
					t.Errorf("fault %d (%s at %s) is not placed on the timeline", i+1, f.Kind, f.Where)
				}
			}
			if !slices.Equal(got, want) || !slices.Equal(verdicts, wantVerdicts) {
				t.Errorf("report faults:\n%s\n%v\nwant, as on stderr:\n%s\n%v", strings.Join(got, "\n"), verdicts, strings.Join(want, "\n"), wantVerdicts)
			}
			if d.Chaos.Seed != tt.seed || !strings.Contains(d.Chaos.Command, fmt.Sprintf("--chaos %d", tt.seed)) || d.Chaos.Rate < 1 {
				t.Errorf("report summary: seed %d, rate %d, command %q; want seed %d and the command that replays it", d.Chaos.Seed, d.Chaos.Rate, d.Chaos.Command, tt.seed)
			}
			if tt.leaves && !slices.Equal(slices.Compact(slices.Clone(verdicts)), []string{"not reached"}) {
				t.Errorf("verdicts %v; want every fault not reached, the client having left after initialize", verdicts)
			}
			if tt.broken {
				if code != 1 {
					t.Errorf("replay exited %d with a failing verdict; want 1", code)
				}
				if len(d.Chaos.Faults) != 1 || d.Chaos.Faults[0].Verdict != "fail" || d.Chaos.Faults[0].At == 0 || !strings.Contains(d.Chaos.Faults[0].Did, "without Last-Event-ID") {
					t.Errorf("report faults %+v; want one failed cut-resumable, on the last event sent, saying the client resumed without Last-Event-ID", d.Chaos.Faults)
				}
				if !slices.Equal(d.Chaos.Kinds, []string{"cut-resumable"}) {
					t.Errorf("report kinds %v; want [cut-resumable]", d.Chaos.Kinds)
				}
			}
		})
	}
}

// TestChaos_ReportNotCassette: --chaos-report never names the cassette,
// nor a file in a folder that does not exist, nor goes without --chaos;
// each is refused before replay serves, and the cassette still reads.
func TestChaos_ReportNotCassette(t *testing.T) {
	cassette := chaosCassette(t, "script")
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"Cassette", []string{"--chaos", "1", "--chaos-report", cassette}, "would overwrite the cassette"},
		{"CassetteWAL", []string{"--chaos", "1", "--chaos-report", cassette + "-wal"}, "would overwrite the cassette"},
		{"NoFolder", []string{"--chaos", "1", "--chaos-report", filepath.Join(t.TempDir(), "no", "r.html")}, "no folder"},
		{"NoChaos", []string{"--chaos-report", filepath.Join(t.TempDir(), "r.html")}, "need --chaos SEED"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := mcpvcr(t, "", append([]string{"replay", "--cassette", cassette, "--listen", "127.0.0.1:0"}, tt.args...)...)
			if res.code != 2 || !strings.Contains(res.stderr, tt.want) || !strings.Contains(res.stderr, "try: ") {
				t.Errorf("replay %v exited %d; want 2 and %q with a try: line:\n%s", tt.args, res.code, tt.want, res.stderr)
			}
		})
	}
	if res := mcpvcr(t, "", "ls", "--cassette", cassette); res.code != 0 {
		t.Errorf("the cassette no longer reads: %s", res.stderr)
	}
}
