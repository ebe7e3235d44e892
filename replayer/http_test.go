package replayer_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
	"github.com/mcpvcr/mcpvcr/internal/storetest"
	"github.com/mcpvcr/mcpvcr/replayer"
	"github.com/mcpvcr/mcpvcr/store"
)

// The tests of the HTTP side (http.go, httpfollow.go, httpsession.go,
// httpstream.go, pool.go), driven by httptest and the committed
// multi-session cassettes: eight sessions that share their opening
// (initialize, tools/list) and then differ, recorded by a client named
// mcpvcr-suite 2.12.0; every test connects as another client.

// upgraded is the clientInfo the tests connect as.
var upgraded = &mcp.Implementation{Name: "mcpvcr-suite-ci", Version: "2.12.1"}

// serveCassette serves the sessions of cassettes/NAME.jsonl and returns
// the endpoint URL at path.
func serveCassette(t *testing.T, name, path string, setup func(*replayer.Server)) (*replayer.Server, string) {
	t.Helper()
	recs, err := store.LoadFile(context.Background(), filepath.Join("..", "cassettes", name+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	srv := &replayer.Server{Recordings: recs, Wait: 5 * time.Second}
	if setup != nil {
		setup(srv)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	t.Cleanup(srv.Close) // runs first: ends held streams so that ts can close
	return srv, ts.URL + path
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// text is the text of a tool result's first content.
func text(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if len(res.Content) == 0 {
		t.Fatalf("result without content: %+v", res)
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("result content %T; want text", res.Content[0])
	}
	return tc.Text
}

// TestHTTP_SessionsAnswerTheirOwnCalls: over Streamable HTTP (JSON
// answers, SSE answers, and 2026-07-28 without sessions), and over the
// 2024-11-05 HTTP+SSE transport, a Go SDK client that makes the call
// one recorded session made gets that session's answer, whichever
// session's opening it was first matched against.
func TestHTTP_SessionsAnswerTheirOwnCalls(t *testing.T) {
	streamable := func(u string) mcp.Transport { return &mcp.StreamableClientTransport{Endpoint: u} }
	for _, tc := range []struct {
		cassette, path, version string
		transport               func(string) mcp.Transport
	}{
		{"multi-gosdk-http-json", "/mcp", mcptest.V20251125, streamable},
		{"multi-gosdk-http-sse", "/mcp", mcptest.V20251125, streamable},
		{"multi-gosdk-http-2026-07-28", "/mcp", mcptest.V20260728, streamable},
		{"multi-gosdk-sse", "/sse", mcptest.V20241105, func(u string) mcp.Transport { return &mcp.SSEClientTransport{Endpoint: u} }},
	} {
		t.Run(tc.cassette, func(t *testing.T) {
			srv, url := serveCassette(t, tc.cassette, tc.path, nil)
			ctx := testContext(t)
			for _, call := range []struct {
				args map[string]any
				want string
			}{
				{map[string]any{"a": 40, "b": 2}, "42"},
				{map[string]any{"a": 1, "b": 2}, "3"},
			} {
				cs, err := mcptest.NewClientAs(upgraded).Connect(ctx, tc.transport(url), &mcp.ClientSessionOptions{ProtocolVersion: tc.version})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := cs.ListTools(ctx, nil); err != nil {
					t.Fatal(err)
				}
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: call.args})
				if err != nil {
					t.Fatal(err)
				}
				if got := text(t, res); !strings.Contains(got, call.want) {
					t.Errorf("add %v = %q; want the recorded %s", call.args, got, call.want)
				}
				cs.Close()
			}
			for _, r := range srv.Reports() {
				if len(r.Mismatches) > 0 {
					t.Errorf("unmatched frames: %v", r.Mismatches)
				}
			}
		})
	}
}

// TestHTTP_ExpireAfter (httpsession.go): Faults.ExpireAfter answers 404
// to the requests after the limit, which the Go SDK client reports as a
// lost session. The client's four first requests are initialize,
// notifications/initialized, its GET stream and tools/list (the last two
// in either order).
func TestHTTP_ExpireAfter(t *testing.T) {
	_, url := serveCassette(t, "multi-gosdk-http-sse", "/mcp", func(s *replayer.Server) { s.Faults.ExpireAfter = 4 })
	ctx := testContext(t)
	cs, err := mcptest.NewClientAs(upgraded).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatalf("tools/list, within the limit: %v", err)
	}
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": 1, "b": 2}})
	if err == nil || !strings.Contains(err.Error(), "404") && !errors.Is(err, mcp.ErrSessionMissing) {
		t.Errorf("tools/call, past the limit: %v; want the session expired (404)", err)
	}
}

// TestHTTP_GETWithoutSession (http.go): a GET no recorded exchange has
// the shape of is answered at once with the 4xx the recorded server
// gave that shape, never held open.
func TestHTTP_GETWithoutSession(t *testing.T) {
	_, url := serveCassette(t, "multi-gosdk-http-json", "/mcp", nil)
	for _, accept := range []string{"", "text/event-stream"} {
		req, _ := http.NewRequestWithContext(testContext(t), http.MethodGet, url, nil)
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode < 400 || resp.StatusCode >= 500 {
			t.Errorf("GET Accept %q: %s %q; want a 4xx at once", accept, resp.Status, body)
		}
	}
}

// lateAnswerSessions is the JSONL export of two Streamable HTTP sessions
// that share their opening: in each the client calls slow (with its own
// argument), then echo, then cancels the slow call; the server answers
// the slow call anyway after the cancellation (progress 2, then a late
// result), on the call's own SSE stream.
func lateAnswerSessions() string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(map[string]any{"type": "mcpvcr", "version": 1})
	sse := map[string][]string{"Content-Type": {"text/event-stream"}}
	for s := 1; s <= 2; s++ {
		sid := fmt.Sprintf("S%d", s)
		_ = enc.Encode(map[string]any{"type": "session", "id": s, "transport": "http", "revision": "2025-06-18", "era": "legacy",
			"started_at": "2026-01-01T00:00:00Z", "ended_at": "2026-01-01T00:00:01Z", "exit_code": -1})
		streams := []struct {
			status int
			resp   map[string][]string
		}{{200, map[string][]string{"Content-Type": {"text/event-stream"}, "Mcp-Session-Id": {sid}}}, {202, nil}, {200, sse}, {200, sse}, {202, nil}}
		for i, st := range streams {
			req := map[string][]string{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
			if i > 0 {
				req["Mcp-Session-Id"], req["Mcp-Protocol-Version"] = []string{sid}, []string{"2025-06-18"}
			}
			_ = enc.Encode(map[string]any{"type": "stream", "id": 10*s + i, "session": s, "kind": "post", "method": "POST", "url": "/mcp",
				"status": st.status, "opened_ns": 1000 * (i + 1), "closed_ns": 100000, "end": "complete", "response_header": st.resp,
				"request_header": req})
		}
		frames := []struct {
			stream int
			raw    string
		}{
			{0, `> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"rec","version":"1"}}}`},
			{0, `< {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}`},
			{1, `> {"jsonrpc":"2.0","method":"notifications/initialized"}`},
			{2, fmt.Sprintf(`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{"n":%d},"_meta":{"progressToken":"t"}}}`, s)},
			{2, `< {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}`},
			{3, `> {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo"}}`},
			{4, `> {"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}`},
			{2, `< {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":2}}`},
			{2, fmt.Sprintf(`< {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"late %d"}]}}`, s)},
			{3, `< {"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"echo"}]}}`},
		}
		for i, f := range frames {
			rec := map[string]any{"type": "frame", "session": s, "seq": i + 1, "stream": 10*s + f.stream, "offset_ns": 1000*(i+1) + 500}
			if f.raw[0] == '>' {
				rec["dir"], rec["raw"] = "c2s", f.raw[2:]
			} else {
				rec["dir"], rec["raw"], rec["data"], rec["sse"], rec["event"] = "s2c", "event: message\ndata: "+f.raw[2:]+"\n\n", f.raw[2:], true, "message"
			}
			_ = enc.Encode(rec)
		}
	}
	return b.String()
}

// TestHTTP_LateAnswerWhenClientDoesNotCancel (httpfollow.go): a client
// that makes the recorded call and then waits for it, never cancelling,
// gets after --wait what the recording holds after the recorded
// cancellation (progress 2 and the late result) on the call's stream:
// the frames that waiving the cancellation releases reach the stream.
func TestHTTP_LateAnswerWhenClientDoesNotCancel(t *testing.T) {
	ctx := testContext(t)
	db, _ := storetest.Import(t, lateAnswerSessions())
	srv := &replayer.Server{Wait: 100 * time.Millisecond}
	if err := srv.Load(ctx, db, nil); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	t.Cleanup(srv.Close)
	post := func(sid, body string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp, resp.Header.Get("Mcp-Session-Id")
	}
	resp, sid := post("", `{"jsonrpc":"2.0","id":"i","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"another","version":"2"}}}`)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	resp, _ = post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	resp.Body.Close()
	resp, _ = post(sid, `{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"slow","arguments":{"n":1},"_meta":{"progressToken":"u"}}}`)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body) // the stream ends after the late result
	if err != nil {
		t.Fatalf("reading the call's stream: %v (read %q)", err, body)
	}
	for _, want := range []string{`"progress":1`, `"progress":2`, `"id":"c","result":{"content":[{"type":"text","text":"late 1"}]}`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("the call's stream lacks %s:\n%s", want, body)
		}
	}
}

