// Package mcptest provides real MCP peers for mcpvcr's tests.
//
// It holds a deterministic MCP server built on the Go SDK ([NewServer],
// also compiled as the child-process program in ./testserver and built by
// [BuildServer]), a matching deterministic client ([NewClient]), and a
// [Script] that drives one session through every feature the server offers
// and returns a [Transcript]. A test records a live run, replays it, and
// requires both transcripts to be equal:
//
//	live := mcptest.Run(ctx, t, transport, "2025-06-18")
//	replayed := mcptest.Run(ctx, t, replayTransport, "2025-06-18")
//	if diff := cmp.Diff(live, replayed); diff != "" { … }
//
// Two server variants exist: [V1] and [V2], "the next release", which
// changes the input schema of tool add, the version reported by tool info
// and adds tool multiply, for diff tests.
//
// [Everything] and [EverythingHTTP] start the reference TypeScript server
// @modelcontextprotocol/server-everything from the repository's
// node_modules (installed with npm ci). When node or the package is
// missing they skip the test, unless MCPVCR_REQUIRE_PEERS=1 (see
// [RequirePeers]), in which case they fail it.
//
// For OAuth: [StartAuthServer] is an authorization server (approving at
// once, or after a login page or a redirect to its login UI; RFC 9207
// iss; metadata at the RFC 8414 or OpenID locations, or none), and
// [StartProtected] an OAuth-protected MCP server in front of it (or, for
// 2025-03-26, one whose own origin is the authorization server). Their
// clients: the Go SDK's authorization code handler ([OAuthHandler], as a
// browser or headless), the TypeScript SDK's OAuthClientProvider
// ([TSOAuthRun], by node) and the Go SDK's conformance client
// ([ConformanceClient]).
//
// The server's tools:
//
//	echo      text content echoing argument text
//	add       structured output {sum}; inputs a, b (V2: also c, optional)
//	info      structured output {name, version}
//	progress  notifications/progress steps times for the request's token
//	log       notifications/message at debug…error, then one progress "logged"
//	sample    sampling/createMessage (multi round-trip in 2026-07-28)
//	elicit    elicitation/create (multi round-trip in 2026-07-28)
//	roots     roots/list (multi round-trip in 2026-07-28)
//	slow      progress "started", then blocks until cancelled
//	fail      a result with isError set
//	multiply  V2 only: structured output {product}
//
// Options add what the audit's raw clients need (see [ServerConfig]):
// tool toggle, which changes the tool list (Toggle); tool lookup, whose
// integer argument id is annotated x-mcp-header "Id" (HeaderTool); and
// lists ended with nextCursor "" (EmptyCursor).
package mcptest
