package probe

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
	"github.com/mcpvcr/mcpvcr/internal/sse"
)

// TestBatch: a raw 2025-03-26 client that answers only the recorded
// server request of the batch fails; one that answers both, one POST
// each or in a batch of its own, passes, and gets the call's result
// either way.
func TestBatch(t *testing.T) {
	recs := recorded(t, mcptest.V20250326)
	for _, tc := range []struct {
		how  string
		want Verdict
	}{
		{"first", VerdictFail},
		{"each", VerdictPass},
		{"batch", VerdictPass},
	} {
		res, report := replay(t, recs, []Kind{Batch}, func(url string) {
			c := newRaw(t, url, recs)
			c.start()
			c.send("tools/list", nil)
			if n, ok := c.callBatched(tc.how); n != 2 || !ok {
				t.Errorf("%s: the batch held %d requests, the call's result: %v; want 2 and the result", tc.how, n, ok)
			}
		})
		if r := one(t, res, report); r.Verdict != tc.want {
			t.Errorf("%s: verdict %s (%s); want %s", tc.how, r.Verdict, r.Did, tc.want)
		}
	}
}

// callBatched calls the recorded roots tool and answers the batch of
// server requests on its stream: the first only ("first"), each in a POST
// of its own ("each"), or both in one batch ("batch"). It returns how many
// requests the batch held and whether the call got its result.
func (c *raw) callBatched(how string) (int, bool) {
	c.t.Helper()
	body := c.body("tools/call", func(p map[string]any) { p["name"] = "roots"; p["arguments"] = map[string]any{} })
	resp := c.post(body)
	defer resp.Body.Close()
	r := sse.NewReader(resp.Body)
	n := 0
	for {
		e, err := r.Next()
		if err != nil || e.Partial {
			return n, false
		}
		var batch []map[string]json.RawMessage
		if json.Unmarshal(e.Data, &batch) != nil {
			var m map[string]json.RawMessage
			if json.Unmarshal(e.Data, &m) == nil && m["result"] != nil {
				return n, true
			}
			continue
		}
		n = len(batch)
		var answers [][]byte
		for _, m := range batch {
			if string(m["method"]) == `"roots/list"` {
				answers = append(answers, c.recordedAnswer(m["id"]))
			} else {
				answers = append(answers, []byte(`{"jsonrpc":"2.0","id":`+string(m["id"])+`,"result":{}}`))
			}
		}
		switch how {
		case "first":
			c.postDone(answers[0])
		case "each":
			for _, a := range answers {
				c.postDone(a)
			}
		case "batch":
			c.postDone(append(append([]byte("["), bytes.Join(answers, []byte(","))...), ']'))
		}
	}
}

// post POSTs body in the session.
func (c *raw) post(body []byte) *http.Response {
	c.t.Helper()
	req, err := http.NewRequestWithContext(c.t.Context(), http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", c.sid)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	return resp
}

// postDone POSTs body and reads its answer to the end.
func (c *raw) postDone(body []byte) {
	c.t.Helper()
	resp := c.post(body)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}
