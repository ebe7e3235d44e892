package mcpvcrtest_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
	"github.com/mcpvcr/mcpvcr/mcpvcrtest"
	"github.com/mcpvcr/mcpvcr/store"
)

// twoRuns is a cassette of two sessions of the Go SDK test script over
// Streamable HTTP with event ids (the same recording twice: they share
// every opening frame).
func twoRuns(t testing.TB) string {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "two.db")
	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for range 2 {
		f, err := os.Open(filepath.Join("..", "cassettes", "gosdk-http-2025-11-25.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		_, err = db.Import(ctx, f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// chaosClient connects to url as another client than the recorded one,
// lists the tools and calls echo, add and info (the first steps of the
// recorded script); errors are what the client saw.
func chaosClient(t testing.TB, url string, hc *http.Client) {
	t.Helper()
	ctx := context.Background()
	cs, err := newClient().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc, MaxRetries: 2}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Logf("connect: %v", err)
		return
	}
	defer cs.Close()
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Logf("tools/list: %v", err)
	}
	for _, c := range []*mcp.CallToolParams{
		{Name: "echo", Arguments: map[string]any{"text": "hello"}},
		{Name: "add", Arguments: map[string]any{"a": 2, "b": 3}},
		{Name: "info", Arguments: map[string]any{}},
	} {
		if _, err := cs.CallTool(ctx, c); err != nil {
			t.Logf("tools/call %s: %v", c.Name, err)
		}
	}
}

// TestChaosSeeds: a test body runs once per seed as subtest seed=N,
// each replaying with that seed's faults; the Go SDK client passes every
// verdict of the kinds drawn.
func TestChaosSeeds(t *testing.T) {
	cassette := twoRuns(t)
	var ran []string
	mcpvcrtest.ChaosSeeds(t, 1, 3, func(t *testing.T, seed uint64) {
		ran = append(ran, t.Name())
		srv := mcpvcrtest.NewServer(t, cassette, mcpvcrtest.Chaos(seed, "cut-resumable", "delay", "drop-priming", "refuse-get"))
		chaosClient(t, mcpvcrtest.Endpoint(srv), nil)
	})
	if os.Getenv(mcpvcrtest.ChaosSeedsEnv) == "" && strings.Join(ran, " ") != "TestChaosSeeds/seed=1 TestChaosSeeds/seed=2 TestChaosSeeds/seed=3" {
		t.Errorf("ChaosSeeds ran %v; want seeds 1 to 3 as subtests seed=N", ran)
	}
}

// dropLastEventID is a broken client's transport: it drops Last-Event-ID,
// so a resumption starts afresh.
type dropLastEventID struct{}

func (dropLastEventID) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Del("Last-Event-ID")
	return http.DefaultTransport.RoundTrip(r)
}

// TestChaos_FailsTest: a client that resumes a cut stream without
// Last-Event-ID fails the test at cleanup, naming the seed and the
// fault.
func TestChaos_FailsTest(t *testing.T) {
	cassette := twoRuns(t)
	rt := &recTB{TB: t}
	srv := mcpvcrtest.NewServer(rt, cassette, mcpvcrtest.Chaos(1, "cut-resumable"))
	chaosClient(t, mcpvcrtest.Endpoint(srv), &http.Client{Transport: dropLastEventID{}})
	got := rt.finish()
	for _, want := range []string{"chaos seed 1", "cut-resumable", "without Last-Event-ID", ": fail"} {
		if !strings.Contains(got, want) {
			t.Errorf("cleanup reported %q; want it to say %q", got, want)
		}
	}
}

// TestChaos_TransportStdio: Chaos over in-memory stdio (Transport of a
// stdio cassette): delays and the late result after the client's
// cancellation, the Go SDK client passing every verdict, seed by seed.
func TestChaos_TransportStdio(t *testing.T) {
	mcpvcrtest.ChaosSeeds(t, 1, 5, func(t *testing.T, seed uint64) {
		tr := mcpvcrtest.Transport(t, "../cassettes/gosdk-stdio-2025-11-25.jsonl", mcpvcrtest.Chaos(seed))
		saw := mcptest.ChaosRun(context.Background(), tr, &mcp.Implementation{Name: "chaos-client", Version: "1.0.0"}, "script")
		t.Logf("Go SDK client saw %q", saw)
	})
}

// TestChaos_TransportHTTPRefused: Transport of an HTTP cassette has no
// real listener to cut: Chaos is refused, with a try line.
func TestChaos_TransportHTTPRefused(t *testing.T) {
	ft := &fatalTB{recTB: recTB{TB: t}}
	ft.run(func() { mcpvcrtest.Transport(ft, "../cassettes/multi-gosdk-http-sse.jsonl", mcpvcrtest.Chaos(1)) })
	if !strings.Contains(ft.fatal, "Chaos injects faults over") || !strings.Contains(ft.fatal, "try: mcpvcrtest.NewServer") {
		t.Errorf("Transport with Chaos over HTTP reported %q; want a refusal naming NewServer", ft.fatal)
	}
}
