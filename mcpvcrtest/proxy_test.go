package mcpvcrtest_test

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
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

// exitTB is a testing.TB whose Fatalf the test reads: it keeps the
// message and ends the goroutine, as testing.T does.
type exitTB struct {
	testing.TB
	msg string
}

func (f *exitTB) Helper() {}

func (f *exitTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// fatalOf runs f with an exitTB and returns what it failed with.
func fatalOf(t *testing.T, f func(tb testing.TB)) string {
	ft := &exitTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(ft)
	}()
	<-done
	return ft.msg
}

// TestProxy_Explains: Proxy names itself and the way out when it cannot
// work: replaying a cassette not recorded yet says -mcpvcr=record, and
// recording from an upstream that is down names the upstream.
func TestProxy_Explains(t *testing.T) {
	dir := t.TempDir()
	msg := fatalOf(t, func(tb testing.TB) {
		mcpvcrtest.Proxy(tb, filepath.Join(dir, "missing.jsonl"), "http://127.0.0.1:1/mcp", mcpvcrtest.Replay)
	})
	if !strings.Contains(msg, "mcpvcrtest.Proxy: ") || !strings.Contains(msg, "-mcpvcr=record") || strings.Contains(msg, "NewServer") {
		t.Errorf("Proxy replaying a missing cassette failed with %q; want Proxy named and -mcpvcr=record", msg)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + ln.Addr().String() + "/mcp"
	ln.Close() // nothing listens there any more
	msg = fatalOf(t, func(tb testing.TB) {
		mcpvcrtest.Proxy(tb, filepath.Join(dir, "new.jsonl"), down, mcpvcrtest.Record)
	})
	if !strings.Contains(msg, "mcpvcrtest.Proxy: record") || !strings.Contains(msg, down) {
		t.Errorf("Proxy recording from an upstream that is down failed with %q; want the upstream %s named", msg, down)
	}
}

// TestProxy_UnrecordedSaysRecordAgain: a test replayed through Proxy that
// sends what its cassette lacks fails naming Proxy (not NewServer, which
// it never called) and says what to do: record the test again from the
// live server.
func TestProxy_UnrecordedSaysRecordAgain(t *testing.T) {
	cassette := filepath.Join(t.TempDir(), "counter.jsonl")
	upstream, _ := liveServer(t)
	// Recorded under this test's name, so that replay-with-new-episodes
	// finds the test's session and replays it.
	rec := &recTB{TB: t}
	addThrough(t, mcpvcrtest.Proxy(rec, cassette, upstream, mcpvcrtest.ModeRecordOnly), "recorder", 1)
	if errs := rec.finish(); errs != "" {
		t.Fatalf("record: %s", errs)
	}
	for _, tc := range []struct {
		mode mcpvcrtest.Mode
		says string
	}{
		{mcpvcrtest.ModeReplayOnly, "start the server and record this test again"},
		// The test's session is in the cassette, so it is replayed and
		// nothing new recorded: the failure says so.
		{mcpvcrtest.ModeReplayWithNewEpisodes, "replays a test whose session the cassette holds already"},
	} {
		rt := &recTB{TB: t}
		srv := mcpvcrtest.Proxy(rt, cassette, upstream, tc.mode)
		ctx := context.Background()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "changed", Version: "1"}, nil).Connect(ctx,
			&mcp.StreamableClientTransport{Endpoint: mcpvcrtest.Endpoint(srv)}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatalf("%s: Connect: %v", tc.mode, err)
		}
		_, _ = cs.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"A": 40, "B": 2}})
		cs.Close()
		got := rt.finish()
		for _, want := range []string{"mcpvcrtest.Proxy: the client sent traffic", tc.says, "-mcpvcr=record-only"} {
			if !strings.Contains(got, want) {
				t.Errorf("%s: the failure says\n%s\nwant it to say %q", tc.mode, got, want)
			}
		}
		if strings.Contains(got, "NewServer") {
			t.Errorf("%s: the failure names NewServer, which the test never called:\n%s", tc.mode, got)
		}
	}
}
