// Package chaos is chaos replay: faults drawn from a seed at places in
// each recorded session, injected into a replay, and judged by what the
// client does next. It works through replay's one extension point: a
// *Hook is a replayer.Hook, plugged in by setting it as a
// replayer.Server's Hook (mcpvcr replay --chaos and mcpvcrtest.Chaos do).
//
//	h := chaos.New(chaos.Config{Seed: 7}, logger)
//	srv := &replayer.Server{Recordings: recs, Hook: h, Logger: logger}
//	// serve clients, then srv.Close()
//	ok := h.Write(os.Stderr, "") // each fault, where, what the client did, the verdict
//
// The same seed and recording give the same plan (Config.Plan uses
// neither the clock nor the client); what is injected depends on what the
// client reaches.
//
// # Files
//
// plan.go holds the fault kinds (FaultKind, Allowed, Injected), Config
// and Fault, and the planner: where each kind can be placed in a
// recording and how a plan is drawn from the seed. run.go is the Hook:
// what it notes of each client request, and how each fault is injected
// into a Streamable HTTP or HTTP+SSE session (an answer of its own, a
// wait, a skipped, rewritten or cut event, a late result); pool.go
// injects into 2026-07-28 exchanges, stdio.go into stdio sessions, and
// reorder.go holds a notification back until the one recorded after it
// went. judge.go judges each fault by the requests that followed it
// (Verdict, Result) and writes the report (Hook.Write).
package chaos
