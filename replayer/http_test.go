package replayer_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
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
