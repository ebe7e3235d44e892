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
// client reaches, never on timing: a live session draws from the plan of
// the recorded session it began with, whichever candidate replay follows
// later.
//
// # Files
//
// One file per fault kind holds where that kind can be placed in a
// recording (sites…) and how the client is judged after it (judge…):
// cut.go (cut, cut-resumable, resume-404, resume-late), retry.go,
// lateresult.go, closeearly.go, delay.go (delay, drop-priming),
// expire.go, refuseget.go, unavailable.go (503), reorder.go (which
// also holds a notification back until the one recorded after it went),
// noanswer.go (reset_peer, EMPTY_RESPONSE), slicer.go, timeout.go
// (timeout, stall), garble.go (MALFORMED_RESPONSE_CHUNK, error-result),
// limitdata.go (limit_data), redeliver.go, earlyping.go (early-ping) and
// listchanged.go (list-changed), laterequest.go (late-request, over
// stdio); stdio.go also holds exit. plan.go holds
// the kinds (FaultKind, Allowed, Injected, OptIn), Config, Fault and the
// planner that draws from the seed among the sites, and pins each live
// session to the plan of the recorded session it began with; run.go is the
// Hook, which notes each client request and injects the faults at the
// points of a Streamable HTTP or HTTP+SSE session (an answer of its own,
// a wait, a skipped, rewritten or cut event, a late result); pool.go
// injects into 2026-07-28 exchanges and stdio.go into stdio sessions;
// client.go tells which client sent what (the connection a request came
// on, and whether a 404 for its session had come on it before) and which
// requests a client still waits for; judge.go judges each fault by the
// requests of the client that met it (Verdict, Result) and writes the
// report (Hook.Write).
package chaos
