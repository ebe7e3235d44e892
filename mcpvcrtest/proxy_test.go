package mcpvcrtest_test

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/mcpvcrtest"
)

// liveServer is a Go SDK server with a tool add whose answers count the
// calls, so that a replay (which repeats the recorded count) and a live
// call (which counts on) tell apart.
func liveServer(t *testing.T) (url string, calls *int) {
	n := new(int)
	server := mcp.NewServer(&mcp.Implementation{Name: "counter", Version: "1.0.0"}, nil)
	type args struct{ A, B int }
	mcp.AddTool(server, &mcp.Tool{Name: "add"}, func(_ context.Context, _ *mcp.CallToolRequest, in args) (*mcp.CallToolResult, any, error) {
		*n++
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%d (call %d)", in.A+in.B, *n)}}}, nil, nil
	})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{JSONResponse: true}))
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp", n
}

func addThrough(t *testing.T, srv *httptest.Server, name string, a int) string {
	t.Helper()
	ctx := context.Background()
	c := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1.0.0"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: mcpvcrtest.Endpoint(srv)}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"A": a, "B": 1}})
	if err != nil {
		t.Fatalf("CallTool: %v", err)
	}
	return res.Content[0].(*mcp.TextContent).Text
}

// TestProxy_Modes records two sessions that share their opening, replays
// them to a client with another clientInfo, and checks how each mode is
// chosen: option, then -mcpvcr, then MCPVCR_MODE.
func TestProxy_Modes(t *testing.T) {
	dir := t.TempDir()
	cassette := filepath.Join(dir, "sub", "counter.jsonl")
	upstream, calls := liveServer(t)

	// MCPVCR_MODE=replay-or-record with no cassette: records.
	t.Run("RecordWhenMissing", func(t *testing.T) {
		t.Setenv(mcpvcrtest.ModeEnv, "replay-or-record")
		srv := mcpvcrtest.Proxy(t, cassette, upstream)
		if got, want := addThrough(t, srv, "recorder", 1), "2 (call 1)"; got != want {
			t.Errorf("add(1) = %q; want %q", got, want)
		}
		if got, want := addThrough(t, srv, "recorder", 2), "3 (call 2)"; got != want {
			t.Errorf("add(2) = %q; want %q", got, want)
		}
	})
	if _, err := os.Stat(cassette); err != nil {
		t.Fatalf("the recording was not written: %v", err)
	}
	// The env says record, the flag says replay: the flag wins. The live
	// server is not called: the answers are the recorded ones.
	t.Run("FlagOverEnv", func(t *testing.T) {
		t.Setenv(mcpvcrtest.ModeEnv, "record")
		setFlag(t, "replay")
		srv := mcpvcrtest.Proxy(t, cassette, upstream)
		if got, want := addThrough(t, srv, "upgraded-client", 2), "3 (call 2)"; got != want {
			t.Errorf("add(2) = %q; want %q (session 2's answer)", got, want)
		}
		if got, want := addThrough(t, srv, "upgraded-client", 1), "2 (call 1)"; got != want {
			t.Errorf("add(1) = %q; want %q (session 1's answer)", got, want)
		}
	})
	// The option wins over both; Off forwards and writes nothing.
	t.Run("OptionOff", func(t *testing.T) {
		t.Setenv(mcpvcrtest.ModeEnv, "record")
		setFlag(t, "record")
		before, _ := os.ReadFile(cassette)
		srv := mcpvcrtest.Proxy(t, cassette, upstream, mcpvcrtest.Off)
		if got, want := addThrough(t, srv, "live", 5), "6 (call 3)"; got != want {
			t.Errorf("add(5) = %q; want %q from the live server", got, want)
		}
		t.Cleanup(func() {
			after, _ := os.ReadFile(cassette)
			if string(after) != string(before) {
				t.Errorf("mode off changed the cassette")
			}
		})
	})
	if *calls != 3 {
		t.Errorf("the live server was called %d times; want 3 (record twice, off once)", *calls)
	}
}

func setFlag(t *testing.T, v string) {
	f := flag.Lookup(mcpvcrtest.ModeFlag)
	old := f.Value.String()
	if err := f.Value.Set(v); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Value.Set(old) })
}
