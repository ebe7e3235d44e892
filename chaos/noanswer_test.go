package chaos

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
)

// TestChaos_NoAnswer: reset_peer and EMPTY_RESPONSE at POST 4 (the echo
// call). A raw client that sends the request again passes; one that waits
// for good (sends nothing more) fails, the recorded client having gone
// on. Then each is drawn alone for the Go SDK client running the chaos
// script; what it does is logged and the verdict is not a fail.
func TestChaos_NoAnswer(t *testing.T) {
	recs := loadCassette(t, "gosdk-http-2025-11-25.jsonl")
	for _, kind := range []FaultKind{FaultResetPeer, FaultEmptyResponse} {
		t.Run(kind.String(), func(t *testing.T) {
			plan := []Fault{{Kind: kind, Request: 4}}
			for _, again := range []bool{true, false} {
				h, logs := rawReplay(t, recs, Config{Seed: 1}, plan, func(url string) {
					c := newRawClient(t, url, recs[0])
					c.upTo(3)
					a := c.post()
					switch {
					case kind == FaultResetPeer && (a.err == nil || a.status != 0):
						t.Errorf("POST 4: %d, %v; want the connection reset", a.status, a.err)
					case kind == FaultEmptyResponse && (a.status != http.StatusOK || len(a.events) != 0 || a.err != nil):
						t.Errorf("POST 4: %d, %d events, %v; want an empty 200", a.status, len(a.events), a.err)
					}
					if again {
						if a := c.again(4, true); a.status != http.StatusOK || len(a.events) == 0 {
							t.Errorf("POST 4 again: %d, %d events, %v", a.status, len(a.events), a.err)
						}
					}
				})
				r := oneResult(t, h, logs)
				want, says := VerdictPass, "sent the request again"
				if !again {
					want, says = VerdictFail, "where the recorded client went on"
				}
				if r.Verdict != want || !strings.Contains(r.Did, says) {
					t.Errorf("again=%t: the client %s: %s; want %s saying %q", again, r.Did, r.Verdict, want, says)
				}
			}
			// The Go SDK client, the fault drawn from the seed.
			srv, h := serve(recs, Config{Seed: 1, Kinds: []FaultKind{kind}, Rate: 1}, nil)
			ts := httptest.NewServer(srv)
			saw := mcptest.ChaosRun(t.Context(), &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp", MaxRetries: 2}, &mcp.Implementation{Name: mcptest.ClientName, Version: mcptest.ClientVersion}, "script")
			ts.Close()
			srv.Close()
			res := h.Results()
			t.Logf("Go SDK client saw %q; results %v", saw, res)
			if len(res) != 1 || res[0].Kind != kind {
				t.Fatalf("Go SDK: results %v (not reached: %v); want one %s", res, h.NotReached(), kind)
			}
			t.Logf("Go SDK: %s: the client %s: %s", res[0].Fault, res[0].Did, res[0].Verdict)
			if res[0].Verdict == VerdictFail || !slices.Contains(saw, "close: ok") {
				t.Errorf("Go SDK: %s, the client saw %q; want no fail, and the client to end its script", res[0].Verdict, saw)
			}
		})
	}
}
