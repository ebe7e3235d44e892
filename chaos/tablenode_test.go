package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
	"github.com/mcpvcr/mcpvcr/internal/recordtest"
	"github.com/mcpvcr/mcpvcr/store"
)

// The markers around docs/chaos-record.md's table of the Node.js clients.
const (
	nodeTableBegin = "<!-- chaos-table:node begin (go test ./chaos -run TestChaosTable -update) -->"
	nodeTableEnd   = "<!-- chaos-table:node end -->"
)

// tsChaosScript is the TypeScript SDK client the chaos tests drive.
var tsChaosScript = filepath.Join("..", "internal", "mcptest", "testdata", "tsclient", "chaos.mjs")

// nodeClient is a client of the Node.js table: run runs it once against
// endpoint and returns what it saw, for the record.
type nodeClient struct {
	name string
	run  func(ctx context.Context, t *testing.T, endpoint string) string
}

// npmVersion returns the version of the npm package pkg installed at the
// repository root.
func npmVersion(t *testing.T, pkg string) string {
	b, err := os.ReadFile(filepath.Join("..", "node_modules", filepath.FromSlash(pkg), "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v struct{ Version string }
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v.Version
}

// nodeClients returns the TypeScript SDK client (chaos script "kinds":
// server-everything's tools, with progress and a call it cancels) and
// Inspector's CLI (tools/list, one process a session).
func nodeClients(t *testing.T) []nodeClient {
	node := mcptest.Everything(t)[0]
	cli := mcptest.InspectorCLI(t)
	catalog := filepath.Join(t.TempDir(), "mcp.json")
	return []nodeClient{
		{"TypeScript SDK " + npmVersion(t, "@modelcontextprotocol/sdk") + " client", func(ctx context.Context, t *testing.T, endpoint string) string {
			out, err := exec.CommandContext(ctx, node, tsChaosScript, endpoint, "kinds").Output()
			if err != nil {
				t.Logf("TypeScript client: %v", err)
			}
			return strings.TrimSpace(string(out))
		}},
		{"Inspector's CLI " + npmVersion(t, mcptest.InspectorPackage), func(ctx context.Context, t *testing.T, endpoint string) string {
			args := append(slices.Clone(cli[1:]), "--protocol-era", "legacy", "--connect-timeout", "10000", "--transport", "http", "--method", "tools/list", endpoint)
			cmd := exec.CommandContext(ctx, cli[0], args...)
			cmd.Env = append(os.Environ(), "MCP_CATALOG_PATH="+catalog)
			out, err := cmd.CombinedOutput()
			if err != nil {
				return "exit: " + err.Error()
			}
			return fmt.Sprintf("ok (%d bytes)", len(out))
		}},
	}
}

// nodeTable records each Node.js client fresh against server-everything
// over Streamable HTTP (its SSE answers carry event ids; the recording
// holds no resumption), then replays that recording to the same client
// under each kind chaos injects there, with each of tableSeeds, and
// writes the table of the verdicts.
func nodeTable(t *testing.T) string {
	ctx := t.Context()
	u, err := url.Parse(mcptest.EverythingHTTP(t, mcptest.StreamableHTTP))
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: u.Scheme, Host: u.Host})
	proxy.FlushInterval = -1
	clients := nodeClients(t)
	var b strings.Builder
	b.WriteString("| kind |")
	recs := make([]*store.Recording, len(clients))
	for i, c := range clients {
		fmt.Fprintf(&b, " %s (seeds 1–3) |", c.name)
		var live string
		got := recordtest.HTTP(ctx, t, proxy, u.Path, func(endpoint string) { live = c.run(ctx, t, endpoint) })
		if len(got) != 1 {
			t.Fatalf("%s: %d sessions recorded; want 1", c.name, len(got))
		}
		if slices.ContainsFunc(got[0].Streams, func(st store.Stream) bool { return st.ResumesID != 0 }) {
			t.Fatalf("%s: the recording resumes a stream; want none", c.name)
		}
		t.Logf("%s, live: %s", c.name, live)
		recs[i] = got[0]
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", len(clients)) + "\n")
	for _, k := range FaultKinds() {
		if !Injected(k, store.StreamableHTTP, recs[0].Session.Revision) {
			continue
		}
		fmt.Fprintf(&b, "| `%s` |", k)
		for i, c := range clients {
			var cells []string
			bySeeds := map[string][]string{}
			for _, seed := range tableSeeds {
				cfg := Config{Seed: seed, Kinds: []FaultKind{k}, Rate: 1}
				cell := "not drawn: the recording has no place for it"
				if len(cfg.Plan(recs[i])) > 0 {
					h, _ := rawReplay(t, recs[i:i+1], cfg, nil, func(endpoint string) { c.run(ctx, t, endpoint) })
					cell = "not reached"
					if res := h.Results(); len(res) > 0 {
						cell = fmt.Sprintf("**%s**: %s", res[0].Verdict, stripIDs(res[0].Did))
					}
				}
				if bySeeds[cell] == nil {
					cells = append(cells, cell)
				}
				bySeeds[cell] = append(bySeeds[cell], fmt.Sprint(seed))
			}
			fmt.Fprintf(&b, " %s |", seedCells(cells, bySeeds))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// seedCells joins cells, each after the seeds that gave it.
func seedCells(cells []string, bySeeds map[string][]string) string {
	out := make([]string, len(cells))
	for i, cell := range cells {
		seeds := "seeds "
		if len(bySeeds[cell]) == 1 {
			seeds = "seed "
		}
		out[i] = seeds + strings.Join(bySeeds[cell], ", ") + ": " + cell
	}
	return strings.Join(out, "; ")
}
