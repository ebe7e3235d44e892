// Package mcpvcrtest replays mcpvcr cassettes inside go test, the way go-vcr
// made HTTP cassettes a habit: one call gives the client under test a
// recorded MCP server.
//
//	NewServer(t, cassette)        an *httptest.Server on 127.0.0.1, Streamable HTTP or HTTP+SSE as recorded
//	Transport(t, cassette)        an mcp.Transport that replays in memory (no socket, no process; synctest-safe)
//	Command(t, cassette)          an *exec.Cmd serving stdio (the test binary: TestMain calls Main)
//	Proxy(t, cassette, upstream)  record through to a live server, or replay, as the Mode says
//
// A cassette is a .db file or a .jsonl export (what cassettes/ commits). All
// its sessions over the transport served are candidates: each client is
// matched to the session its frames single out, so one cassette of several
// runs that share their opening serves clients that differ later. Matching
// is tolerant by default (JSON-RPC ids, progress tokens and clientInfo do
// not count); Match adds rules or asks for exact matching, as mcpvcr
// replay's --match and --ignore do.
//
// # Lifecycle
//
// Each function registers its own t.Cleanup: it ends the replay (held
// streams, pipes, the child process of a client that never closed), waits
// for every goroutine it started, and fails t with the replayer's diff for
// each client frame that matched nothing; the client got a JSON-RPC error
// -32019 for it meanwhile. Close the client in the test (defer, or a
// t.Cleanup registered after the call) or not at all: cleanup order does not
// matter.
//
// # Modes
//
// Proxy records or replays as a Mode option says, else the -mcpvcr test
// flag (go test ./mypkg -mcpvcr=record; across ./... set MCPVCR_MODE
// instead, since test binaries that do not import this package lack the
// flag), else MCPVCR_MODE, else Replay:
// Replay, Record, ReplayOrRecord (record when the cassette does not exist)
// and Off (forward, keep nothing), as go-vcr's recorder modes. NewServer,
// Transport and Command only replay.
//
// # go-vcr
//
// Suites built on go-vcr can take a session as a go-vcr v2 cassette:
// mcpvcr export SESSION --format go-vcr -o x.yaml (store.WriteGoVCR). That
// is request/response fidelity only: no event timing, no stream breaks, and
// no traffic on a GET stream. Use this package when those matter.
//
// This package imports the MCP Go SDK; the mcpvcr binary does not.
package mcpvcrtest
