// Command bench measures what mcpvcr costs on the wire and on disk, and
// prints one table.
//
// Every load is run, on loopback only, four ways:
//
//	direct       the client talks to a minimal MCP-shaped server
//	passthrough  through a plain standard-library proxy: httputil.ReverseProxy
//	             (full duplex, pooled connections) for HTTP, io.Copy for stdio
//	record       through mcpvcr's recorder (recorder.HTTP, recorder.Stdio)
//	             writing a real store.DB cassette in a temporary directory
//	replay       against mcpvcr's replayer.Server serving that recording
//
// and the table gives each a median over several rounds, run in alternating
// order, with the ratios of record and replay to passthrough. For HTTP the
// server, the passthrough proxy, the recorder and the replayer are each a
// process of their own, as in use (one process would leave it to the Go
// scheduler whether the client runs while a proxy is busy, see child),
// each proxy and replayer a new process for each run, as a recorder is
// for each recording (-long-pass keeps one passthrough for all rounds, as
// the bench did before, and -long-lived the passthrough, the floor and
// record, to compare), and a "proxy CPU/frame" row gives the CPU time the
// proxy (or replayer) process used per frame it forwarded, from /proc: on
// a machine with few CPUs, what recording costs the rest of the machine.
// For stdio the server is a process, and the proxy runs in this one. The
// loads: a JSON tools/call answered with a 2 KB result, the same call
// answered with an SSE stream of 100 events, a stdio request and response, and a
// stdio request answered with 100 notifications and a response; each at
// concurrency 1 and 8. Then store ingest (Append and Flush of 200 B, 2 KB
// and 64 KB frames into one session) and the peak RSS of a recorder child
// process forwarding a long SSE stream (1 GB with -rss-mb 1024). Last,
// replay start: mcpvcr replay --stdio without SESSION, a new process per
// round, on generated cassettes of 100 and 10,000 stdio sessions of 64
// frames that share their opening frames; the rows give the time from
// starting the process to its answer to initialize, and its peak RSS
// then. The same for mcpvcr replay --listen on cassettes of 100 and 5,000
// Streamable HTTP sessions and of as many HTTP+SSE sessions of 12 frames
// (rows
// "replay start http" and "replay start sse"), with the time to the
// listening line too; the client initializing has another clientInfo
// than the recording. -gen-cassette FILE writes such a cassette as JSONL
// (-gen-transport http or sse for the HTTP ones).
//
// With -mcpsnoop PATH every HTTP and stdio load also runs through that
// mcpsnoop binary (another MCP recording proxy: its HTTP proxy, a process
// per run, and its stdio shim, a process between the client and the
// server) in the same rounds, with a MCPSNOOP and a SNOOP/PASS column, a
// "frames lost" row per load (what the client did not get, and what
// mcpsnoop says it dropped from its trace), and targets saying whether
// record is ahead of it. Build mcpsnoop outside this module, from its
// repository at the version to compare with.
//
// With -floor every HTTP and stdio load also runs, in the same rounds,
// through record into a sink that gives IDs and keeps nothing (a FLOOR
// and a FLOOR/PASS column): the recorder's own work without the store,
// which no store can take record below. No target is checked on it.
//
// With -samples DIR each timed request's latency and time to its first
// SSE event go to a file per load and mode in DIR, as tab-separated
// values, for a look at what a median hides.
//
// Run it with make bench, or
//
//	go run ./bench [-rounds 5] [-rss-mb 256] [-quick] [-mcpsnoop PATH] [-floor] [-samples DIR]
//
// The program is also its own peers: with -peer stdio it is the minimal
// stdio server, with -peer http-peer, http-pass, http-record or
// http-replay the HTTP server, the passthrough, the recorder or the
// replayer. Those modes are for its own use. With -cpuprofile F each of
// them writes its own profile too, to F.KIND.N.
package main
