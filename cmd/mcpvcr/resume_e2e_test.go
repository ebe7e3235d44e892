package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/internal/mcptest"
	"github.com/mcpvcr/mcpvcr/store"
)

// streamOfTool returns the number (as mcpvcr show prints it) of the POST
// stream that carried tools/call of tool in session 1 of a cassette.
func streamOfTool(tb testing.TB, cassette, tool string) int {
	tb.Helper()
	ctx := context.Background()
	db, err := store.OpenFile(ctx, cassette)
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	streams, err := db.Streams(ctx, 1)
	if err != nil {
		tb.Fatal(err)
	}
	frames, err := db.Frames(ctx, 1)
	if err != nil {
		tb.Fatal(err)
	}
	for _, f := range frames {
		var p struct {
			Name string `json:"name"`
		}
		if f.Method == "tools/call" && json.Unmarshal(jsonrpc.Parse(f.Data).Params, &p) == nil && p.Name == tool {
			for i, st := range streams {
				if st.ID == f.StreamID {
					return i + 1
				}
			}
		}
	}
	tb.Fatalf("no tools/call %s in %s", tool, cassette)
	return 0
}

// TestReplay_ResumeAfterCut cuts the SSE answer of tool progress after a
// few events with --cut, as a network failure would; the Go SDK client
// resumes with Last-Event-ID and must see every notification and the
// result exactly once: its transcript equals the live server's. (The
// second resume of the run is tool reconnect's, which the recording
// holds.) One case end to end; replayer's TestHTTP_ResumeAfterCut runs
// the others (2025-06-18 after 1 and 2 events, 2025-11-25 after 3) with
// the same checks.
func TestReplay_ResumeAfterCut(t *testing.T) {
	parallel(t)
	for _, tt := range []struct {
		version string
		cut     int // events before the cut: 2025-11-25 primes its streams
	}{
		{mcptest.V20251125, 2},
	} {
		t.Run(fmt.Sprintf("%s/after%d", tt.version, tt.cut), func(t *testing.T) {
			ctx := testCtx(t)
			cassette := filepath.Join(cassetteDir, "gosdk-http-"+tt.version+".jsonl")
			n := streamOfTool(t, cassette, "progress")
			rep := startServing(t, "replay", "--cassette", cassette, "--listen", "127.0.0.1:0", "--cut", fmt.Sprintf("%d:%d", n, tt.cut))
			got := roundTrip(t, mcptest.Run(ctx, t, &mcp.StreamableClientTransport{Endpoint: rep.URL + "/mcp"}, tt.version))
			if diff := cmp.Diff(goldenTranscript(t, tt.version), got); diff != "" {
				t.Errorf("after a cut and a resume (-live +replay):\n%s\n%s", diff, rep.stderr)
			}
			if code := rep.Stop(); code != 0 {
				t.Errorf("replay exited %d:\n%s", code, rep.stderr)
			}
			if !strings.Contains(rep.stderr.String(), "0 unmatched") || !strings.Contains(rep.stderr.String(), "1 stream cut, 2 resumed") {
				t.Errorf("replay report:\n%s", rep.stderr)
			}
		})
	}
}
