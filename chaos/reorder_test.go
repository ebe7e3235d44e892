package chaos

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
	"github.com/mcpvcr/mcpvcr/recorder"
	"github.com/mcpvcr/mcpvcr/replayer"
	"github.com/mcpvcr/mcpvcr/store"
)

// recordReorder records the Go SDK client running chaos script
// "reorder" against the Go SDK test server with tool notify (mcptest.ReorderHandler), through
// recorder.HTTP: a log message on the standalone GET stream recorded
// right beside a progress notification on the call's POST stream.
func recordReorder(t *testing.T) []*store.Recording {
	t.Helper()
	ctx := t.Context()
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcptest.ReorderHandler(t))
	upstream := httptest.NewServer(mux)
	t.Cleanup(upstream.Close)
	up, err := url.Parse(upstream.URL)
	if err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "reorder.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	rec := &recorder.HTTP{Upstream: up, Sink: db}
	ts := httptest.NewServer(rec)
	// Two sessions of the same script: they share their opening frames,
	// as a cassette users replay does.
	for range 2 {
		saw := mcptest.ChaosRun(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp"}, &mcp.Implementation{Name: mcptest.ClientName, Version: mcptest.ClientVersion}, "reorder")
		if !slices.Equal(saw, []string{"connected", "tools/list: ok", "logging/setLevel: ok", "notify: ok", "echo: ok", "close: ok"}) {
			t.Fatalf("recording: the client saw %q", saw)
		}
	}
	ts.Close()
	if err := rec.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := db.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	recs, err := db.Recordings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// recordPair records, fresh, the Go SDK client running chaos script
// "pair" against the Go SDK test server with tool pair, over Streamable
// HTTP with event ids: two calls at once, whose responses the server
// sends side by side on their two POST streams.
func recordPair(t testing.TB) *store.Recording {
	t.Helper()
	rec := recordScriptOn(t, mcptest.ServerConfig{Paired: true}.NewServer(), true, "pair",
		[]string{"connected", "tools/list: ok", "pair: ok", "echo: ok", "close: ok"})
	if !slices.ContainsFunc(reorderSites(rec), func(f Fault) bool { return f.Responses }) {
		t.Fatalf("the recording of script pair has no two responses side by side to reorder:\n%s", layout(rec))
	}
	return rec
}

// TestChaos_ReorderPlan: over seeds 1–50, reorder is drawn on a
// recording that has a pair to reorder (a log message on the GET stream
// beside a progress notification on a POST stream), always at that
// pair; and never on the pairs that may not be reordered, built by hand.
func TestChaos_ReorderPlan(t *testing.T) {
	recs := recordReorder(t)
	drawn := 0
	for _, rec := range recs {
		sites := reorderSites(rec)
		for _, s := range sites {
			a, b := frameBySeq(rec, s.Seq), frameBySeq(rec, s.OtherSeq)
			if a == nil || b == nil || a.Kind != store.KindNotification || b.Kind != store.KindNotification || a.StreamID == b.StreamID {
				t.Errorf("site %s: not two notifications on two streams: %+v, %+v", s, a, b)
			}
		}
		for seed := uint64(1); seed <= 50; seed++ {
			for _, f := range (Config{Seed: seed}).Plan(rec) {
				if f.Kind != FaultReorder {
					continue
				}
				drawn++
				if !slices.ContainsFunc(sites, func(s Fault) bool { return s.Seq == f.Seq && s.OtherSeq == f.OtherSeq }) {
					t.Errorf("seed %d: %s is no site of the recording", seed, f)
				}
			}
		}
	}
	if drawn == 0 {
		t.Fatalf("reorder never drawn in seeds 1–50 on the recording (sites: %v)", func() (s [][]Fault) {
			for _, rec := range recs {
				s = append(s, reorderSites(rec))
			}
			return s
		}())
	}

	// Hand-built pairs: stream 1 a POST, 2 the GET stream, 3 another POST.
	sse := http.Header{"Content-Type": {"text/event-stream"}}
	streams := []store.Stream{
		{ID: 1, Kind: store.PostStream, Status: 200, ResponseHeader: sse},
		{ID: 2, Kind: store.GetStream, Status: 200, ResponseHeader: sse},
		{ID: 3, Kind: store.PostStream, Status: 200, ResponseHeader: sse},
	}
	note := func(stream int64, method string) store.Frame {
		return store.Frame{StreamID: stream, Direction: store.ServerToClient, SSE: true, Kind: store.KindNotification, Method: method}
	}
	log, progress := "notifications/message", "notifications/progress"
	response := store.Frame{StreamID: 1, Direction: store.ServerToClient, SSE: true, Kind: store.KindResult, ID: "1"}
	request := store.Frame{StreamID: 3, Direction: store.ClientToServer, Kind: store.KindRequest, ID: "2", Method: "tools/call"}
	for _, tt := range []struct {
		name   string
		frames []store.Frame
		want   [][2]int64 // seq pairs
	}{
		{"log on GET, progress on POST", []store.Frame{note(2, log), note(1, progress)}, [][2]int64{{1, 2}}},
		{"progress on POST, log on GET", []store.Frame{note(1, progress), note(2, log)}, [][2]int64{{1, 2}}},
		{"two POST streams", []store.Frame{note(1, log), note(3, log)}, [][2]int64{{1, 2}}},
		{"one stream", []store.Frame{note(1, log), note(1, progress)}, nil},
		{"a response after", []store.Frame{note(2, log), response}, nil},
		{"a response before", []store.Frame{response, note(2, log)}, nil},
		{"the request that causes the later one between", []store.Frame{note(2, log), request, note(3, progress)}, nil},
		{"progress on the GET stream", []store.Frame{note(2, progress), note(1, log)}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := &store.Recording{Session: store.Session{ID: 1, Transport: store.StreamableHTTP, Revision: "2025-11-25"}, Streams: streams}
			for i, f := range tt.frames {
				f.Seq = int64(i + 1)
				rec.Frames = append(rec.Frames, f)
			}
			var got [][2]int64
			for _, s := range reorderSites(rec) {
				got = append(got, [2]int64{s.Seq, s.OtherSeq})
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("sites (-want +got):\n%s", diff)
			}
			for seed := uint64(1); seed <= 50; seed++ {
				for _, f := range (Config{Seed: seed}).Plan(rec) {
					if f.Kind == FaultReorder && tt.want == nil {
						t.Errorf("seed %d: reorder drawn on a pair that may not be reordered: %s", seed, f)
					}
				}
			}
		})
	}
}

