package probe

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/mcpvcr/mcpvcr/internal/sse"
)

// TestListenEnded: after the server ended its listen stream, a raw
// client that opens it again passes; one that goes on without it fails
// (a warning).
func TestListenEnded(t *testing.T) {
	recs := listening(t)
	for _, keep := range []bool{false, true} {
		res, report := replay(t, recs, []Kind{ListenEnded}, func(url string) {
			c := newRaw(t, url, recs)
			c.start()
			if _, m := c.send("subscriptions/listen", nil); m["result"] == nil {
				t.Errorf("the probed listen ended with %v; want its final result", m)
			}
			if keep {
				if first := c.first("subscriptions/listen"); !bytes.Contains(first, []byte("notifications/subscriptions/acknowledged")) {
					t.Errorf("the listen opened again began with %s; want the recorded acknowledgement", first)
				}
			}
			c.send("tools/list", nil)
			c.send("tools/call", nil)
		})
		r := one(t, res, report)
		if want := map[bool]Verdict{false: VerdictFail, true: VerdictPass}[keep]; r.Verdict != want || r.Level != Warning {
			t.Errorf("keep=%v: verdict %s (%s), level %s; want %s, warning", keep, r.Verdict, r.Did, r.Level, want)
		}
	}
}

// first POSTs the recorded client's method and returns the data of the
// first event of its stream, then closes the stream (a listen stream
// stays open).
func (c *raw) first(method string) []byte {
	c.t.Helper()
	req, err := http.NewRequestWithContext(c.t.Context(), http.MethodPost, c.url, bytes.NewReader(c.body(method, nil)))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", c.version)
	req.Header.Set("Mcp-Method", method)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	r := sse.NewReader(resp.Body)
	for {
		e, err := r.Next()
		if err != nil || e.Partial {
			return nil
		}
		if json.Valid(e.Data) {
			return e.Data
		}
	}
}
