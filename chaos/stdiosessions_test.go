package chaos

import (
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
	"github.com/mcpvcr/mcpvcr/internal/recordtest"
	"github.com/mcpvcr/mcpvcr/replayer"
	"github.com/mcpvcr/mcpvcr/store"
)

// pairLive is what the Go SDK client sees running chaos script "pair".
var pairLive = []string{"connected", "tools/list: ok", "pair: ok", "echo: ok", "close: ok"}

// TestChaos_StdioSessions: a cassette of two stdio sessions, recorded
// fresh into one file against the same server (tool pair among its
// tools): the Go SDK client running chaos script "pair", then script
// "confusion". Both begin alike (initialize, tools/list) and part at
// their first call, so replay holds both until the client's call says
// which it is. Chaos places its faults on the session the client
// follows, with that session's bytes: for the client running "pair",
// reorder swaps the pair's two responses; for the one running
// "confusion", late-request pings it after a call. Each client runs its
// script whole, every fault drawn is judged on its session (before they
// part, on the first one's: their lines agree there), and passes, and no
// fault of the session it followed is left not reached. Delays before
// any line the client waited for are drawn too.
func TestChaos_StdioSessions(t *testing.T) {
	ctx := t.Context()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "two.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	server := mcptest.ServerConfig{Paired: true}
	record := func(script string, want []string) *store.Recording {
		var saw []string
		rec := recordtest.StdioIn(ctx, t, db, func(r io.ReadCloser, w io.WriteCloser) {
			_ = server.NewServer().Run(ctx, &mcp.IOTransport{Reader: r, Writer: w})
		}, func(r io.ReadCloser, w io.WriteCloser) {
			saw = mcptest.ChaosRun(ctx, &mcp.IOTransport{Reader: r, Writer: w}, &mcp.Implementation{Name: mcptest.ClientName, Version: mcptest.ClientVersion}, script)
		})
		if !slices.Equal(saw, want) {
			t.Fatalf("recording %s: the client saw %q; want %q", script, saw, want)
		}
		return rec
	}
	pair, confusion := record("pair", pairLive), record("confusion", confusionLive)
	if pair.Session.ID == confusion.Session.ID {
		t.Fatalf("both sessions have id %d", pair.Session.ID)
	}
	recs := []*store.Recording{pair, confusion}
	// The seq up to which both sessions hold the same lines: there the
	// client's lines have not told them apart, and a fault is drawn from
	// the first one's plan.
	var shared int64
	for i := 0; i < min(len(pair.Frames), len(confusion.Frames)) && string(pair.Frames[i].Data) == string(confusion.Frames[i].Data); i++ {
		shared = pair.Frames[i].Seq
	}
	if shared < 2 {
		t.Fatalf("the sessions part at seq %d; want them to begin alike", shared+1)
	}
	for _, tc := range []struct {
		script string
		live   []string
		rec    *store.Recording
		kind   FaultKind
	}{
		{"pair", pairLive, pair, FaultReorder},
		{"confusion", confusionLive, confusion, FaultLateRequest},
		{"confusion both", confusionLive, confusion, FaultLateRequest},
	} {
		t.Run(tc.script, func(t *testing.T) {
			script, _, _ := strings.Cut(tc.script, " ")
			for seed := uint64(1); seed <= 8; seed++ {
				c := Config{Seed: seed, Kinds: []FaultKind{tc.kind}, Rate: 1}
				if strings.HasSuffix(tc.script, " both") {
					c.Kinds = []FaultKind{FaultReorder, FaultLateRequest, FaultDelay}
				}
				if len(c.Plan(tc.rec)) == 0 {
					t.Fatalf("seed %d: no %s planned on the %s session", seed, tc.kind, tc.script)
				}
				var logs syncWriter
				logger := slog.New(slog.NewTextHandler(&logs, nil))
				h := New(c, logger)
				srv := &replayer.Server{Recordings: recs, Hook: h, Logger: logger}
				var saw []string
				serveStdio(t, srv, func(r io.ReadCloser, w io.WriteCloser) {
					saw = mcptest.ChaosRun(ctx, &mcp.IOTransport{Reader: r, Writer: w}, &mcp.Implementation{Name: "another-client", Version: "9.9.9"}, script)
				})
				srv.Close()
				if !slices.Equal(saw, tc.live) {
					t.Errorf("seed %d: the client saw %q; want %q\n%s", seed, saw, tc.live, logs.String())
				}
				res := h.Results()
				if nr := h.NotReached(); len(nr) > 0 {
					t.Errorf("seed %d: faults not reached in the session the client went through to its end: %v\n%s", seed, nr, logs.String())
				}
				kinds := 0
				for _, r := range res {
					if r.Session != tc.rec.Session.ID && (r.Session != recs[0].Session.ID || r.Seq > shared) {
						t.Errorf("seed %d: %s judged on session %d; the client followed session %d", seed, r.Fault, r.Session, tc.rec.Session.ID)
					}
					if r.Kind == tc.kind {
						kinds++
					}
					// The Go SDK client v1.8.0 answers a server's ping
					// on a goroutine of its own and does not wait for
					// it when it closes: replayed at full speed, its
					// last calls and its close can come first, in a few
					// runs in a hundred on a loaded machine (a ping
					// followed by 40 ms of calls was answered in 500
					// runs of 500; by none, in 514 of 3,000). The wire
					// shows a ping left unanswered, and the verdict
					// says so; this test is about where faults go.
					unanswered := r.Kind == FaultLateRequest && r.Verdict == VerdictFail && strings.Contains(r.Did, "without answering the server's ping")
					if unanswered {
						t.Logf("seed %d: %s: %s (the Go SDK client left the ping unanswered)", seed, r.Fault, r.Did)
					} else if r.Verdict != VerdictPass {
						t.Errorf("seed %d: %s: %s (%s)\n%s", seed, r.Fault, r.Verdict, r.Did, logs.String())
					}
				}
				if kinds == 0 && !strings.HasSuffix(tc.script, " both") || len(res) == 0 {
					t.Errorf("seed %d: results %v; want a %s", seed, res, tc.kind)
				}
			}
		})
	}
}