// syncWriter is a bytes.Buffer safe for the server's goroutines.
type syncWriter struct {
	mu sync.Mutex // guards b
	b  bytes.Buffer
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// TestChaos_ReorderGoSDK: chaos replay with reorder alone, to the Go SDK
// client in process running the recorded script: the held log message
// goes out after the progress notification recorded after it (or the
// other way round), stderr announces it, the same seed draws the same
// pair twice, and the client carries on to its echo: pass.
func TestChaos_ReorderGoSDK(t *testing.T) {
	// The Go SDK opens its GET stream on its own time: under -race on a
	// loaded machine that once took longer than the 1 s bound, and the
	// held notification went out in recorded order (a pass, but not the
	// reorder this test is about).
	bound := reorderBound
	reorderBound = 30 * time.Second
	t.Cleanup(func() { reorderBound = bound })
	recs := recordReorder(t)
	const seed = 1
	var first []Result
	for run := range 2 {
		var logs syncWriter
		srv, h := serve(recs, Config{Seed: seed, Kinds: []FaultKind{FaultReorder}}, slog.New(slog.NewTextHandler(&logs, nil)))
		replayReorder(t.Context(), t, srv, fmt.Sprintf("run %d: ", run+1))
		res := h.Results()
		if len(res) != 1 || res[0].Kind != FaultReorder || res[0].Verdict != VerdictPass ||
			!strings.Contains(res[0].Did, "in the other order and carried on in the same session") || !strings.Contains(res[0].Did, "not visible on the wire") {
			var did []string
			for _, r := range res {
				did = append(did, r.Did+": "+r.Verdict.String())
			}
			t.Fatalf("run %d: results %v, the client %q (not reached: %v); want one reorder, passed\n%s", run+1, res, did, h.NotReached(), logs.String())
		}
		if !strings.Contains(logs.String(), "chaos: injected reorder") {
			t.Errorf("run %d: the reorder is not announced:\n%s", run+1, logs.String())
		}
		if run == 0 {
			first = res
		} else if diff := cmp.Diff(first[0].Fault, res[0].Fault); diff != "" {
			t.Errorf("the same seed drew another pair (-first +second):\n%s", diff)
		}
		t.Logf("run %d: %s: %s", run+1, res[0].Fault, res[0].Did)
	}
}

// TestChaos_ReorderCandidatesDisagree: the session the pair is drawn from
// has the call's progress and then the log message on the GET stream;
// the other session of the cassette, the same script, had its server send
// the log message only after the client's next call. While both are in
// play the GET stream cannot send the log message (they disagree on it
// until the client's next call, which waits for the held progress's
// call). After the settle time the hold keeps its own session alone, so
// the log message goes out, the progress after it, and the client carries
// on, in far less than the bound, here longer than the client waits.
func TestChaos_ReorderCandidatesDisagree(t *testing.T) {
	bound := reorderBound
	reorderBound = 30 * time.Second
	t.Cleanup(func() { reorderBound = bound })
	recs := recordReorder(t)
	isLog := func(f *store.Frame) bool { return f.Method == "notifications/message" }
	moveAfter(t, recs[0], isLog, func(f *store.Frame) bool { return f.Method == "notifications/progress" })
	moveAfter(t, recs[1], isLog, func(f *store.Frame) bool {
		return f.Kind == store.KindRequest && f.Method == "tools/call" && f.ID == "5"
	})
	plan := (Config{Seed: 1, Kinds: []FaultKind{FaultReorder}}).Plan(recs[0])
	if len(plan) != 1 || plan[0].StreamKind != store.PostStream || plan[0].OtherKind != store.GetStream {
		t.Fatalf("plan %v; want the call's progress held for the log message", plan)
	}
	var logs syncWriter
	srv, h := serve(recs, Config{Seed: 1, Kinds: []FaultKind{FaultReorder}}, slog.New(slog.NewTextHandler(&logs, nil)))
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	replayReorder(ctx, t, srv, "")
	res := h.Results()
	if len(res) != 1 || res[0].Verdict != VerdictPass || !strings.Contains(res[0].Did, "in the other order") {
		t.Fatalf("results %v; want one reorder, made and passed\n%s", res, logs.String())
	}
	if !strings.Contains(logs.String(), "replaying only the session the pair was drawn from") {
		t.Errorf("stderr does not say the replay kept one session:\n%s", logs.String())
	}
}

// moveAfter moves the one frame of rec that which accepts to right after
// the one that after accepts, as if the server had sent it then: the seqs
// keep their order, and the frame takes the offset of the one before it.
func moveAfter(t *testing.T, rec *store.Recording, which, after func(*store.Frame) bool) {
	t.Helper()
	i := slices.IndexFunc(rec.Frames, func(f store.Frame) bool { return which(&f) })
	j := slices.IndexFunc(rec.Frames, func(f store.Frame) bool { return after(&f) })
	if i < 0 || j < 0 {
		t.Fatalf("session %d: no frame to move (%d) or none to move it after (%d)", rec.Session.ID, i, j)
	}
	seqs := make([]int64, len(rec.Frames))
	for k := range rec.Frames {
		seqs[k] = rec.Frames[k].Seq
	}
	f := rec.Frames[i]
	frames := slices.Delete(slices.Clone(rec.Frames), i, i+1)
	if j > i {
		j--
	}
	frames = slices.Insert(frames, j+1, f)
	frames[j+1].Offset = frames[j].Offset
	for k := range frames {
		frames[k].Seq = seqs[k]
	}
	rec.Frames = frames
}

// TestChaos_ReorderBounded: a reorder whose other notification never
// comes (a plan naming a seq no stream sends) holds its notification (the
// call's progress, on its POST stream)
// only for the fault's Delay, then sends it, says so on stderr, and
// judges the client by what it did next: it got everything and carried
// on.
func TestChaos_ReorderBounded(t *testing.T) {
	recs := recordReorder(t)
	var logs syncWriter
	srv, h := serve(recs, Config{Seed: 1, Kinds: []FaultKind{FaultReorder}}, slog.New(slog.NewTextHandler(&logs, nil)))
	cs := h.state()
	planned := 0
	for _, rec := range recs {
		p := (Config{Seed: 1, Kinds: []FaultKind{FaultReorder}}).Plan(rec)
		if len(p) == 0 {
			continue // the seed draws no reorder for this session
		}
		if len(p) != 1 {
			t.Fatalf("session %d: plan %v; want one reorder", rec.Session.ID, p)
		}
		planned++
		f := p[0]
		if f.StreamKind != store.PostStream {
			// Hold the call's progress: the client waits on that stream,
			// so it cannot end before the bound does.
			f.Stream, f.StreamKind, f.Seq = f.Other, f.OtherKind, f.OtherSeq
			f.Event = slices.IndexFunc(sseEvents(rec, rec.Streams[f.Stream-1].ID), func(e *store.Frame) bool { return e.Seq == f.Seq })
		}
		f.Other, f.OtherSeq, f.Delay = 0, 1<<40, 20*time.Millisecond // never sent
		cs.plans[rec.Session.ID] = []Fault{f}
	}
	if planned == 0 {
		t.Fatal("seed 1 draws a reorder in no session")
	}
	replayReorder(t.Context(), t, srv, "")
	res := h.Results()
	if len(res) != 1 || res[0].Verdict != VerdictPass || !strings.Contains(res[0].Did, "never came within 20ms") {
		t.Fatalf("results %v; want one reorder, the other never came, passed\n%s", res, logs.String())
	}
	if !strings.Contains(logs.String(), "sent the held seq") {
		t.Errorf("stderr does not say the held notification went anyway:\n%s", logs.String())
	}
	t.Logf("%s: %s", res[0].Fault, res[0].Did)
}

// serve returns a replay of recs with the chaos Hook of c, logging to
// logger.
func serve(recs []*store.Recording, c Config, logger *slog.Logger) (*replayer.Server, *Hook) {
	h := New(c, logger)
	return &replayer.Server{Recordings: recs, Hook: h, Logger: logger}, h
}

// replayReorder serves srv to the Go SDK client running chaos script
// "reorder", closes srv, and checks that the client did every step.
func replayReorder(ctx context.Context, t *testing.T, srv *replayer.Server, prefix string) {
	t.Helper()
	ts := httptest.NewServer(srv)
	saw := mcptest.ChaosRun(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp"}, &mcp.Implementation{Name: "reorder-replay-client", Version: "9.9"}, "reorder")
	ts.Close()
	srv.Close()
	if !slices.Equal(saw, []string{"connected", "tools/list: ok", "logging/setLevel: ok", "notify: ok", "echo: ok", "close: ok"}) {
		t.Errorf("%sthe client saw %q", prefix, saw)
	}
}