// TestHTTP_SSESkippedRequest (httpfollow.go): over HTTP+SSE every answer
// shares the one stream, in recorded order. A client that skips the
// recorded tools/list and calls echo at once gets the recorded echo
// answer within Server.Wait, out of recorded order (it does not depend
// on tools/list), and the report says so: it does not wait forever
// behind the tools/list answer that will never be released. Over
// Streamable HTTP, where each answer has its own stream, the echo is
// answered as recorded.
func TestHTTP_SSESkippedRequest(t *testing.T) {
	for _, name := range []string{"multi-gosdk-http-json", "multi-gosdk-http-sse"} {
		t.Run(name, func(t *testing.T) {
			srv, url := serveCassette(t, name, "/mcp", func(s *replayer.Server) { s.Wait = 200 * time.Millisecond })
			callSkippingList(t, &mcp.StreamableClientTransport{Endpoint: url}, mcptest.V20251125)
			for _, r := range srv.Reports() {
				if len(r.Mismatches) > 0 {
					t.Errorf("unmatched frames: %v", r.Mismatches)
				}
			}
		})
	}
	srv, url := serveCassette(t, "multi-gosdk-sse", "/sse", func(s *replayer.Server) { s.Wait = 200 * time.Millisecond })
	callSkippingList(t, &mcp.SSEClientTransport{Endpoint: url}, mcptest.V20241105)
	var reasons []string
	for _, r := range srv.Reports() {
		for _, mm := range r.Mismatches {
			reasons = append(reasons, mm.Reason)
		}
	}
	if len(reasons) != 1 || !strings.Contains(reasons[0], "tools/list") || !strings.Contains(reasons[0], "out of recorded order") {
		t.Errorf("report mismatches %q; want one naming the skipped tools/list and the answer sent out of recorded order", reasons)
	}
}

// callSkippingList connects and calls echo "run 0" without the recorded
// tools/list first, and wants the recorded answer.
func callSkippingList(t *testing.T, tr mcp.Transport, version string) {
	t.Helper()
	ctx := testContext(t)
	cs, err := mcptest.NewClientAs(upgraded).Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	callCtx, cancel := context.WithTimeout(ctx, 10*time.Second) // fails rather than hangs
	defer cancel()
	res, err := cs.CallTool(callCtx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "run 0"}})
	if err != nil {
		t.Fatalf("echo without tools/list first: %v", err)
	}
	if got := text(t, res); got != "run 0" {
		t.Errorf("echo = %q; want the recorded run 0", got)
	}
}
