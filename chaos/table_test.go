package chaos

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
	"github.com/mcpvcr/mcpvcr/store"
)

// updateTable makes TestChaosTable write docs/chaos-record.md's tables instead
// of checking them: go test ./chaos -run TestChaosTable -update.
var updateTable = flag.Bool("update", false, "TestChaosTable: run the real clients too and write docs/chaos-record.md's tables")

// The markers around the generated tables in docs/chaos-record.md.
const (
	rawTableBegin     = "<!-- chaos-table:raw begin (go test ./chaos -run TestChaosTable -update) -->"
	rawTableEnd       = "<!-- chaos-table:raw end -->"
	clientsTableBegin = "<!-- chaos-table:clients begin (go test ./chaos -run TestChaosTable -update) -->"
	clientsTableEnd   = "<!-- chaos-table:clients end -->"
)

// tableSeeds are the seeds the real clients are run with for the table.
var tableSeeds = []uint64{1, 2, 3}

// kindNeeds says what cassette a kind needs to be drawn at all.
func kindNeeds(k FaultKind) string {
	switch k {
	case FaultCut:
		return "SSE answers without event ids (a server without an event store); no recorded resumption needed"
	case FaultCutResumable, FaultResume404, FaultResumeLate, FaultRetry:
		return "SSE answers with event ids; no recorded resumption needed (chaos serves its own)"
	case FaultDropPriming:
		return "2025-11-25 SSE answers with a priming event (event ids)"
	case FaultRefuseGet:
		return "a standalone GET stream that carries no message"
	case FaultLateResult:
		return "a request the recorded client cancelled"
	case FaultExpire, Fault503, FaultResetPeer, FaultEmptyResponse, FaultTimeout:
		return "at least three POSTs (any Streamable HTTP recording of the initialize era)"
	case FaultDelay, FaultSlicer, FaultReframe:
		return "an SSE answer (any Streamable HTTP recording)"
	case FaultStall:
		return "an SSE answer with two events or more, from POST 3 (any Streamable HTTP recording)"
	case FaultMalformed:
		return "a notification before a response on a POST's SSE answer (a call with progress or logging)"
	case FaultErrorResult:
		return "a result sent as an SSE event, from POST 3"
	case FaultLimitData:
		return "an SSE answer with two events or more, from POST 3; with event ids, a resumption served by chaos"
	case FaultListChanged:
		return "a tools/call answered with an SSE stream, from POST 3, by a server that declared tools.listChanged"
	case FaultEarlyPing:
		return "initialize answered with an SSE stream (any Streamable HTTP recording of the initialize era whose server streams its answers)"
	case FaultRedeliver:
		return "SSE answers with event ids and a server request before the response (sampling, elicitation, roots); no recorded resumption needed"
	}
	return ""
}

// rawTable runs each raw client of the confusion matrix once, with the
// first seed, and writes the table of what the judge said of it.
func rawTable(t *testing.T, recs freshRecordings) string {
	var b strings.Builder
	b.WriteString("| kind | cassette it needs | raw client (`chaos/confusion_test.go`) | verdict |\n|---|---|---|---|\n")
	for _, k := range FaultKinds() {
		cases, ok := confusionCases[k]
		if !ok {
			fmt.Fprintf(&b, "| `%s` | | not in the matrix: %s | |\n", k, confusionElsewhere[k])
			continue
		}
		rec := confusionRecording(t, k, recs)
		for i, c := range cases {
			res, _, logs := confusionRun(t, rec, k, confusionSeeds[0], c)
			if len(res) != 1 {
				t.Fatalf("%s, %s: %d faults injected; want 1\n%s", k, c.name, len(res), logs)
			}
			kind, needs := fmt.Sprintf("`%s`", k), kindNeeds(k)
			if i > 0 {
				kind, needs = "", ""
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", kind, needs, c.name, res[0].Verdict)
		}
	}
	return b.String()
}

// sdkDeadline is, for the kinds whose request nothing answers, the
// deadline the Go SDK client's run is given: it has no request timeout
// of its own, and without one would wait for the chaos script's own limit.
var sdkDeadline = map[FaultKind]time.Duration{FaultTimeout: 3 * time.Second, FaultStall: 3 * time.Second}

// goSDKTable runs the Go SDK client in process (chaos script
// "confusion") under each kind with each of tableSeeds, and writes the
// table of its verdicts.
func goSDKTable(t *testing.T, recs freshRecordings) string {
	var b strings.Builder
	b.WriteString("| kind | cassette it needs | Go SDK v1.8.0 client, in process (seeds 1–3) |\n|---|---|---|\n")
	for _, k := range FaultKinds() {
		if _, ok := confusionCases[k]; !ok {
			continue
		}
		rec := confusionRecording(t, k, recs)
		var cells []string
		bySeeds := map[string][]string{} // seeds by cell
		for _, seed := range tableSeeds {
			h, _ := rawReplay(t, []*store.Recording{rec}, Config{Seed: seed, Kinds: []FaultKind{k}, Rate: 1}, nil, func(url string) {
				ctx := t.Context()
				if d := sdkDeadline[k]; d > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, d)
					defer cancel()
				}
				mcptest.ChaosRun(ctx, &mcp.StreamableClientTransport{Endpoint: url}, &mcp.Implementation{Name: mcptest.ClientName, Version: mcptest.ClientVersion}, confusionScript(k))
			})
			cell := "not reached"
			if res := h.Results(); len(res) > 0 {
				cell = fmt.Sprintf("**%s**: %s", res[0].Verdict, stripIDs(res[0].Did))
			}
			if d := sdkDeadline[k]; d > 0 {
				cell = fmt.Sprintf("(run with a %s deadline on its context: the client has no request timeout of its own) %s", d, cell)
			}
			if bySeeds[cell] == nil {
				cells = append(cells, cell)
			}
			bySeeds[cell] = append(bySeeds[cell], fmt.Sprint(seed))
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", k, kindNeeds(k), seedCells(cells, bySeeds))
	}
	return b.String()
}

