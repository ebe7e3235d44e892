// Package replayer serves recorded MCP sessions as the server they were
// recorded from, over stdio (ServeStdio) or HTTP (Server is an
// http.Handler: Streamable HTTP or the 2024-11-05 HTTP+SSE transport, as
// recorded). It does nothing else: comparing recordings is package diff,
// driving a live server is package verify.
//
// # Ownership and lifecycle
//
// A Server owns nothing but what it is given: Recordings, plain data from
// package store (store.LoadFile or store.DB.Recordings), which it never
// changes and which must not change while it serves. One Server serves
// any number of clients at once; each gets its own cursor through the
// recordings, so a cassette can be replayed again and again. Close
// releases everything: it ends held HTTP streams and makes ServeStdio
// return. Reports returns what each HTTP client did; ServeStdio returns
// its client's Report.
//
// # Walkthrough
//
//	recs, err := store.LoadFile(ctx, "cassettes/gosdk-http-2025-06-18.jsonl")
//	if err != nil { ... }
//	srv := &replayer.Server{Recordings: recs}
//	ts := httptest.NewServer(srv)
//	defer ts.Close()
//	defer srv.Close() // runs first: ends held streams so that ts can close
//	// point the client under test at ts.URL + "/mcp"
//
// Each client frame is matched to a recorded client frame with the same
// method and params (ids, progress tokens, trace context and clientInfo
// aside); the recorded answers go back with the client's ids, and the
// server's own frames are released once their causes have arrived. A
// frame that matches nothing is answered with a JSON-RPC error
// (NoMatchCode) and reported as a Mismatch.
//
// # Files
//
// The transport-free core knows nothing of stdio or HTTP: engine.go (one
// recorded session replayed for one client), cursor.go (a client followed
// through its candidate sessions; cursorlazy.go, those read from a
// Source as they come in play), match.go (how frames compare;
// internal/jsonval decodes, keys and diffs the values), rules.go (the
// rules stored with the sessions), source.go (a cassette's sessions
// loaded as needed, following their candidate tree), atonce.go (the
// index of what HTTP replay answers from every session at once),
// recording.go,
// mismatch.go, stall.go, rewrite.go, server.go (Server and its settings),
// options.go (Load) and report.go (what a replay reports). The transports
// drive it: stdio.go, http*.go (httpstall.go: a followed stream's waits
// on what the client has not sent) with strict.go (--strict, one check
// called where a server checks; the rules of each revision are
// internal/mcpwire's StrictHTTP), pool.go (the 2026-07-28
// stateless HTTP), door.go (the recorded refusals and answers by request
// shape; what a request's shape is, internal/reqshape's) and endpoint.go. The OAuth dance beside MCP (metadata,
// registration, token, authorization) is not replayer's: an
// authwire.Handler in front of the Server answers it, as mcpvcr replay
// --listen and mcpvcrtest do.
//
// Lazy reading goes through two interfaces of internal/replayindex:
// replayindex.Tree (the candidate tree) and replayindex.Exchanges (the
// rows of atonce.go), each stored in the cassette's cache or held in
// memory; replayer builds what they hold (the hashes of each session's
// frames under the matching rules, the rows) and reads through them.
//
// # The hook
//
// hook.go is the one extension point: a Server's Hook is called at each
// point where a fault can act (a request arrives, an event or a JSON
// answer is about to go or went, a stream opens, resumes or ends, a
// session starts or may be retired) with a Point saying where (the live
// Session, the recorded stream and event, the live request), and
// answers with an Action saying what to do (wait, cut, skip, replace,
// answer with a status). Package chaos is a Hook; replayer never imports
// it.
//
// tasks.go replays 2025-11-25 tasks by state (docs/tasks.md). Which
// frame answers, cancels or belongs to which request or task is never
// replayer's to decide: engine.go and tasks.go read it from the session's
// model in internal/causal, and only serve what it says.
package replayer
