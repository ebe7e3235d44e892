package replayer_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/internal/mcptest"
	"github.com/mcpvcr/mcpvcr/replayer"
	"github.com/mcpvcr/mcpvcr/store"
)

// The tests of a recorded SSE stream's faults and resumption
// (httpstream.go: the cut; http.go and httpfollow.go: the GET with
// Last-Event-ID that resumes it), over the committed cassettes of the Go
// SDK test server.

// goldenScript reads mcptest's golden transcript of a revision: what the
// Go SDK test server answers the script, live.
func goldenScript(t *testing.T, version string) mcptest.Transcript {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "internal", "mcptest", "testdata", "script", version+".golden"))
	if err != nil {
		t.Fatal(err)
	}
	var tr mcptest.Transcript
	if err := json.Unmarshal(b, &tr); err != nil {
		t.Fatal(err)
	}
	return tr
}

// asGolden decodes a transcript the way a golden file is decoded.
func asGolden(t *testing.T, tr mcptest.Transcript) mcptest.Transcript {
	t.Helper()
	b, err := json.Marshal(tr)
	if err != nil {
		t.Fatal(err)
	}
	var out mcptest.Transcript
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// recordedCall returns session 1 of cassettes/NAME.jsonl and the number
// of the POST stream (as mcpvcr show prints it, from 1) that carried
// tools/call of tool.
func recordedCall(t *testing.T, name, tool string) (*store.Recording, int) {
	t.Helper()
	recs, err := store.LoadFile(context.Background(), filepath.Join("..", "cassettes", name+".jsonl"), 1)
	if err != nil {
		t.Fatal(err)
	}
	rec := recs[0]
	for _, f := range rec.Frames {
		var p struct {
			Name string `json:"name"`
		}
		if f.Method == "tools/call" && json.Unmarshal(jsonrpc.Parse(f.Data).Params, &p) == nil && p.Name == tool {
			for i, st := range rec.Streams {
				if st.ID == f.StreamID {
					return rec, i + 1
				}
			}
		}
	}
	t.Fatalf("no tools/call %s in %s", tool, name)
	return nil, 0
}

// total adds up the reports of a replay.
func total(srv *replayer.Server) (r replayer.Report) {
	for _, rep := range srv.Reports() {
		r.Received += rep.Received
		r.Matched += rep.Matched
		r.Cut += rep.Cut
		r.Resumed += rep.Resumed
		r.Mismatches = append(r.Mismatches, rep.Mismatches...)
	}
	return r
}

// TestHTTP_ResumeAfterCut (httpstream.go cuts, http.go resumes):
// Faults.CutAfter drops the SSE answer of tool progress after a few
// events, as a network failure would; the Go SDK client resumes with
// Last-Event-ID and must see every notification and the result exactly
// once: its transcript equals the live server's, and the summary counts
// the cut and both resumes. The second resume of the run is tool
// reconnect's, which the recording holds. (cmd/mcpvcr's
// TestReplay_ResumeAfterCut runs one of these cases through the binary,
// with --cut.)
func TestHTTP_ResumeAfterCut(t *testing.T) {
	for _, tt := range []struct {
		version string
		cut     int // events before the cut: 2025-11-25 primes its streams
	}{
		{mcptest.V20250618, 1},
		{mcptest.V20250618, 2},
		{mcptest.V20251125, 2},
		{mcptest.V20251125, 3},
	} {
		t.Run(fmt.Sprintf("%s/after%d", tt.version, tt.cut), func(t *testing.T) {
			t.Parallel() // a server of its own; the client's reconnection waits
			name := "gosdk-http-" + tt.version
			_, n := recordedCall(t, name, "progress")
			srv, url := serveCassette(t, name, "/mcp", func(s *replayer.Server) { s.Faults.CutAfter = map[int]int{n: tt.cut} })
			got := asGolden(t, mcptest.Run(testContext(t), t, &mcp.StreamableClientTransport{Endpoint: url}, tt.version))
			if diff := cmp.Diff(goldenScript(t, tt.version), got); diff != "" {
				t.Errorf("after a cut and a resume (-live +replay):\n%s", diff)
			}
			rep := total(srv)
			if len(rep.Mismatches) != 0 || rep.Cut != 1 || rep.Resumed != 2 {
				t.Errorf("replay: %d unmatched, %d cut, %d resumed; want 0, 1 and 2: %v", len(rep.Mismatches), rep.Cut, rep.Resumed, rep.Mismatches)
			}
			var sum strings.Builder
			if !srv.WriteSummary(&sum) || !strings.Contains(sum.String(), " 0 unmatched") || !strings.Contains(sum.String(), "1 stream cut, 2 resumed") {
				t.Errorf("WriteSummary = %q; want ok, 0 unmatched, 1 stream cut, 2 resumed", sum.String())
			}
		})
	}
}

// rawClient speaks Streamable HTTP by hand, to see the wire: the events
// of a stream and how it ended.
type rawClient struct {
	t   *testing.T
	ctx context.Context
	url string
	sid string
}

// event is one SSE event as read off the wire.
type event struct{ id, data string }

// do sends a request with body (none if empty) and header and returns
// the answer's status, its events (or JSON body as one event's data) and
// the error that ended its body, if any.
func (c *rawClient) do(method, body string, header map[string]string) (int, []event, error) {
	c.t.Helper()
	req, _ := http.NewRequestWithContext(c.ctx, method, c.url, strings.NewReader(body))
	req.Header.Set("Accept", "application/json, text/event-stream")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.sid != "" {
		req.Header.Set("Mcp-Session-Id", c.sid)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
	defer resp.Body.Close()
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
		c.sid = sid
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, err := io.ReadAll(resp.Body)
		if len(b) == 0 {
			return resp.StatusCode, nil, err
		}
		return resp.StatusCode, []event{{data: string(b)}}, err
	}
	var evs []event
	var ev event
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if ev != (event{}) {
				evs = append(evs, ev)
			}
			ev = event{}
		case strings.HasPrefix(line, "id:"):
			ev.id = strings.TrimSpace(strings.TrimPrefix(line, "id:"))
		case strings.HasPrefix(line, "data:"):
			ev.data += strings.TrimSpace(strings.TrimPrefix(line, "data:"))
		}
	}
	return resp.StatusCode, evs, sc.Err()
}

