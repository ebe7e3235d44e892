// Package mcpvcrtest replays mcpvcr cassettes inside go test, the way go-vcr
// made HTTP cassettes a habit: one call gives the client under test a
// recorded MCP server.
//
//	NewServer(t, cassette)        an *httptest.Server on 127.0.0.1, Streamable HTTP or HTTP+SSE as recorded
//	Transport(t, cassette)        an mcp.Transport that replays in memory (no socket, no process; synctest-safe)
//	Command(t, cassette)          an *exec.Cmd serving stdio (the test binary: TestMain calls Main)
//	Proxy(t, cassette, upstream)  record through to a live server, or replay, as the Mode says
//	Cassette(t)                   the test's own cassette: testdata/TestName/subtest.jsonl
//
// A complete test, file and all (client_test.go beside the client's code,
// the cassette recorded by mcpvcr record or by Proxy):
//
//	package client_test
//
//	import (
//		"context"
//		"testing"
//
//		"github.com/modelcontextprotocol/go-sdk/mcp"
//
//		"github.com/mcpvcr/mcpvcr/mcpvcrtest"
//	)
//
//	func TestListTools(t *testing.T) {
//		ctx := context.Background()
//		srv := mcpvcrtest.NewServer(t, "testdata/server.jsonl")
//		client := mcp.NewClient(&mcp.Implementation{Name: "my-client", Version: "1.0.0"}, nil)
//		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: mcpvcrtest.Endpoint(srv)}, nil)
//		if err != nil {
//			t.Fatal(err)
//		}
//		defer cs.Close()
//		tools, err := cs.ListTools(ctx, nil)
//		if err != nil {
//			t.Fatal(err)
//		}
//		if len(tools.Tools) == 0 {
//			t.Error("the recorded server lists no tools")
//		}
//	}
//
// A cassette is a .db file or a .jsonl export (what cassettes/ commits). All
// its sessions over the transport served are candidates: each client is
// matched to the session its frames single out, so one cassette of several
// runs that share their opening serves clients that differ later. Matching
// is tolerant by default (JSON-RPC ids, progress tokens and clientInfo do
// not count); Match adds rules or asks for exact matching, as mcpvcr
// replay's --match and --ignore do.
//
// # Lifecycle and failures
//
// Each function registers its own t.Cleanup: it ends the replay (held
// streams, pipes, the child process of a client that never closed), waits
// for every goroutine it started, and fails t with the replayer's diff for
// each client frame that matched nothing and the option that would have
// matched it, in Go: mcpvcrtest.Match("initialize:params.capabilities.extensions").
// The client got a JSON-RPC error -32019 for it meanwhile. Close the
// client in the test (defer, or a t.Cleanup registered after the call) or
// not at all: cleanup order does not matter.
//
// # Modes
//
// Proxy records or replays as go-vcr's recorder modes do, with their
// names: ModeRecordOnce (the default: record a missing cassette, replay an
// existing one), ModeReplayOnly (CI: never contact the server, a missing
// cassette or an unmatched frame fails the test, nothing is written),
// ModeReplayWithNewEpisodes (replay the tests the cassette holds, record
// and append the others), ModeRecordOnly (re-record) and ModePassthrough
// (forward, keep nothing). The mode is the Mode option, else the -mcpvcr
// test flag (go test ./mypkg -mcpvcr=record-only), else MCPVCR_MODE (across
// ./..., since test binaries that do not import this package lack the
// flag), else ModeRecordOnce. Replay, Record, ReplayOrRecord and Off are
// the names of earlier releases. NewServer, Transport and Command only
// replay.
//
// # Hooks
//
// AfterCapture sees every frame Proxy records before anything is stored,
// BeforeSave every frame before the cassette is written, BeforeReplay every
// server frame before a replay serves it. Frame.Redact puts the recorder's
// placeholder in place of a secret (and keeps the replay matching the
// client that sends it), Frame.Replace edits, Frame.Drop leaves a frame
// out, Frame.Discard the whole recording; Redact names more headers and
// query parameters to store as placeholders. A test that fails writes
// nothing.
//
// # Time
//
// A replay sends each frame as soon as its causes have arrived: as fast as
// possible, whatever the recorded gaps. Pace(1) keeps the recorded timing,
// Pace(0.5) halves it, Pace(2) doubles it; Clock(fake) paces with a clock
// the test advances (Transport), so nothing sleeps.
//
// # go-vcr
//
// Suites built on go-vcr can take a session as a go-vcr cassette:
// mcpvcr export SESSION --format go-vcr -o x.yaml writes go-vcr v4's
// format (view.WriteGoVCR), --format go-vcr-v2 go-vcr v2's. That is
// request/response fidelity only: no event timing, no stream breaks, and
// no traffic on a GET stream. Use this package when those matter.
//
// This package imports the MCP Go SDK; the mcpvcr binary does not.
package mcpvcrtest