// stripIDs shortens what a client did for the table: event ids and
// times vary from run to run.
func stripIDs(did string) string {
	var out []string
	for _, w := range strings.Fields(did) {
		id := strings.TrimRight(w, ",;:)")
		switch {
		case strings.Contains(id, "_") && len(id) > 20, strings.Count(id, "-") >= 4 && len(id) >= 36:
			w = "…" + w[len(id):] // event ids: the Go SDK's, and UUIDs
		case strings.HasSuffix(w, "ms") && strings.Trim(w, "0123456789ms") == "":
			w = "N ms"
		}
		out = append(out, w)
	}
	s := strings.Join(out, " ")
	if i := strings.Index(s, " (next: "); i >= 0 && strings.HasSuffix(s, ")") {
		s = s[:i] // which request came next varies with the seed
	}
	return strings.ReplaceAll(s, "|", "\\|")
}

// between returns what doc holds between begin and end (their lines
// aside), and where.
func between(t *testing.T, doc []byte, begin, end string) (int, int) {
	i := bytes.Index(doc, []byte(begin+"\n"))
	j := bytes.Index(doc, []byte(end))
	if i < 0 || j < i {
		t.Fatalf("docs/chaos-record.md has no %q … %q", begin, end)
	}
	return i + len(begin) + 1, j
}

// TestChaosTable: docs/chaos-record.md's table of what the raw clients of the
// confusion matrix got is what they get (one seed each, a few seconds);
// with -update it is rewritten, and so are the tables of what the Go SDK
// client in process, the TypeScript SDK client and Inspector's CLI got
// under each kind (seeds 1–3).
func TestChaosTable(t *testing.T) {
	recs := recordConfusion(t)
	path := filepath.Join("..", "docs", "chaos-record.md")
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	raw := rawTable(t, recs)
	i, j := between(t, doc, rawTableBegin, rawTableEnd)
	if !*updateTable {
		if got := string(doc[i:j]); got != raw {
			t.Errorf("docs/chaos-record.md's raw-client table is not what the raw clients get; run go test ./chaos -run TestChaosTable -update\ncommitted:\n%s\nnow:\n%s", got, raw)
		}
		return
	}
	doc = append(doc[:i:i], append([]byte(raw), doc[j:]...)...)
	clients := goSDKTable(t, recs)
	i, j = between(t, doc, clientsTableBegin, clientsTableEnd)
	doc = append(doc[:i:i], append([]byte(clients), doc[j:]...)...)
	nodes := nodeTable(t)
	i, j = between(t, doc, nodeTableBegin, nodeTableEnd)
	doc = append(doc[:i:i], append([]byte(nodes), doc[j:]...)...)
	if err := os.WriteFile(path, doc, 0o644); err != nil {
		t.Fatal(err)
	}
}