// TestHTTP_CutThenLastEventID (httpstream.go, http.go), on the wire: the
// recorded client frames of gosdk-http-2025-11-25 up to tools/call
// progress, POSTed by hand. With the call's stream cut after its priming
// event and the first progress notification, the answer breaks off
// there (no clean end of the body); a GET with the Last-Event-ID of the
// last event read gets the rest of the stream: progress 2 and 3 and the
// result, each once. A Last-Event-ID no recorded event has is refused.
func TestHTTP_CutThenLastEventID(t *testing.T) {
	rec, n := recordedCall(t, "gosdk-http-"+mcptest.V20251125, "progress")
	srv, url := serveCassette(t, "gosdk-http-"+mcptest.V20251125, "/mcp", func(s *replayer.Server) { s.Faults.CutAfter = map[int]int{n: 2} })
	c := &rawClient{t: t, ctx: testContext(t), url: url}
	header := map[string]string{}
	var evs []event
	var err error
	for _, f := range rec.Frames {
		if f.Direction != store.ClientToServer {
			continue
		}
		code, got, e := c.do(http.MethodPost, string(f.Data), header)
		if code >= 300 {
			t.Fatalf("POST %s = %d %v", f.Method, code, got)
		}
		header["Mcp-Protocol-Version"] = mcptest.V20251125
		if f.Method == "tools/call" && strings.Contains(string(f.Data), `"progress"`) {
			evs, err = got, e
			break
		}
	}
	if err == nil || errors.Is(err, io.EOF) {
		t.Errorf("the cut stream ended with %v; want the connection dropped mid-body", err)
	}
	if len(evs) != 2 || !strings.Contains(evs[1].data, `"progress":1`) || evs[1].id == "" {
		t.Fatalf("before the cut: %+v; want the priming event and progress 1, with an id", evs)
	}
	code, rest, err := c.do(http.MethodGet, "", map[string]string{"Last-Event-ID": evs[1].id, "Mcp-Protocol-Version": mcptest.V20251125})
	if code != http.StatusOK || err != nil {
		t.Fatalf("GET Last-Event-ID %s = %d, %v", evs[1].id, code, err)
	}
	var datas []string
	for _, ev := range rest {
		datas = append(datas, ev.data)
	}
	if len(datas) != 3 || !strings.Contains(datas[0], `"progress":2`) || !strings.Contains(datas[1], `"progress":3`) || !strings.Contains(datas[2], `"result"`) {
		t.Errorf("the resumed stream: %q; want progress 2, progress 3 and the result", datas)
	}
	code, got, _ := c.do(http.MethodGet, "", map[string]string{"Last-Event-ID": "never-sent", "Mcp-Protocol-Version": mcptest.V20251125})
	if code != http.StatusBadRequest || len(got) != 1 || !strings.Contains(got[0].data, "no recorded event has id") {
		t.Errorf("GET Last-Event-ID never-sent = %d %v; want 400 naming the id", code, got)
	}
	if rep := total(srv); rep.Cut != 1 || rep.Resumed != 2 || len(rep.Mismatches) != 0 {
		t.Errorf("replay: %d cut, %d resumed, %v unmatched; want 1, 2 (the refused one counts) and none", rep.Cut, rep.Resumed, rep.Mismatches)
	}
}
