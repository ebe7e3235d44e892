package view_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	cassette2 "gopkg.in/dnaeon/go-vcr.v2/cassette"
	govcr "gopkg.in/dnaeon/go-vcr.v2/recorder"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
	"github.com/mcpvcr/mcpvcr/recorder"
	"github.com/mcpvcr/mcpvcr/store"
	"github.com/mcpvcr/mcpvcr/view"
)

// vcrScript is what the client does against the live server and again
// against go-vcr: list tools, add, echo, read a resource, get a prompt.
func vcrScript(ctx context.Context, t *testing.T, c *mcp.Client, tr mcp.Transport, version string) []string {
	t.Helper()
	cs, err := c.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	var out []string
	step := func(name string, v any, err error) {
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out = append(out, fmt.Sprintf("%s: %s", name, mustJSON(t, v)))
	}
	tools, err := cs.ListTools(ctx, nil)
	step("tools/list", tools, err)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": 40, "b": 2}})
	step("add", res, err)
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hello go-vcr"}})
	step("echo", res, err)
	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: mcptest.StaticURI})
	step("resources/read", rr, err)
	pr, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greet", Arguments: map[string]string{"name": "vcr"}})
	step("prompts/get", pr, err)
	if err := cs.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	return out
}

// TestWriteGoVCR_GoVCRReplays records the Go SDK client and server through
// mcpvcr, exports the session with WriteGoVCR, and replays the file with
// go-vcr's own recorder (replaying mode) to a Go SDK client with another
// clientInfo: the client must see exactly what it saw live.
func TestWriteGoVCR_GoVCRReplays(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name    string
		version string
		json    bool
	}{
		{"JSON20251125", "2025-11-25", true},
		{"SSE20251125", "2025-11-25", false},
		{"JSON20260728", "2026-07-28", true},
		{"SSE20260728", "2026-07-28", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			server := mcptest.NewServer("")
			live := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{JSONResponse: tt.json}))
			defer live.Close()
			up, _ := url.Parse(live.URL + "/mcp")
			db, err := store.Open(ctx, filepath.Join(t.TempDir(), "db"))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			rec := &recorder.HTTP{Upstream: up, Sink: db}
			proxy := httptest.NewServer(rec)
			wantOut := vcrScript(ctx, t, mcptest.NewClient(), &mcp.StreamableClientTransport{Endpoint: proxy.URL + "/mcp"}, tt.version)
			if err := rec.Close(ctx); err != nil {
				t.Fatal(err)
			}
			proxy.Close()
			if err := db.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			recs, err := db.Recordings(ctx)
			if err != nil || len(recs) != 1 {
				t.Fatalf("Recordings = %d, %v; want one session", len(recs), err)
			}

			name := filepath.Join(t.TempDir(), "session")
			if err := view.WriteGoVCR("go-vcr-v2", recs[0], name+".yaml", ""); err != nil {
				t.Fatalf("WriteGoVCR: %v", err)
			}
			checkOrder(t, name, recs[0], tt.json)
			live.Close() // go-vcr replays without it

			vcr, err := govcr.NewAsMode(name, govcr.ModeReplaying, nil)
			if err != nil {
				t.Fatalf("go-vcr: %v", err)
			}
			vcr.SkipRequestLatency = true
			defer vcr.Stop()
			client := mcp.NewClient(&mcp.Implementation{Name: "go-vcr-suite", Version: "9.0.0"}, nil)
			got := vcrScript(ctx, t, client, &mcp.StreamableClientTransport{
				Endpoint:   live.URL + "/mcp", // as the client would address the real server
				HTTPClient: &http.Client{Transport: vcr},
				MaxRetries: -1,
			}, tt.version)
			if diff := cmp.Diff(wantOut, got); diff != "" {
				t.Errorf("go-vcr replay differs from the live run (-live +replay):\n%s", diff)
			}
		})
	}
}

// checkOrder loads the file with go-vcr and checks that it holds one
// interaction per exchange in request-start order, answers as recorded
// (SSE as raw event-stream text), and the standalone GET as 405.
func checkOrder(t *testing.T, name string, rec *store.Recording, jsonAnswers bool) {
	t.Helper()
	c, err := cassette2.Load(name)
	if err != nil {
		t.Fatalf("cassette.Load: %v", err)
	}
	if c.Version != 1 {
		t.Errorf("cassette version = %d; want 1", c.Version)
	}
	if got, want := len(c.Interactions), len(rec.Streams); got != want {
		t.Errorf("%d interactions; want %d, one per recorded exchange", got, want)
	}
	var sse, gets int
	for _, i := range c.Interactions {
		if strings.HasPrefix(i.Response.Headers.Get("Content-Type"), "text/event-stream") {
			sse++
			if !strings.HasPrefix(i.Response.Body, "event: message\n") && !strings.HasPrefix(i.Response.Body, "id: ") && !strings.HasPrefix(i.Response.Body, ":") {
				t.Errorf("SSE answer is not event-stream text: %q", i.Response.Body)
			}
		}
		if i.Request.Method == http.MethodGet {
			gets++
			if i.Response.Code != http.StatusMethodNotAllowed {
				t.Errorf("GET answered %d; want 405 for a GET stream that carried nothing", i.Response.Code)
			}
		}
	}
	if jsonAnswers && sse > 0 {
		t.Errorf("%d SSE answers from a JSON server", sse)
	}
	if !jsonAnswers && sse == 0 {
		t.Errorf("no SSE answer from an SSE server")
	}
	// Request-start order: the JSON-RPC ids of the requests go up.
	last := 0
	for _, i := range c.Interactions {
		var id int
		if _, err := fmt.Sscanf(afterID(i.Request.Body), "%d", &id); err == nil {
			if id < last {
				t.Errorf("request id %d after %d: not in request-start order", id, last)
			}
			last = id
		}
	}
}

