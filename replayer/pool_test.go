package replayer_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
	"github.com/mcpvcr/mcpvcr/internal/storetest"
	"github.com/mcpvcr/mcpvcr/replayer"
)

// The tests of the 2026-07-28 pool (pool.go): each request an exchange of
// its own, matched against every recorded modern exchange of every
// session, on its body and its HTTP shape.

// rollMeta is the _meta of every 2026-07-28 request of rollSessions.
const rollMeta = `"_meta":{"io.modelcontextprotocol/clientInfo":{"name":"rec","version":"1"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`

// rollBody is tools/call roll with id.
func rollBody(id int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"roll",%s}}`, id, rollMeta)
}

// rollSessions is the JSONL export of two 2026-07-28 sessions in which
// the client made the same call (tools/call roll) and got different
// answers: "one" in session 1, "two" in session 2. Session 1 also holds
// the same body refused with 400 because its Mcp-Name header named
// another tool.
func rollSessions() string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(map[string]any{"type": "mcpvcr", "version": 1})
	type exchange struct {
		mcpName, answer string
		status          int
	}
	sessions := [][]exchange{
		{{"roll", `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"one"}]}}`, 200},
			{"dice", `{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"Mcp-Name dice does not match the body"}}`, 400}},
		{{"roll", `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"two"}]}}`, 200}},
	}
	stream := 0
	for s, xs := range sessions {
		id := s + 1
		_ = enc.Encode(map[string]any{"type": "session", "id": id, "transport": "http", "revision": "2026-07-28", "era": "modern",
			"upstream": "http://127.0.0.1:9/mcp", "started_at": "2026-01-01T00:00:00Z", "ended_at": "2026-01-01T00:00:01Z", "exit_code": -1})
		seq := 0
		for i, x := range xs {
			stream++
			req := http.Header{"Accept": {"application/json, text/event-stream"}, "Content-Type": {"application/json"},
				"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"tools/call"}, "Mcp-Name": {x.mcpName}}
			_ = enc.Encode(map[string]any{"type": "stream", "id": stream, "session": id, "kind": "post", "method": "POST", "url": "/mcp",
				"status": x.status, "opened_ns": 10 * (i + 1), "closed_ns": 10*(i+1) + 5, "end": "complete",
				"request_header": req, "response_header": http.Header{"Content-Type": {"application/json"}}})
			for _, f := range []struct{ dir, raw string }{{"c2s", rollBody(1)}, {"s2c", x.answer}} {
				seq++
				_ = enc.Encode(map[string]any{"type": "frame", "session": id, "seq": seq, "stream": stream, "dir": f.dir, "offset_ns": 10*(i+1) + seq, "raw": f.raw})
			}
		}
	}
	return b.String()
}

// servePool serves rollSessions.
func servePool(t *testing.T) (*replayer.Server, string) {
	t.Helper()
	ctx := context.Background()
	db, _ := storetest.Import(t, rollSessions())
	srv := &replayer.Server{}
	if err := srv.Load(ctx, db, nil); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	t.Cleanup(srv.Close)
	return srv, ts.URL + "/mcp"
}

// postModern POSTs body with the 2026-07-28 headers of tools/call roll,
// Mcp-Name set to mcpName and the headers in extra, and returns the
// status and body of the answer.
func postModern(t *testing.T, url, body, mcpName string, extra map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(testContext(t), http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", mcpName)
	for k, v := range extra {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b))
}

// TestPool_RecordedOrderThenLast: among identical recorded exchanges in
// different sessions, the k-th identical live request gets the k-th
// recorded answer and every later one the last again, each with its own
// id; a request of the recorded refusal's shape gets the refusal, and
// the refusal answers nothing else.
func TestPool_RecordedOrderThenLast(t *testing.T) {
	srv, url := servePool(t)
	answer := func(id int, text string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"%s"}]}}`, id, text)
	}
	for i, want := range []string{"one", "two", "two", "two"} {
		id := 10 + i
		code, got := postModern(t, url, rollBody(id), "roll", nil)
		if code != http.StatusOK || got != answer(id, want) {
			t.Errorf("roll #%d = %d %s; want 200 %s", i+1, code, got, answer(id, want))
		}
	}
	for i := range 2 {
		code, got := postModern(t, url, rollBody(20+i), "dice", nil)
		if code != http.StatusBadRequest || !strings.Contains(got, `"id":`+fmt.Sprint(20+i)) || !strings.Contains(got, "does not match the body") {
			t.Errorf("roll with Mcp-Name dice #%d = %d %s; want the recorded 400 with the live id", i+1, code, got)
		}
	}
	var rep replayer.Report
	for _, r := range srv.Reports() {
		rep.Received += r.Received
		rep.Matched += r.Matched
		rep.Mismatches = append(rep.Mismatches, r.Mismatches...)
	}
	if rep.Received != 6 || rep.Matched != 6 || len(rep.Mismatches) != 0 {
		t.Errorf("report: %d received, %d matched, %v unmatched; want 6, 6 and none", rep.Received, rep.Matched, rep.Mismatches)
	}
}

// TestPool_OtherShape: a request whose body was recorded but whose HTTP
// shape was not (an Mcp-Param header no recorded request had) gets a
// recorded answer that accepted the body, never the recorded refusal;
// with a foreign Origin it must pass the checks a server makes first
// and is refused 403.
func TestPool_OtherShape(t *testing.T) {
	_, url := servePool(t)
	code, got := postModern(t, url, rollBody(30), "roll", map[string]string{"Mcp-Param-Seed": "7"})
	if code != http.StatusOK || !strings.Contains(got, `"id":30,"result"`) {
		t.Errorf("roll with an unrecorded Mcp-Param-Seed = %d %s; want a recorded 200 answer", code, got)
	}
	code, got = postModern(t, url, rollBody(31), "roll", map[string]string{"Origin": "http://evil.example"})
	if code != http.StatusForbidden {
		t.Errorf("roll from Origin http://evil.example = %d %s; want 403", code, got)
	}
}

// TestPool_ConcurrentClients: Go SDK clients at 2026-07-28, all at once,
// against the eight recorded sessions of multi-gosdk-http-2026-07-28
// (which share their opening: server/discover, tools/list): each call
// gets the answer of the session that made it.
func TestPool_ConcurrentClients(t *testing.T) {
	srv, url := serveCassette(t, "multi-gosdk-http-2026-07-28", "/mcp", nil)
	ctx := testContext(t)
	var wg sync.WaitGroup
	for _, c := range []struct {
		a, b int
		want string
	}{{40, 2, "42"}, {1, 2, "3"}, {40, 2, "42"}, {1, 2, "3"}} {
		wg.Go(func() {
			cs, err := mcptest.NewClientAs(upgraded).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: mcptest.V20260728})
			if err != nil {
				t.Error(err)
				return
			}
			defer cs.Close()
			if _, err := cs.ListTools(ctx, nil); err != nil {
				t.Error(err)
				return
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": c.a, "b": c.b}})
			if err != nil {
				t.Error(err)
				return
			}
			if len(res.Content) == 0 {
				t.Errorf("add %d %d: no content", c.a, c.b)
				return
			}
			if tc, ok := res.Content[0].(*mcp.TextContent); !ok || !strings.Contains(tc.Text, c.want) {
				t.Errorf("add %d %d = %+v; want the recorded %s", c.a, c.b, res.Content[0], c.want)
			}
		})
	}
	wg.Wait()
	for _, r := range srv.Reports() {
		if len(r.Mismatches) > 0 {
			t.Errorf("unmatched frames: %v", r.Mismatches)
		}
	}
}
