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
	return recordScript(t, resumable, "confusion",
		[]string{"connected", "tools/list: ok", "echo: ok", "progress: ok", "logging/setLevel: ok", "log: ok", "slow: ok", "add: ok", "close: ok"})
}

// recordScript is recordFresh of chaos script script, whose run must
// see want.
func recordScript(t testing.TB, resumable bool, script string, want []string) *store.Recording {
	t.Helper()
	ctx := t.Context()
	srv := mcptest.NewServer(mcptest.V1)
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
