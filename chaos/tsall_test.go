package chaos

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
	"github.com/mcpvcr/mcpvcr/internal/recordtest"
	"github.com/mcpvcr/mcpvcr/store"
)

// The markers around docs/chaos-record.md's table of the TypeScript SDK client
// under every kind.
const (
	tsAllTableBegin = "<!-- chaos-table:ts-all begin (go test ./chaos -run TestChaos_TSClientEveryKind -update) -->"
	tsAllTableEnd   = "<!-- chaos-table:ts-all end -->"
)

// tsAll is the TypeScript SDK client running chaos.mjs script "all"
// against the Go SDK test server with tool pair, recorded fresh over
// Streamable HTTP with event ids and without (no recording resumes a
// stream: every resumption is chaos's own).
type tsAll struct {
	node       string
	ids, noIDs *store.Recording
}

// tsAllLive is what the client sees of script "all" on the live server.
var tsAllLive = `["connected","tools/list: ok","echo: ok","progress: ok","logging/setLevel: ok","log: ok","slow: ok","pair: ok","roots: ok","add: ok","close: ok"]`

// recordTSAll records the two sessions of tsAll.
func recordTSAll(t *testing.T) *tsAll {
	ts := &tsAll{node: mcptest.Everything(t)[0]}
	record := func(resumable bool) *store.Recording {
		opts := &mcp.StreamableHTTPOptions{}
		if resumable {
			opts.EventStore = mcp.NewMemoryEventStore(nil)
		}
		srv := mcptest.ServerConfig{Paired: true}.NewServer()
		var live string
		recs := recordtest.HTTP(t.Context(), t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, opts), "", func(endpoint string) {
			live = ts.run(t.Context(), t, endpoint)
		})
		if live != tsAllLive {
			t.Fatalf("recording (event ids: %t): the TypeScript client saw %s; want %s", resumable, live, tsAllLive)
		}
		if len(recs) != 1 || slices.ContainsFunc(recs[0].Streams, func(st store.Stream) bool { return st.ResumesID != 0 }) {
			t.Fatalf("recording (event ids: %t): %d sessions; want 1 that resumes no stream", resumable, len(recs))
		}
		return recs[0]
	}
	// Whether a recording has a place for every kind is up to its timing:
	// the two calls at once are answered side by side unless a loaded
	// machine lets something of the session fall between the answers.
	// Such a recording is made again, twice at most.
	for try := 1; ; try++ {
		ts.ids, ts.noIDs = record(true), record(false)
		var missing []string
		for _, k := range httpKinds(ts.ids.Session.Revision) {
			if len((Config{Seed: 1, Kinds: []FaultKind{k}, Rate: 1}).Plan(ts.recording(k))) == 0 {
				missing = append(missing, k.String())
			}
		}
		if len(missing) == 0 {
			return ts
		}
		if try == 3 {
			t.Fatalf("three recordings had no place for %s", strings.Join(missing, ", "))
		}
		t.Logf("recording %d has no place for %s; recording again", try, strings.Join(missing, ", "))
	}
}

