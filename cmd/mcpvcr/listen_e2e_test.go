package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// listenServer is an in-process Go SDK server whose tool toggle adds a
// tool, so that the server sends notifications/tools/list_changed on the
// client's subscriptions/listen stream.
func listenServer(tb testing.TB) string {
	s := mcp.NewServer(&mcp.Implementation{Name: "listen", Version: "1.0.0"}, nil)
	type none struct{}
	mcp.AddTool(s, &mcp.Tool{Name: "toggle", Description: "Adds tool extra."}, func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
		mcp.AddTool(s, &mcp.Tool{Name: "extra", Description: "Added by toggle."}, func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{}, nil, nil
		})
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "toggled"}}}, nil, nil
	})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true}))
	tb.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

// listenRun connects a 2026-07-28 client that wants tools/list_changed
// (so the SDK opens a subscriptions/listen stream), calls toggle and
// waits for the notification; it returns the tool names listed after it.
func listenRun(ctx context.Context, tb testing.TB, url string) []string {
	tb.Helper()
	changed := make(chan struct{}, 4)
	c := mcp.NewClient(&mcp.Implementation{Name: "listen-client", Version: "1.0.0"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		tb.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "toggle"}); err != nil {
		tb.Fatalf("call toggle: %v", err)
	}
	select {
	case <-changed:
	case <-ctx.Done():
		tb.Fatalf("no notifications/tools/list_changed on the listen stream: %v", ctx.Err())
	}
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		tb.Fatalf("list tools: %v", err)
	}
	var names []string
	for _, t := range res.Tools {
		names = append(names, t.Name)
	}
	return names
}

// TestHTTP_Listen records a 2026-07-28 subscriptions/listen stream (the
// acknowledgement, a list_changed notification tagged with the
// subscription id, the client closing the stream) and replays it: the
// replayed client gets the notification too, with its own subscription id.
func TestHTTP_Listen(t *testing.T) {
	parallel(t)
	ctx := testCtx(t)
	db := filepath.Join(t.TempDir(), "c.db")
	dumpOnFailure(t, db)
	rec := startServing(t, "record", "--cassette", db, "--upstream", listenServer(t), "--listen", "127.0.0.1:0")
	live := listenRun(ctx, t, rec.URL)
	if code := rec.Stop(); code != 0 {
		t.Fatalf("record exited %d:\n%s", code, rec.stderr)
	}
	show := mcpvcr(t, "", "show", "1", "--cassette", db)
	for _, want := range []string{"listen#", "notifications/subscriptions/acknowledged", "notifications/tools/list_changed", "client-aborted"} {
		if !strings.Contains(show.stdout, want) {
			t.Errorf("show lacks %q:\n%s", want, show.stdout)
		}
	}
	rep := startServing(t, "replay", "--cassette", db, "--listen", "127.0.0.1:0", "--strict")
	replayed := listenRun(ctx, t, rep.URL+"/mcp")
	code := rep.Stop()
	if strings.Join(live, ",") != strings.Join(replayed, ",") {
		t.Errorf("tools after the change: live %v, replay %v", live, replayed)
	}
	if code != 0 {
		t.Errorf("replay exited %d:\n%s", code, rep.stderr)
	}
	// The recorded client closed its listen stream (its way to cancel):
	// nothing was wrong, so nothing is worth a warning.
	if strings.Contains(rep.stderr.String(), "level=WARN") {
		t.Errorf("a clean replay warns:\n%s", rep.stderr)
	}
}
