package chaos

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpvcr/mcpvcr/store"
)

func loadCassette(tb testing.TB, name string) []*store.Recording {
	tb.Helper()
	recs, err := store.LoadFile(context.Background(), filepath.Join("..", "cassettes", name))
	if err != nil {
		tb.Fatal(err)
	}
	return recs
}

// TestChaos_PlanSameSeed: a plan depends on the seed and the recording
// alone; another seed gives another plan somewhere in 1–50.
func TestChaos_PlanSameSeed(t *testing.T) {
	for _, name := range []string{"gosdk-http-2025-11-25.jsonl", "multi-gosdk-http-sse.jsonl", "gosdk-http-2025-03-26.jsonl"} {
		t.Run(name, func(t *testing.T) {
			recs := loadCassette(t, name)
			differs := false
			again := loadCassette(t, name)
			for seed := uint64(1); seed <= 50; seed++ {
				for i, rec := range recs {
					a := Config{Seed: seed}.Plan(rec)
					b := Config{Seed: seed}.Plan(again[i])
					if diff := cmp.Diff(a, b); diff != "" {
						t.Fatalf("seed %d session %d: two plans differ (-first +second):\n%s", seed, rec.Session.ID, diff)
					}
					if len(a) == 0 || len(a) > DefaultRate {
						t.Errorf("seed %d session %d: %d faults; want 1 to %d", seed, rec.Session.ID, len(a), DefaultRate)
					}
					if seed > 1 && cmp.Diff(a, Config{Seed: 1}.Plan(rec)) != "" {
						differs = true
					}
				}
			}
			if !differs {
				t.Error("seeds 1–50 all draw the same plan")
			}
		})
	}
}

// TestChaos_EveryKindDrawn: per transport, over seeds 1–50, every kind
// injected there (reorder aside: see inside) is drawn in some seed, each at a place that exists in
// the recording; a kind with no place in a session (a late result where
// no request was cancelled) is left out of its plan, never failed.
func TestChaos_EveryKindDrawn(t *testing.T) {
	for _, tt := range []struct {
		name      string
		cassettes []string
		transport store.Transport
		rev       string
	}{
		{"streamable-http", []string{"gosdk-http-2025-11-25.jsonl", "multi-gosdk-http-sse.jsonl"}, store.StreamableHTTP, "2025-11-25"},
		{"2026-07-28", []string{"multi-gosdk-http-2026-07-28.jsonl"}, store.StreamableHTTP, "2026-07-28"},
		{"stdio", []string{"gosdk-stdio-2025-11-25.jsonl"}, store.Stdio, "2025-11-25"},
		{"http+sse", []string{"multi-gosdk-sse.jsonl"}, store.LegacySSE, "2024-11-05"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var recs []*store.Recording
			for _, c := range tt.cassettes {
				recs = append(recs, loadCassette(t, c)...)
			}
			seen := map[FaultKind]int{}
			for seed := uint64(1); seed <= 50; seed++ {
				for _, rec := range recs {
					for _, f := range (Config{Seed: seed}).Plan(rec) {
						seen[f.Kind]++
						if f.Stream > len(rec.Streams) {
							t.Errorf("seed %d: %s names stream %d of %d", seed, f, f.Stream, len(rec.Streams))
						}
						if f.Seq != 0 && frameBySeq(rec, f.Seq) == nil {
							t.Errorf("seed %d: %s names seq %d, which the recording lacks", seed, f, f.Seq)
						}
					}
				}
			}
			n := 0
			for _, k := range FaultKinds() {
				// Reorder needs two notifications, or the responses to two
				// concurrent requests, recorded side by side, which these
				// cassettes lack: TestChaos_ReorderPlan, the confusion
				// matrix and TestChaos_ReorderStdio draw it on recordings
				// that have them.
				if Injected(k, tt.transport, tt.rev) && k != FaultReorder && !OptIn(k) {
					n++
					if seen[k] == 0 {
						t.Errorf("kind %s never drawn in seeds 1–50 (drawn: %v)", k, seen)
					}
				}
			}
			if n == 0 {
				t.Errorf("no kind injected over %s", tt.name)
			}
		})
	}
	// The kinds drawn only when named: never by default, and where named
	// at a POST of a request (from POST 3), or an event of a POST's
	// stream (from POST 3, but early-ping: initialize's), over Streamable
	// HTTP of the initialize era only; exit over stdio only.
	http := loadCassette(t, "gosdk-http-2025-11-25.jsonl")[0]
	for _, k := range FaultKinds() {
		if !OptIn(k) {
			continue
		}
		rec, others := http, []string{"gosdk-stdio-2025-11-25.jsonl", "multi-gosdk-sse.jsonl", "multi-gosdk-http-2026-07-28.jsonl"}
		if k == FaultExit || k == FaultLateRequest { // stdio only
			rec, others = loadCassette(t, "gosdk-stdio-2025-11-25.jsonl")[0], []string{"gosdk-http-2025-11-25.jsonl", "multi-gosdk-sse.jsonl", "multi-gosdk-http-2026-07-28.jsonl"}
		}
		for seed := uint64(1); seed <= 50; seed++ {
			if slices.ContainsFunc(Config{Seed: seed}.Plan(rec), func(f Fault) bool { return f.Kind == k }) {
				t.Errorf("seed %d: %s drawn without being named", seed, k)
			}
		}
		plan := Config{Seed: 1, Kinds: []FaultKind{k}}.Plan(rec)
		switch {
		case len(plan) == 0:
			t.Errorf("%s named: no fault drawn", k)
		case (k == FaultExit || k == FaultLateRequest) && (plan[0].Seq == 0 || plan[0].Stream != 0):
			t.Errorf("%s named: plan %v; want frames of the stdio session", k, plan)
		case k == FaultExit || k == FaultLateRequest:
		case plan[0].Request == 0 && (plan[0].StreamKind != store.PostStream || plan[0].Seq == 0):
			t.Errorf("%s named: plan %v; want events of POST streams", k, plan)
		case k == FaultEarlyPing && faultPost(rec, plan[0]) != 1:
			t.Errorf("%s named: plan %v; want initialize's stream", k, plan)
		case k == FaultEarlyPing:
		case plan[0].Request == 0 && faultPost(rec, plan[0]) < 3:
			t.Errorf("%s named: plan %v; want events of POSTs from 3", k, plan)
		case plan[0].Request != 0 && plan[0].Request < 3:
			t.Errorf("%s named: plan %v; want faults at POSTs from 3", k, plan)
		}
		for _, other := range others {
			for _, r := range loadCassette(t, other) {
				if p := (Config{Seed: 1, Kinds: []FaultKind{k}}).Plan(r); len(p) != 0 {
					t.Errorf("%s: %s drawn over %s: %v", other, k, r.Session.Transport, p)
				}
			}
		}
	}
	// No request of run 0 over stdio is cancelled: no late result there.
	for _, rec := range loadCassette(t, "multi-gosdk-stdio.jsonl") {
		if p := (Config{Seed: 1, Kinds: []FaultKind{FaultLateResult}}).Plan(rec); len(p) != 0 {
			t.Errorf("session %d: late-result planned with no cancelled request: %v", rec.Session.ID, p)
		}
	}
}

