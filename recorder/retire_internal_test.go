package recorder

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/clock"
	"github.com/mcpvcr/mcpvcr/store"
)

// TestHTTP_SessionsRetire: a recorder in front of client after client
// keeps no state of the sessions that ended. In front of a Go SDK server
// that keeps its SSE events for resumption (so each carries an id): a
// session whose answer had more events than eventWindow keeps only the
// last eventWindow ids; one its client deleted is let go once the DELETE
// is answered, its record closed; one idle for sessionIdle is let go when
// the next exchange ends; a session with an exchange under way is never
// idle.
func TestHTTP_SessionsRetire(t *testing.T) {
	const events = eventWindow + 50
	server := mcp.NewServer(&mcp.Implementation{Name: "retire", Version: "1"}, nil)
	type none struct{}
	mcp.AddTool(server, &mcp.Tool{Name: "tick", Description: "sends progress events, then answers"},
		func(ctx context.Context, req *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
			for i := range events {
				if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: float64(i + 1)}); err != nil {
					return nil, nil, err
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
		})
	up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
		&mcp.StreamableHTTPOptions{EventStore: mcp.NewMemoryEventStore(nil)}))
	defer up.Close()
	u, _ := url.Parse(up.URL + "/mcp")
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	fake := clock.NewFake(time.Unix(1000, 0))
	h := &HTTP{Upstream: u, Sink: db, Clock: fake}
	// returned hears of each ServeHTTP call once it has returned, its
	// retirements done.
	returned := make(chan struct{}, 1)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r)
		returned <- struct{}{}
	}))
	defer ts.Close()
	defer h.Close(ctx)

	// do sends one request through the recorder, reads its answer whole
	// and waits for the recorder to be done with it. It returns the
	// status, the session id and the SSE event ids of the answer.
	do := func(method, sid, body string) (int, string, []string) {
		t.Helper()
		req, _ := http.NewRequest(method, ts.URL+"/mcp", strings.NewReader(body))
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
		var ids []string
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if id, ok := strings.CutPrefix(sc.Text(), "id: "); ok {
				ids = append(ids, id)
			}
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		<-returned
		return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), ids
	}
	open := func() string {
		t.Helper()
		code, sid, _ := do(http.MethodPost, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
		if code != http.StatusOK || sid == "" {
			t.Fatalf("initialize = %d, session %q; want 200 and a session", code, sid)
		}
		if code, _, _ := do(http.MethodPost, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); code != http.StatusAccepted {
			t.Fatalf("initialized = %d; want 202", code)
		}
		return sid
	}
	live := func() (all, byID int) {
		h.mu.Lock()
		defer h.mu.Unlock()
		return len(h.all), len(h.byID)
	}

	sid := open()
	code, _, ids := do(http.MethodPost, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"tick","arguments":{},"_meta":{"progressToken":"p"}}}`)
	if code != http.StatusOK || len(ids) <= eventWindow {
		t.Fatalf("tools/call = %d with %d event ids; want 200 and more than %d", code, len(ids), eventWindow)
	}
	h.mu.Lock()
	hs := h.byID[sid]
	h.mu.Unlock()
	hs.mu.Lock()
	kept, first, last := len(hs.eventTo), hs.eventTo[ids[0]], hs.eventTo[ids[len(ids)-1]]
	hs.mu.Unlock()
	if kept != eventWindow || first != nil || last == nil {
		t.Errorf("after %d events the session keeps %d ids (the first: %t, the last: %t); want the last %d only",
			len(ids), kept, first != nil, last != nil, eventWindow)
	}
	if code, _, _ := do(http.MethodDelete, sid, ""); code < 200 || code >= 300 {
		t.Fatalf("DELETE = %d; want 2xx", code)
	}
	if all, byID := live(); all != 0 || byID != 0 {
		t.Errorf("after its DELETE the recorder holds %d sessions and %d ids; want none", all, byID)
	}
	if err := db.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	ss, err := db.Sessions(ctx)
	if err != nil || len(ss) != 1 || ss[0].EndedAt.IsZero() {
		t.Fatalf("Sessions() = %+v, %v; want the deleted session, ended", ss, err)
	}

	idle := open()
	fake.Advance(sessionIdle + sweepEvery)
	open() // its exchanges' ends look for idle sessions
	h.mu.Lock()
	_, idleKept := h.byID[idle]
	h.mu.Unlock()
	if all, _ := live(); idleKept || all != 1 {
		t.Errorf("after %s idle: session still held %t, %d sessions held; want it let go, 1 held", sessionIdle+sweepEvery, idleKept, all)
	}
	if err := h.Err(); err != nil {
		t.Errorf("Err() = %v", err)
	}
}

// TestHTTP_LegacySessionRetires: an HTTP+SSE session lives as long as
// its SSE stream; once its client closes that stream (the Go SDK's SSE
// client, in front of the Go SDK's SSE server), the recorder lets it go.
func TestHTTP_LegacySessionRetires(t *testing.T) {
	server := mcp.NewServer(&mcp.Implementation{Name: "legacy", Version: "1"}, nil)
	up := httptest.NewServer(mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return server }, nil))
	defer up.Close()
	u, _ := url.Parse(up.URL + "/sse")
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	h := &HTTP{Upstream: u, Sink: db}
	// gets hears of each GET once ServeHTTP is done with it (it ends a
	// stream its client left by panicking with http.ErrAbortHandler, as
	// httputil.ReverseProxy does).
	gets := make(chan struct{}, 1)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			defer func() { gets <- struct{}{} }()
		}
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()
	defer h.Close(ctx)

	client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.SSEClientTransport{Endpoint: ts.URL + "/sse"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := cs.Ping(ctx, nil); err != nil {
		t.Fatal(err)
	}
	h.mu.Lock()
	held := len(h.all)
	h.mu.Unlock()
	if held != 1 {
		t.Fatalf("during the session the recorder holds %d sessions; want 1", held)
	}
	cs.Close()
	<-gets
	h.mu.Lock()
	all, endpoints := len(h.all), len(h.byEndpoint)
	h.mu.Unlock()
	if all != 0 || endpoints != 0 {
		t.Errorf("after its SSE stream ended the recorder holds %d sessions and %d endpoints; want none", all, endpoints)
	}
}

// TestHTTP_RefusedGetEndsNothing: a client of a stateless Streamable
// HTTP server (the Go SDK's, which answers GET with 405) sends its
// standalone GET before the server has given any session id: the GET,
// which could have opened an HTTP+SSE stream, gets no endpoint event,
// and its end does not end the session: the requests before and after it
// are one recorded session.
func TestHTTP_RefusedGetEndsNothing(t *testing.T) {
	server := mcp.NewServer(&mcp.Implementation{Name: "stateless", Version: "1"}, nil)
	up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
		&mcp.StreamableHTTPOptions{Stateless: true}))
	defer up.Close()
	u, _ := url.Parse(up.URL + "/mcp")
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	h := &HTTP{Upstream: u, Sink: db}
	returned := make(chan struct{}, 1)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() { returned <- struct{}{} }()
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()
	do := func(method, body string) int {
		t.Helper()
		req, _ := http.NewRequest(method, ts.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		<-returned
		return resp.StatusCode
	}
	if code := do(http.MethodPost, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`); code != http.StatusOK {
		t.Fatalf("initialize = %d; want 200", code)
	}
	if code := do(http.MethodGet, ""); code != http.StatusMethodNotAllowed {
		t.Fatalf("GET = %d; want the stateless server's 405", code)
	}
	if code := do(http.MethodPost, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`); code != http.StatusOK {
		t.Fatalf("tools/list = %d; want 200", code)
	}
	if err := h.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := db.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	ss, err := db.Sessions(ctx)
	if err != nil || len(ss) != 1 {
		t.Errorf("Sessions() = %d sessions, %v; want the one session of all three requests", len(ss), err)
	}
}
