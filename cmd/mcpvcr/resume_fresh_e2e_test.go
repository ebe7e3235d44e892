package main

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
	"github.com/mcpvcr/mcpvcr/store"
)

// TestResume_FreshRecording records, now, the TypeScript SDK client
// calling server-everything over Streamable HTTP (its answers are SSE
// streams with event ids); the recording holds no resumption, as almost
// none do. Then, for every SSE answer with event ids and every cut point
// in it, replay cuts the stream there (--cut) and the client, resuming
// with Last-Event-ID, must end with what it got live: replay serves the
// rest of a stream it cut from the recorded events after the client's
// Last-Event-ID, reports the resumption, and invents nothing. Under
// chaos (cut-resumable, retry, resume-late) the verdict is pass only
// with the rest of the stream delivered.
func TestResume_FreshRecording(t *testing.T) {
	parallel(t)
	node := mcptest.Everything(t)[0]
	db := filepath.Join(t.TempDir(), "c.db")
	dumpOnFailure(t, db)
	rec := startServing(t, "record", "--cassette", db, "--upstream", mcptest.EverythingHTTP(t, mcptest.StreamableHTTP), "--listen", "127.0.0.1:0")
	run := func(t *testing.T, url string) []string {
		saw, _ := tsChaosRun(t, node, url, "everything", "SHOW_RESULTS=1")
		return saw
	}
	live := run(t, rec.URL)
	if code := rec.Stop(); code != 0 {
		t.Fatalf("mcpvcr record exited %d:\n%s", code, rec.stderr)
	}
	if len(live) < 7 || slices.ContainsFunc(live, func(s string) bool { return strings.Contains(s, "rror") }) {
		t.Fatalf("the live run went wrong: %q", live)
	}
	cuts := cutPoints(t, db)
	if len(cuts) < 5 {
		t.Fatalf("the recording has %d cut points; want an SSE answer with event ids per call", len(cuts))
	}
	replay := func(t *testing.T, args ...string) (string, int) {
		rep := startServing(t, append([]string{"replay", "1", "--cassette", db, "--listen", "127.0.0.1:0"}, args...)...)
		got := run(t, rep.URL+"/mcp")
		code := rep.Stop()
		if diff := cmp.Diff(live, got); diff != "" {
			t.Errorf("after %v the client's results differ from live (-live +replay):\n%s\nreplay stderr:\n%s", args, diff, rep.stderr)
		}
		return rep.stderr.String(), code
	}
	for _, c := range cuts {
		t.Run("cut"+c, func(t *testing.T) {
			stderr, code := replay(t, "--cut", c)
			if code != 0 || !strings.Contains(stderr, " 0 unmatched, 1 stream cut, 1 resumed") || strings.Contains(stderr, "invented") {
				t.Errorf("replay --cut %s exited %d; want 0, the cut resumed, nothing invented:\n%s", c, code, stderr)
			}
		})
	}
	for _, kind := range []string{"cut-resumable", "retry", "resume-late"} {
		for seed := range 3 {
			t.Run(fmt.Sprintf("chaos/%s/seed%d", kind, seed+1), func(t *testing.T) {
				stderr, code := replay(t, "--chaos", fmt.Sprint(seed+1), "--chaos-faults", kind, "--chaos-rate", "1")
				if code != 0 || !strings.Contains(stderr, "(1 pass, 0 fail, 0 not observed)") || strings.Contains(stderr, "invented") {
					t.Errorf("replay --chaos %d --chaos-faults %s exited %d; want 0 and a pass:\n%s", seed+1, kind, code, stderr)
				}
			})
		}
	}
}

// cutPoints returns, as --cut takes them (STREAM:EVENT), every place
// of session 1 of the cassette at db where an SSE answer with event ids
// can be cut with events still to come.
func cutPoints(t *testing.T, db string) []string {
	t.Helper()
	recs, err := store.LoadFile(context.Background(), db, 1)
	if err != nil || len(recs) != 1 {
		t.Fatalf("load %s: %v (%d sessions)", db, err, len(recs))
	}
	rec := recs[0]
	var cuts []string
	for n, st := range rec.Streams {
		if st.Kind != store.PostStream || !strings.HasPrefix(st.ResponseHeader.Get("Content-Type"), "text/event-stream") {
			continue
		}
		var events []store.Frame
		for _, f := range rec.Frames {
			if f.StreamID == st.ID && f.Direction == store.ServerToClient && !f.Comment {
				events = append(events, f)
			}
		}
		for e := 1; e < len(events); e++ {
			if events[e-1].HasEventID && events[e-1].EventID != "" {
				cuts = append(cuts, fmt.Sprintf("%d:%d", n+1, e))
			}
		}
	}
	return cuts
}
