package mcpvcrtest_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/mcpvcrtest"
)

// exampleT stands in for the *testing.T of a test, so that the examples
// run: it prints failures and runs cleanups when the example ends.
type exampleT struct {
	testing.TB
	name     string // "" in examples that do not print it
	cleanups []func()
	dirs     []string
}

func (t *exampleT) Helper()                           {}
func (t *exampleT) Name() string                      { return t.name }
func (t *exampleT) Failed() bool                      { return false }
func (t *exampleT) Logf(format string, args ...any)   {}
func (t *exampleT) Cleanup(f func())                  { t.cleanups = append(t.cleanups, f) }
func (t *exampleT) Errorf(format string, args ...any) { fmt.Printf("FAIL: "+format+"\n", args...) }
func (t *exampleT) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }
func (t *exampleT) TempDir() string {
	d, err := os.MkdirTemp("", "mcpvcrtest-example-")
	if err != nil {
		panic(err)
	}
	t.dirs = append(t.dirs, d)
	return d
}

// done runs the cleanups, last registered first, as the testing package does.
func (t *exampleT) done() {
	for _, f := range slices.Backward(t.cleanups) {
		f()
	}
	for _, d := range t.dirs {
		os.RemoveAll(d)
	}
}

// A client under test: it lists a server's tools and calls one.
func toolReport(ctx context.Context, cs *mcp.ClientSession) (string, error) {
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		return "", err
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": 40, "b": 2}})
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%d tools; add(40, 2) = %s", len(tools.Tools), res.Content[0].(*mcp.TextContent).Text), nil
}

// myClient is the client under test, built as the application builds it:
// its name and version differ from the recording's client, and matching
// ignores them; its capabilities are the recorded ones.
func myClient() *mcp.Client {
	return newClient()
}

// NewServer replays a cassette of eight recorded Streamable HTTP sessions;
// the client's calls pick the session that answers them.
func ExampleNewServer() {
	t := new(exampleT) // in a test: the *testing.T
	defer t.done()
	ctx := context.Background()

	srv := mcpvcrtest.NewServer(t, "../cassettes/multi-gosdk-http-json.jsonl")
	transport := &mcp.StreamableClientTransport{Endpoint: mcpvcrtest.Endpoint(srv)}
	cs, err := myClient().Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	report, err := toolReport(ctx, cs)
	if err != nil {
		t.Fatalf("toolReport: %v", err)
	}
	fmt.Println(report)
	// Output: 11 tools; add(40, 2) = {"sum":42}
}

// Endpoint is the server's URL with the path the recording's client used.
func ExampleEndpoint() {
	t := new(exampleT) // in a test: the *testing.T
	defer t.done()
	srv := mcpvcrtest.NewServer(t, "../cassettes/multi-gosdk-http-sse.jsonl")
	fmt.Println(mcpvcrtest.Endpoint(srv) == srv.URL+"/mcp")
	// Output: true
}

// Transport replays in memory, with no socket and no process: here the
// same server recorded over stdio.
func ExampleTransport() {
	t := new(exampleT) // in a test: the *testing.T
	defer t.done()
	ctx := context.Background()

	transport := mcpvcrtest.Transport(t, "../cassettes/multi-gosdk-stdio.jsonl")
	cs, err := myClient().Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	report, err := toolReport(ctx, cs)
	if err != nil {
		t.Fatalf("toolReport: %v", err)
	}
	fmt.Println(report)
	// Output: 11 tools; add(40, 2) = {"sum":42}
}

// Transport replays HTTP sessions in memory too, here 2026-07-28
// exchanges, through the SDK's Streamable HTTP client transport.
func ExampleTransport_http() {
	t := new(exampleT) // in a test: the *testing.T
	defer t.done()
	ctx := context.Background()

	transport := mcpvcrtest.Transport(t, "../cassettes/multi-gosdk-http-2026-07-28.jsonl")
	cs, err := myClient().Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	report, err := toolReport(ctx, cs)
	if err != nil {
		t.Fatalf("toolReport: %v", err)
	}
	fmt.Println(report)
	// Output: 11 tools; add(40, 2) = {"sum":42}
}

// Command starts the test binary as the replayed server, for clients that
// start their server as a process. The package's TestMain must call Main:
//
//	func TestMain(m *testing.M) { mcpvcrtest.Main(m) }
func ExampleCommand() {
	t := new(exampleT) // in a test: the *testing.T
	defer t.done()
	ctx := context.Background()

	cmd := mcpvcrtest.Command(t, "../cassettes/multi-gosdk-stdio.jsonl")
	cs, err := myClient().Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	report, err := toolReport(ctx, cs)
	if err != nil {
		t.Fatalf("toolReport: %v", err)
	}
	fmt.Println(report)
	// Output: 11 tools; add(40, 2) = {"sum":42}
}

