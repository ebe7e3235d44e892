package chaos

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestChaos_SameSeedSameFaults: a cassette of eight sessions that share
// their opening (initialize, tools/list) and part at the echo call's
// text; a raw client replays the third one (echo "run 2"), so replay
// follows every candidate until then. Each seed is run twice, then once
// with every CPU kept busy: the same faults are drawn (injected or not
// reached), all from one recorded session's plan, with the same verdicts,
// and none the client went through is reported not reached (the client
// reads every stream to its end, and delays are drawn only on them).
func TestChaos_SameSeedSameFaults(t *testing.T) {
	recs := loadCassette(t, "multi-gosdk-http-sse.jsonl")
	follow := recs[2]
	for seed := uint64(1); seed <= 6; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			var first []Result
			for run, load := range []bool{false, false, true} {
				if load {
					stop := busy(t)
					defer stop()
				}
				h, logs := rawReplay(t, recs, Config{Seed: seed, Kinds: []FaultKind{FaultDelay}}, nil, func(url string) {
					c := newRawClient(t, url, follow)
					c.upTo(len(c.posts))
					if a := c.do(t.Context(), http.MethodDelete, nil, true); a.status/100 != 2 {
						t.Errorf("DELETE: %d, %v", a.status, a.err)
					}
				})
				res := h.Results()
				if nr := h.NotReached(); len(nr) > 0 {
					t.Errorf("run %d: faults not reached in a session the client went through to its end: %v\n%s", run+1, nr, logs)
				}
				for _, r := range res {
					if r.Session != res[0].Session {
						t.Errorf("run %d: faults from sessions %d and %d: %v", run+1, res[0].Session, r.Session, res)
						break
					}
				}
				if run == 0 {
					first = res
					t.Logf("%d faults: %v", len(res), res)
				} else if diff := cmp.Diff(first, res); diff != "" {
					t.Errorf("run %d (under load: %t) drew or judged other faults (-first +this):\n%s", run+1, load, diff)
				}
			}
		})
	}
}

// busy keeps every CPU busy until the function it returns is called.
func busy(t *testing.T) (stop func()) {
	ctx, cancel := context.WithCancel(t.Context())
	for range runtime.NumCPU() {
		go func() {
			n := 0
			for ctx.Err() == nil {
				n++
			}
			_ = n
		}()
	}
	return cancel
}
