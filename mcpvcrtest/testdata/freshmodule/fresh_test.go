// Package fresh is a module outside mcpvcr's that uses only its documented
// API: mcpvcrtest's TestFreshModule copies it to a temporary directory, with
// a replace directive pointing at the repository, and runs go test there.
package fresh_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	recorder2 "gopkg.in/dnaeon/go-vcr.v2/recorder"
	"gopkg.in/dnaeon/go-vcr.v4/pkg/cassette"
	"gopkg.in/dnaeon/go-vcr.v4/pkg/recorder"

	"github.com/mcpvcr/mcpvcr/mcpvcrtest"
)

// TestMain lets mcpvcrtest.Command run this test binary as the server.
func TestMain(m *testing.M) { mcpvcrtest.Main(m) }

// The same eight client runs against the same server, recorded once over
// Streamable HTTP and once over stdio (copied from the repository's
// cassettes/), and one run exported with mcpvcr export --format go-vcr
// (go-vcr v4's cassette) and --format go-vcr-v2.
const (
	httpCassette    = "testdata/multi-gosdk-http-json.jsonl"
	stdioCassette   = "testdata/multi-gosdk-stdio.jsonl"
	goVCRCassette   = "testdata/session4"    // .yaml
	goVCR2Cassette  = "testdata/session4-v2" // .yaml
	recordedAddress = "http://127.0.0.1:33781/mcp"
)

// client is the client under test: its clientInfo is not the recording's.
func client() *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "fresh-module-client", Version: "0.1.0"}, &mcp.ClientOptions{
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return nil, errors.New("not used")
		},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return nil, errors.New("not used")
		},
	})
}

// run does what recorded run 3 did: list the tools, add 40 and 2.
func run(t *testing.T, tr mcp.Transport) string {
	t.Helper()
	ctx := context.Background()
	cs, err := client().Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": 40, "b": 2}})
	if err != nil {
		t.Fatalf("tools/call add: %v", err)
	}
	return fmt.Sprintf("tools [%s]; add(40, 2) = %s", strings.Join(names, " "), res.Content[0].(*mcp.TextContent).Text)
}

func TestReplay(t *testing.T) {
	srv := mcpvcrtest.NewServer(t, httpCassette)
	got := map[string]string{
		"NewServer":         run(t, &mcp.StreamableClientTransport{Endpoint: mcpvcrtest.Endpoint(srv)}),
		"Transport (http)":  run(t, mcpvcrtest.Transport(t, httpCassette)),
		"Transport (stdio)": run(t, mcpvcrtest.Transport(t, stdioCassette)),
		"Command":           run(t, &mcp.CommandTransport{Command: mcpvcrtest.Command(t, stdioCassette)}),
	}
	// go-vcr v4 with a matcher on method and URL, as go-vcr v2's default:
	// its own default compares bodies too, and this client's clientInfo
	// is not the recording's.
	vcr, err := recorder.New(goVCRCassette, recorder.WithMode(recorder.ModeReplayOnly), recorder.WithSkipRequestLatency(true),
		recorder.WithMatcher(func(r *http.Request, i cassette.Request) bool { return r.Method == i.Method && r.URL.String() == i.URL }))
	if err != nil {
		t.Fatalf("go-vcr v4: %v", err)
	}
	defer vcr.Stop()
	got["go-vcr"] = run(t, &mcp.StreamableClientTransport{
		Endpoint:   recordedAddress, // the recorded server's address
		HTTPClient: vcr.GetDefaultClient(),
		MaxRetries: -1,
	})
	vcr2, err := recorder2.NewAsMode(goVCR2Cassette, recorder2.ModeReplaying, nil)
	if err != nil {
		t.Fatalf("go-vcr v2: %v", err)
	}
	defer vcr2.Stop()
	vcr2.SkipRequestLatency = true
	got["go-vcr v2"] = run(t, &mcp.StreamableClientTransport{
		Endpoint:   recordedAddress,
		HTTPClient: &http.Client{Transport: vcr2},
		MaxRetries: -1,
	})
	want := got["NewServer"]
	for _, how := range []string{"NewServer", "Transport (http)", "Transport (stdio)", "Command", "go-vcr", "go-vcr v2"} {
		t.Logf("%-17s %s", how, got[how])
		if got[how] != want {
			t.Errorf("%s: %s; want %s, as NewServer", how, got[how], want)
		}
	}
	if !strings.HasSuffix(want, `add(40, 2) = {"sum":42}`) {
		t.Errorf("the replays agree on a wrong answer: %s", want)
	}
}
