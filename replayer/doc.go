// Package replayer serves recorded MCP sessions as the server they were
// recorded from, over stdio (ServeStdio) or HTTP (Server is an
// http.Handler: Streamable HTTP or the 2024-11-05 HTTP+SSE transport, as
// recorded). It does nothing else: comparing recordings is package diff,
// driving a live server is package verify, seeded faults are package
// chaos, which plugs into the Hook.
//
// # Ownership and lifecycle
//
// A Server owns nothing but what it is given: Recordings, plain data from
// package store (store.LoadFile or store.DB.Recordings), or a Source
// reading a cassette as needed (Server.Load), which it never changes and
// which must not change while it serves. One Server serves any number of
// clients at once; each gets its own cursor through the recordings, so a
// cassette can be replayed again and again. Close releases everything:
// it ends held HTTP streams and makes ServeStdio return. Reports returns
// what each HTTP client did; ServeStdio returns its client's Report.
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
// aside; see Match); the recorded answers go back with the client's ids,
// and the server's own frames are released once their causes have
// arrived. A frame that matches nothing is answered with a JSON-RPC
// error (NoMatchCode) and reported as a Mismatch.
//
// # Layout
//
// The transport-free core: engine.go (one recorded session replayed for
// one client), cursor.go (a client followed through its candidate
// sessions; cursorlazy.go, those read from a Source as they come in
// play), emit.go and order.go (what is released, in what order),
// rewrite.go (the client's ids in the recorded frames), stall.go (a
// request whose recorded answer waits for what the client has not
// sent), tasks.go (2025-11-25 tasks, replayed by state), source.go and
// atonce.go (lazy reading). The transports drive it: stdio.go, and for
// HTTP route.go (what a request is), http*.go, reply.go (the one answer
// writer), pool.go (2026-07-28 exchanges), door.go (answers by request
// shape: recorded refusals and invented answers) and strict.go. hook.go
// is the one extension point, faults.go its first implementation.
//
// What the core reads is built elsewhere, once per recording and shared
// by every client: internal/script (a recording as the script replay
// follows: frames linked by the causal model of internal/causal, which
// decides what answers, cancels or belongs to what, and the index
// entries), internal/match (how frames compare), internal/replayindex
// (the cassette's index, read through its Tree and Exchanges) and
// internal/replayreport (what a replay reports). The OAuth dance beside
// MCP is not replayer's: an OAuth handler in front of the Server
// answers it, as mcpvcr replay --listen and mcpvcrtest do.
//
// # The hook
//
// A Server's Hook is called at each point where a fault can act (a
// request arrives, an event or a JSON answer is about to go or went, a
// stream opens, resumes or ends, a session starts or may be retired)
// with a Point saying where (the live Session, the recorded stream and
// event, the live request), and answers with an Action saying what to do
// (wait, cut, skip, replace, answer with a status). Faults, the hand
// fault options, is the first Hook; package chaos is another; replayer
// never imports it.
package replayer