func afterID(body string) string {
	_, rest, ok := strings.Cut(body, `"id":`)
	if !ok {
		return ""
	}
	return rest
}

// TestWriteGoVCR_Committed exports runs of a committed eight-session
// cassette: run 3 (its GET stream carried only a keep-alive comment)
// replays through go-vcr to a client with another clientInfo; run 4, whose
// GET stream carried the server's roots/list request, is refused with the
// reason; a stdio session is refused.
func TestWriteGoVCR_Committed(t *testing.T) {
	ctx := context.Background()
	recs, err := store.LoadFile(ctx, "../cassettes/multi-gosdk-http-json.jsonl", 4, 5)
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(t.TempDir(), "run3")
	if err := view.WriteGoVCR("go-vcr-v2", recs[0], name+".yaml", "http://mcp.example"); err != nil {
		t.Fatalf("WriteGoVCR(session 4): %v", err)
	}
	vcr, err := govcr.NewAsMode(name, govcr.ModeReplaying, nil)
	if err != nil {
		t.Fatal(err)
	}
	vcr.SkipRequestLatency = true
	defer vcr.Stop()
	client := mcp.NewClient(&mcp.Implementation{Name: "go-vcr-suite", Version: "9.0.0"}, &mcp.ClientOptions{
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return nil, errors.New("unused")
		},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) { return nil, errors.New("unused") },
	})
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://mcp.example/mcp", HTTPClient: &http.Client{Transport: vcr}, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatalf("ListTools: %v", err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": 40, "b": 2}})
	if err != nil {
		t.Fatalf("CallTool: %v", err)
	}
	if got, want := res.Content[0].(*mcp.TextContent).Text, `{"sum":42}`; got != want {
		t.Errorf("add(40, 2) = %q; want %q", got, want)
	}
	cs.Close()

	err = view.WriteGoVCR("go-vcr-v2", recs[1], filepath.Join(t.TempDir(), "run4.yaml"), "")
	var ge *view.GoVCRError
	if !errors.As(err, &ge) || ge.Session != 5 || !strings.Contains(err.Error(), "standalone GET stream) carried 1 server message(s), the first roots/list") {
		t.Errorf("WriteGoVCR(session 5) = %v; want a *GoVCRError naming the roots/list on its GET stream", err)
	}

	stdio, err := store.LoadFile(ctx, "../cassettes/multi-gosdk-stdio.jsonl", 1)
	if err != nil {
		t.Fatal(err)
	}
	err = view.WriteGoVCR("go-vcr-v2", stdio[0], filepath.Join(t.TempDir(), "stdio.yaml"), "")
	if !errors.As(err, &ge) || !strings.Contains(err.Error(), "go-vcr replays HTTP only") {
		t.Errorf("WriteGoVCR(stdio) = %v; want a *GoVCRError", err)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestWriteGoVCR_Shapes covers what real peers rarely produce on demand:
// exchanges recorded out of id order, a resumed stream, a stream the
// server closed early, a listen stream with messages, a GET stream with
// only a keep-alive comment.
func TestWriteGoVCR_Shapes(t *testing.T) {
	post := func(id int64, opened time.Duration, end store.End) store.Stream {
		return store.Stream{ID: id, SessionID: 1, Kind: store.PostStream, Method: "POST", URL: "/mcp?x=1", Status: 200, Opened: opened, Closed: opened + time.Millisecond, End: end,
			RequestHeader: http.Header{"Content-Type": {"application/json"}}, ResponseHeader: http.Header{"Content-Type": {"text/event-stream"}}}
	}
	frame := func(stream, seq int64, dir store.Direction, raw string) store.Frame {
		f := store.Frame{SessionID: 1, StreamID: stream, Seq: seq, Direction: dir, Raw: []byte(raw)}
		kind := store.PostStream
		if dir == store.ServerToClient {
			f.SSE = true
			f.Comment = strings.HasPrefix(raw, ":")
		}
		f.Derive(kind)
		return f
	}
	base := func(streams []store.Stream, frames ...store.Frame) *store.Recording {
		return &store.Recording{Session: store.Session{ID: 1, Transport: store.StreamableHTTP, Upstream: "http://up.example:8080/mcp"}, Streams: streams, Frames: frames}
	}
	t.Run("Order", func(t *testing.T) {
		rec := base([]store.Stream{post(1, 5*time.Millisecond, store.EndComplete), post(2, time.Millisecond, store.EndComplete),
			{ID: 3, SessionID: 1, Kind: store.GetStream, Method: "GET", URL: "/mcp", Status: 200, Opened: 3 * time.Millisecond, End: store.EndClientAborted}},
			frame(2, 1, store.ClientToServer, `{"jsonrpc":"2.0","id":1,"method":"initialize"}`),
			frame(2, 2, store.ServerToClient, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n"),
			frame(3, 3, store.ServerToClient, ": ok\n\n"),
			frame(1, 4, store.ClientToServer, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`),
			frame(1, 5, store.ServerToClient, "id: 7\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n\n"),
		)
		name := filepath.Join(t.TempDir(), "order")
		if err := view.WriteGoVCR("go-vcr-v2", rec, name+".yaml", ""); err != nil {
			t.Fatal(err)
		}
		c, err := cassette2.Load(name)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, i := range c.Interactions {
			got = append(got, fmt.Sprintf("%s %s %d %q", i.Request.Method, i.Request.URL, i.Response.Code, i.Response.Body))
		}
		want := []string{
			`POST http://up.example:8080/mcp?x=1 200 "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n"`,
			`GET http://up.example:8080/mcp 405 ""`,
			`POST http://up.example:8080/mcp?x=1 200 "id: 7\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n\n"`,
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("interactions mismatch (-want +got):\n%s", diff)
		}
	})
	for _, tt := range []struct {
		name string
		rec  *store.Recording
		want string
	}{
		{"Resumed", base([]store.Stream{post(1, 0, store.EndServerClosed), {ID: 2, SessionID: 1, Kind: store.ResumeStream, Method: "GET", URL: "/mcp", Status: 200, ResumesID: 1, LastEventID: "3", End: store.EndComplete}}),
			"stream 1 (POST /mcp?x=1) ended server-closed"},
		{"ResumeOnly", base([]store.Stream{{ID: 2, SessionID: 1, Kind: store.ResumeStream, Method: "GET", URL: "/mcp", Status: 200, ResumesID: 1, LastEventID: "3", End: store.EndComplete}}),
			`stream 2 resumes stream 1 (Last-Event-ID "3")`},
		{"Cancelled", base([]store.Stream{post(1, 0, store.EndClientAborted)}), "ended client-aborted"},
		{"Listen", base([]store.Stream{{ID: 1, SessionID: 1, Kind: store.ListenStream, Method: "POST", URL: "/mcp", Status: 200, End: store.EndComplete}},
			frame(1, 1, store.ServerToClient, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/resources/updated\"}\n\n")),
			"(a subscriptions/listen stream) carried 1 server message(s)"},
		{"HTTPSSE", &store.Recording{Session: store.Session{ID: 1, Transport: store.LegacySSE}}, "HTTP+SSE (2024-11-05) session"},
		{"NoBase", &store.Recording{Session: store.Session{ID: 1, Transport: store.StreamableHTTP, Upstream: "[redacted]"}, Streams: []store.Stream{post(1, 0, store.EndComplete)}}, "gives no base URL"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := view.WriteGoVCR("go-vcr-v2", tt.rec, filepath.Join(t.TempDir(), "x.yaml"), "")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("WriteGoVCR = %v; want an error with %q", err, tt.want)
			}
		})
	}
}

// TestEncodeGoVCR: the bytes written to w are the file WriteGoVCR writes,
// and a session go-vcr cannot hold is the same *GoVCRError, with nothing
// written.
func TestEncodeGoVCR(t *testing.T) {
	recs, err := store.LoadFile(context.Background(), "../cassettes/multi-gosdk-http-json.jsonl", 4, 5)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "run3.yaml")
	if err := view.WriteGoVCR("go-vcr-v2", recs[0], path, "http://mcp.example"); err != nil {
		t.Fatalf("WriteGoVCR: %v", err)
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := view.EncodeGoVCR(&got, "go-vcr-v2", recs[0], "http://mcp.example"); err != nil {
		t.Fatalf("EncodeGoVCR: %v", err)
	}
	if diff := cmp.Diff(string(want), got.String()); diff != "" {
		t.Errorf("EncodeGoVCR mismatch (-WriteGoVCR +EncodeGoVCR):\n%s", diff)
	}
	got.Reset()
	var ge *view.GoVCRError
	if err := view.EncodeGoVCR(&got, "go-vcr-v2", recs[1], ""); !errors.As(err, &ge) || got.Len() != 0 {
		t.Errorf("EncodeGoVCR(session 5) = %v, %d bytes; want a *GoVCRError and nothing written", err, got.Len())
	}
}
