// Package probe is probe replay: it changes recorded answers so that the
// live client meets a situation its recording never had (a -32020 on a
// call, an empty or a repeated nextCursor, its session answered 404, a
// server request with a string id, a -32022 to server/discover, a
// resultType no revision defines, a 2025-03-26 batch, a response stream
// ended before its response, a subscriptions/listen stream the server
// ended),
// then judges what the client did next against the rule of its revision,
// on the wire, as chaos verdicts are judged. It works through replay's
// one extension point: a *Hook is a replayer.Hook, plugged in by setting
// it as a replayer.Server's Hook (mcpvcr replay --probe and
// mcpvcrtest.Probe do).
//
//	h := probe.New([]probe.Kind{probe.HeaderMismatch}, logger)
//	srv := &replayer.Server{Recordings: recs, Hook: h, Logger: logger}
//	// serve clients, then srv.Close()
//	ok := h.Write(os.Stderr, "") // each probe, its rule, what the client did, the verdict
//
// Each kind is placed at most once per replay, at the first request of
// the live client where its revision and transport allow it (see
// Kind.Allowed): the same recording and the same client give the same
// probes, whatever the timing. Every kind acts over Streamable HTTP
// (legacy sessions and 2026-07-28 exchanges); string-id, empty-cursor,
// repeated-cursor and unknown-result-type also over stdio, where a
// recorded line is rewritten at AtBefore and a page a probe answers is
// written at AtReceive; string-id and empty-cursor over HTTP+SSE.
//
// # Files
//
// One file per probe holds where it can be placed, how it changes the
// answer and how it judges: headermismatch.go (-32020 on tools/call),
// cursor.go (empty-cursor and repeated-cursor on a list), session404.go
// (a legacy session answered 404), stringid.go (a server request's
// number id sent as a string), discover.go (version-retry: -32022 on
// server/discover), resulttype.go (unknown-result-type on a 2026-07-28
// list page), batch.go (a 2025-03-26 server request in a batch with a
// ping), streamclosed.go (a 2026-07-28 call's stream ended at once, timed
// against Hook.Patience) and listen.go (listen-ended). probe.go holds the kinds, the Hook, which
// notes every client request and asks each probe in turn at each request
// (string-id and batch at each event), and the verdicts and the report
// (Hook.Write).
package probe
