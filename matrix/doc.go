// Package matrix is mcpvcr's matrix of real MCP clients × real MCP servers
// × transports × protocol revisions × scenarios (issue #46, design §8
// "Testing the tester"). It holds no product code: its tests build the
// mcpvcr binary once (with -race) and drive it exactly as a user would,
// recording fresh sessions during the run (never from cassettes/) and then
// checking properties that need no expected output:
//
//   - P1 replay identity: the same client with another clientInfo gets
//     from mcpvcr replay what it got live; nothing unmatched.
//   - P2 order (stdio): through mcpvcr record in front of mcpvcr replay,
//     server frames come in recorded order and none is held back until a
//     client frame recorded after it.
//   - P3 resumption: for every SSE answer with event ids and every cut
//     point (replay --cut), a resuming client ends with the P1 results and
//     replay reports the resumption; a chaos run (cut-resumable) agrees.
//   - P4 verify self: each recording verified against its own live server
//     exits 0, every run.
//   - P5 answers: a client that answers a server request differently is
//     reported by replay.
//   - P6 cancellation: a client that cancels where the recorded one did
//     gets every recorded frame, before and after, in recorded order.
//   - P7 tasks: a task the server ran replays to the same client polling
//     twice as often, half as often and not at all (it waits for the
//     status notifications), fast and paced: the live states and result,
//     nothing unmatched. P2 holds there for the frames other than the
//     task's polls and status notifications, which replay sends by state
//     and on the task's own timeline (tasks_test.go).
//
// The clients: the Go SDK (v1.8.0) in process and as a process (this test
// binary run again), the TypeScript SDK client (testdata/client.mjs) and
// Inspector's CLI. The servers: the Go SDK test server (internal/mcptest)
// stateful over stdio, Streamable HTTP and HTTP+SSE and stateless over
// Streamable HTTP, server-everything over the same three, and a
// TypeScript SDK server written here (testdata/server.mjs) over stdio and
// Streamable HTTP. The task scenarios (task-server, task-client) are
// server-everything's with the TypeScript SDK client, over stdio and
// Streamable HTTP. TestMatrixCells lists every cell and why the others
// are not formed.
//
// Every cell is a subtest named client/server/transport/revision/scenario,
// each property a subtest of it. Cells a pair cannot form say why in the
// log. Plain go test runs a cheap slice; the whole matrix runs with
//
//	make matrix   # go test -race ./matrix -matrix.full
//
// or MATRIX_FULL=1; -matrix.verify-runs, -matrix.cuts and
// -matrix.chaos-seeds bound P4 and P3 for a quicker pass. The task cells
// alone:
//
//	go test -race ./matrix -matrix.full -run 'TestMatrix$/tssdk/everything/.*/task'
//
// MCPVCR_REQUIRE_PEERS=1 makes a missing node peer fail
// the test instead of skipping it.
package matrix
