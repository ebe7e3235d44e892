package chaos

import (
	"net/http"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
	"github.com/mcpvcr/mcpvcr/internal/recordtest"
	"github.com/mcpvcr/mcpvcr/store"
)

// recordFresh records, through recorder.HTTP, one session of the Go SDK
// client running chaos script "confusion" against the Go SDK test server
// in process, over Streamable HTTP at 2025-11-25: with an event store
// when resumable (its SSE events have ids, so streams can be resumed),
// without one otherwise. Nothing cuts a stream while it records, so the
// recording holds no resumption: what chaos serves of a resumption is
// its own.
func recordFresh(t testing.TB, resumable bool) *store.Recording {
	t.Helper()
	return recordScript(t, resumable, "confusion", confusionLive)
}

// confusionLive is what the Go SDK client sees of chaos script
// "confusion" live.
var confusionLive = []string{"connected", "tools/list: ok", "echo: ok", "progress: ok", "logging/setLevel: ok", "log: ok", "slow: ok", "add: ok", "close: ok"}

// recordScript is recordFresh of chaos script script, whose run must
// see want.
func recordScript(t testing.TB, resumable bool, script string, want []string) *store.Recording {
	t.Helper()
	return recordScriptOn(t, mcptest.NewServer(mcptest.V1), resumable, script, want)
}

// recordScriptOn is recordScript against server srv.
func recordScriptOn(t testing.TB, srv *mcp.Server, resumable bool, script string, want []string) *store.Recording {
	t.Helper()
	ctx := t.Context()
	opts := &mcp.StreamableHTTPOptions{}
	if resumable {
		opts.EventStore = mcp.NewMemoryEventStore(nil)
	}
	var saw []string
	recs := recordtest.HTTP(ctx, t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, opts), "", func(endpoint string) {
		saw = mcptest.ChaosRun(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint}, &mcp.Implementation{Name: mcptest.ClientName, Version: mcptest.ClientVersion}, script)
	})
	if !slices.Equal(saw, want) {
		t.Fatalf("recording: the client saw %q; want %q", saw, want)
	}
	if len(recs) != 1 {
		t.Fatalf("%d sessions recorded; want 1", len(recs))
	}
	for _, st := range recs[0].Streams {
		if st.ResumesID != 0 {
			t.Fatalf("the recording resumes stream %d: want none", st.ResumesID)
		}
	}
	return recs[0]
}

// TestChaos_ForeignSessionFirst: a cassette whose first session is of
// another transport (a GET of the endpoint before the client connected,
// which the recorder keeps as an HTTP+SSE session answered 400) and
// whose second is the Go SDK client's, recorded fresh with event ids and
// no resumption. Chaos with one cut-resumable per session places the cut
// in the client's session, the client (under another clientInfo)
// resumes, and the verdict is pass.
// Before, the live session's plan was pinned when it began, to the first
// recorded session in the cassette, and nothing was injected.
func TestChaos_ForeignSessionFirst(t *testing.T) {
	ctx := t.Context()
	srv := mcptest.NewServer(mcptest.V1)
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{EventStore: mcp.NewMemoryEventStore(nil)})
	client := &mcp.Implementation{Name: mcptest.ClientName, Version: mcptest.ClientVersion}
	var live []string
	recs := recordtest.HTTP(ctx, t, handler, "", func(endpoint string) {
		resp, err := http.Get(endpoint)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		live = mcptest.ChaosRun(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint}, client, "confusion")
	})
	if len(recs) != 2 || recs[0].Session.Transport == recs[1].Session.Transport {
		t.Fatalf("recorded %d sessions; want a stray GET's and the client's, of two transports", len(recs))
	}
	for seed := uint64(1); seed <= 3; seed++ {
		var got []string
		h, logs := rawReplay(t, recs, Config{Seed: seed, Kinds: []FaultKind{FaultCutResumable}, Rate: 1}, nil, func(url string) {
			got = mcptest.ChaosRun(ctx, &mcp.StreamableClientTransport{Endpoint: url}, &mcp.Implementation{Name: "another-client", Version: "2"}, "confusion")
		})
		if !slices.Equal(got, live) {
			t.Errorf("seed %d: the client saw %q; live %q", seed, got, live)
		}
		res := h.Results()
		if len(res) != 1 || res[0].Session != recs[1].Session.ID || res[0].Verdict != VerdictPass {
			t.Errorf("seed %d: results %v; want one cut-resumable in session %d, pass\n%s", seed, res, recs[1].Session.ID, logs)
		}
	}
}