// Proxy records a live server once (ModeRecordOnly, or go test -mcpvcr=record-only)
// and replays the cassette afterwards (ModeReplayOnly), without the
// server.
func ExampleProxy() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "mcpvcrtest-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	cassette := filepath.Join(dir, "calc.jsonl")

	// A live server: here an in-process Go SDK server with one tool.
	server := mcp.NewServer(&mcp.Implementation{Name: "calc", Version: "1.0.0"}, nil)
	type args struct{ A, B int }
	mcp.AddTool(server, &mcp.Tool{Name: "add"}, func(_ context.Context, _ *mcp.CallToolRequest, in args) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint(in.A + in.B)}}}, nil, nil
	})
	live := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{JSONResponse: true}))
	defer live.Close()

	add := func(mode mcpvcrtest.Mode, client *mcp.Client, upstream string) {
		t := new(exampleT) // in a test: the *testing.T
		defer t.done()
		srv := mcpvcrtest.Proxy(t, cassette, upstream, mode)
		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: mcpvcrtest.Endpoint(srv)}, nil)
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		defer cs.Close()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"A": 2, "B": 3}})
		if err != nil {
			t.Fatalf("call: %v", err)
		}
		fmt.Println(mode, res.Content[0].(*mcp.TextContent).Text)
	}
	add(mcpvcrtest.ModeRecordOnly, mcp.NewClient(&mcp.Implementation{Name: "recording-client", Version: "1.0.0"}, nil), live.URL+"/mcp")
	live.Close() // the replay does without it
	add(mcpvcrtest.ModeReplayOnly, mcp.NewClient(&mcp.Implementation{Name: "my-client", Version: "2.0.0"}, nil), live.URL+"/mcp")
	// Output:
	// record-only 5
	// replay-only 5
}

// Cassette names a test's own cassette from t.Name(): each case of a
// table test gets one.
func ExampleCassette() {
	for _, name := range []string{"TestForecast", "TestForecast/rain_in_lima", "TestForecast/50%_off"} {
		t := &exampleT{name: name} // in a test: the *testing.T
		fmt.Println(filepath.ToSlash(mcpvcrtest.Cassette(t)))
	}
	// Output:
	// testdata/TestForecast.jsonl
	// testdata/TestForecast/rain_in_lima.jsonl
	// testdata/TestForecast/50__off.jsonl
}

// AfterCapture redacts an API key the client sends in its tool call
// before anything is stored; the replay still matches the client, which
// sends the key again.
func ExampleAfterCapture() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "mcpvcrtest-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	cassette := filepath.Join(dir, "weather.jsonl")
	const key = "sk-live-0042"

	server := mcp.NewServer(&mcp.Implementation{Name: "weather", Version: "1.0.0"}, nil)
	type args struct {
		City string `json:"city"`
		Key  string `json:"key"`
	}
	mcp.AddTool(server, &mcp.Tool{Name: "forecast"}, func(_ context.Context, _ *mcp.CallToolRequest, in args) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "sunny in " + in.City}}}, nil, nil
	})
	live := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{JSONResponse: true}))
	defer live.Close()

	redact := mcpvcrtest.AfterCapture(func(f *mcpvcrtest.Frame) { f.Redact(key) })
	for _, mode := range []mcpvcrtest.Mode{mcpvcrtest.ModeRecordOnly, mcpvcrtest.ModeReplayOnly} {
		t := new(exampleT) // in a test: the *testing.T
		srv := mcpvcrtest.Proxy(t, cassette, live.URL+"/mcp", mode, redact)
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "app", Version: "1.0.0"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: mcpvcrtest.Endpoint(srv)}, nil)
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "forecast", Arguments: map[string]any{"city": "Oslo", "key": key}})
		if err != nil {
			t.Fatalf("call: %v", err)
		}
		cs.Close()
		t.done()
		b, _ := os.ReadFile(cassette)
		fmt.Println(mode, res.Content[0].(*mcp.TextContent).Text, "key stored:", strings.Contains(string(b), key))
	}
	// Output:
	// record-only sunny in Oslo key stored: false
	// replay-only sunny in Oslo key stored: false
}

// Main goes in the TestMain of each package whose tests use Command: the
// test binary then serves the replays Command starts. (Not run: Main exits.)
func ExampleMain() {
	// main_test.go
	//
	//	func TestMain(m *testing.M) { mcpvcrtest.Main(m) }
	var testMain func(*testing.M) = mcpvcrtest.Main
	_ = testMain
}