// run runs the client once against endpoint and returns what it saw.
func (ts *tsAll) run(ctx context.Context, t *testing.T, endpoint string) string {
	out, err := exec.CommandContext(ctx, ts.node, tsChaosScript, endpoint, "all").Output()
	if err != nil {
		t.Logf("TypeScript client: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// recording returns the recording kind k is drawn on: the one without
// event ids for cut, the other for the rest.
func (ts *tsAll) recording(k FaultKind) *store.Recording {
	if k == FaultCut {
		return ts.noIDs
	}
	return ts.ids
}

// httpKinds are the kinds chaos injects over Streamable HTTP of rev.
func httpKinds(rev string) []FaultKind {
	return slices.DeleteFunc(FaultKinds(), func(k FaultKind) bool { return !Injected(k, store.StreamableHTTP, rev) })
}

// cell replays kind k under seed to the client and says what the judge
// said.
func (ts *tsAll) cell(t *testing.T, k FaultKind, seed uint64) string {
	rec := ts.recording(k)
	cfg := Config{Seed: seed, Kinds: []FaultKind{k}, Rate: 1}
	if len(cfg.Plan(rec)) == 0 {
		return "not drawn: the recording has no place for it"
	}
	h, _ := rawReplay(t, []*store.Recording{rec}, cfg, nil, func(endpoint string) { ts.run(t.Context(), t, endpoint) })
	if res := h.Results(); len(res) > 0 {
		return fmt.Sprintf("**%s**: %s", res[0].Verdict, stripIDs(res[0].Did))
	}
	return "not reached"
}

// tsAllTable writes the table of the client's verdicts under every kind,
// seeds 1–3.
func tsAllTable(t *testing.T, ts *tsAll) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| kind | TypeScript SDK %s client against the Go SDK test server (seeds 1–3) |\n|---|---|\n", npmVersion(t, "@modelcontextprotocol/sdk"))
	for _, k := range httpKinds(ts.ids.Session.Revision) {
		var cells []string
		bySeeds := map[string][]string{}
		for _, seed := range tableSeeds {
			cell := ts.cell(t, k, seed)
			if bySeeds[cell] == nil {
				cells = append(cells, cell)
			}
			bySeeds[cell] = append(bySeeds[cell], fmt.Sprint(seed))
		}
		fmt.Fprintf(&b, "| `%s` | %s |\n", k, seedCells(cells, bySeeds))
	}
	return b.String()
}

// seedVerdict returns the verdict a table row's cell gives for seed ("",
// when it names none: not drawn, not reached).
func seedVerdict(cell string, seed uint64) string {
	for _, part := range regexp.MustCompile(`(?:^|; )seeds? `).Split(cell, -1)[1:] {
		seeds, rest, _ := strings.Cut(part, ": ")
		if slices.Contains(strings.Split(seeds, ", "), fmt.Sprint(seed)) {
			if v, ok := strings.CutPrefix(rest, "**"); ok {
				v, _, _ = strings.Cut(v, "**")
				return v
			}
			return ""
		}
	}
	return ""
}

// TestChaos_TSClientEveryKind: the TypeScript SDK client, on recordings
// it made today against the Go SDK test server (no recorded resumption),
// meets every kind chaos injects over Streamable HTTP of their revision
// with seed 1: each is drawn, injected, and judged as docs/chaos-record.md's
// table says. With -update it writes that table instead (seeds 1–3).
func TestChaos_TSClientEveryKind(t *testing.T) {
	ts := recordTSAll(t)
	path := filepath.Join("..", "docs", "chaos-record.md")
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i, j := between(t, doc, tsAllTableBegin, tsAllTableEnd)
	if *updateTable {
		doc = append(doc[:i:i], append([]byte(tsAllTable(t, ts)), doc[j:]...)...)
		if err := os.WriteFile(path, doc, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	rows := map[string]string{}
	for _, l := range strings.Split(string(doc[i:j]), "\n") {
		if f := strings.SplitN(l, " | ", 2); len(f) == 2 && strings.HasPrefix(f[0], "| `") {
			rows[strings.Trim(f[0], "| `")] = strings.TrimSuffix(f[1], " |")
		}
	}
	for _, k := range httpKinds(ts.ids.Session.Revision) {
		t.Run(k.String(), func(t *testing.T) {
			want := seedVerdict(rows[k.String()], 1)
			if want == "" {
				t.Fatalf("docs/chaos-record.md's TypeScript table gives seed 1 of %s no verdict (%q): every kind must be met", k, rows[k.String()])
			}
			got := ts.cell(t, k, 1)
			if !strings.HasPrefix(got, "**"+want+"**") {
				t.Errorf("seed 1: %s; docs/chaos-record.md says %s", got, want)
			}
		})
	}
}
