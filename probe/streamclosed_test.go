package probe

import (
	"net/http"
	"testing"
	"time"

	"github.com/mcpvcr/mcpvcr/clock"
)

// TestStreamClosed: after a call's stream ended before its response, a
// raw client that sends its next request at once passes; one that waits
// for its deadline first (replay's fake clock moved past the Hook's
// Patience) fails. Whether it sends the call again or goes on does not
// matter.
func TestStreamClosed(t *testing.T) {
	recs := recorded(t, modern)
	for _, tc := range []struct {
		name  string
		wait  time.Duration
		retry bool
		want  Verdict
	}{
		{"retry", 0, true, VerdictPass},
		{"goOn", 0, false, VerdictPass},
		{"waited", 2 * DefaultPatience, true, VerdictFail},
	} {
		clk := clock.NewFake(time.Date(2026, 7, 28, 0, 0, 0, 0, time.UTC))
		res, report := replayOn(t, recs, []Kind{StreamClosed}, clk, func(url string) {
			c := newRaw(t, url, recs)
			c.start()
			c.send("tools/list", nil)
			if st, m := c.send("tools/call", nil); st != http.StatusOK || m != nil {
				t.Errorf("%s: the probed call was answered %d %v; want 200 and a stream without its response", tc.name, st, m)
			}
			clk.Advance(tc.wait) // the client's deadline, on replay's clock
			if tc.retry {
				if _, m := c.send("tools/call", nil); m["result"] == nil {
					t.Errorf("%s: the call sent again was answered %v; want the recorded result", tc.name, m)
				}
			}
			c.send("prompts/list", nil)
		})
		if r := one(t, res, report); r.Verdict != tc.want {
			t.Errorf("%s: verdict %s (%s); want %s", tc.name, r.Verdict, r.Did, tc.want)
		}
	}
}