// TestChaos_ForbiddenNeverDrawn: a plan holds only kinds the session's
// transport and revision allow: no priming to drop before 2025-11-25, no
// session to expire or GET stream to refuse in 2026-07-28, no stream to
// cut over stdio; and only the kinds asked for.
func TestChaos_ForbiddenNeverDrawn(t *testing.T) {
	for _, tt := range []struct {
		cassette string
		kinds    []FaultKind
		never    []FaultKind
	}{
		{"gosdk-http-2025-06-18.jsonl", nil, []FaultKind{FaultDropPriming, FaultCloseEarly}},
		{"gosdk-http-2025-03-26.jsonl", nil, []FaultKind{FaultDropPriming, FaultCloseEarly}},
		{"multi-gosdk-http-2026-07-28.jsonl", nil, []FaultKind{FaultExpire, FaultRefuseGet, FaultDropPriming, FaultCutResumable, FaultResume404, FaultResumeLate, FaultRetry}},
		{"multi-gosdk-stdio.jsonl", nil, []FaultKind{FaultCut, FaultCutResumable, FaultResume404, FaultExpire, FaultRefuseGet, Fault503, FaultRetry, FaultCloseEarly}},
		{"gosdk-stdio-2025-11-25.jsonl", nil, []FaultKind{FaultCut, FaultCutResumable, FaultResume404, FaultExpire, FaultRefuseGet, Fault503, FaultRetry, FaultCloseEarly}},
		{"multi-gosdk-sse.jsonl", nil, []FaultKind{FaultCutResumable, FaultExpire, FaultRefuseGet, FaultDropPriming, FaultRetry, FaultCloseEarly}},
		{"gosdk-http-2025-11-25.jsonl", []FaultKind{FaultDelay, FaultExpire}, []FaultKind{FaultCut, FaultCutResumable, FaultResume404, FaultResumeLate, FaultRefuseGet, FaultDropPriming, Fault503}},
	} {
		t.Run(tt.cassette, func(t *testing.T) {
			for _, rec := range loadCassette(t, tt.cassette) {
				for seed := uint64(1); seed <= 50; seed++ {
					for _, f := range (Config{Seed: seed, Kinds: tt.kinds}).Plan(rec) {
						s := rec.Session
						if !Allowed(f.Kind, s.Transport, s.Revision) {
							t.Errorf("seed %d: %s drawn in a %s session of %s, which does not allow it", seed, f, s.Transport, s.Revision)
						}
						for _, k := range tt.never {
							if f.Kind == k {
								t.Errorf("seed %d: %s drawn in a %s session of %s", seed, f, s.Transport, s.Revision)
							}
						}
					}
				}
			}
		})
	}
}
