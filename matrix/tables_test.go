package matrix

import (
	"slices"
	"strings"
	"testing"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
)

// An endpoint is where a client connects: a server command it starts
// (stdio) or a URL (http: Streamable HTTP; sse: 2024-11-05 HTTP+SSE).
type endpoint struct {
	transport string
	argv      []string
	url       string
}

// A call is one run of a client.
type call struct {
	rev  string // protocol revision to ask for ("" where the client cannot choose)
	plan []step
	info string // clientInfo name
	alt  bool   // answer server requests otherwise (P5)
	// notes is how many notifications outside the steps' progress (on
	// the GET stream, say) the live run saw: a replayed client waits for
	// as many (at most waitLimit) before it closes, so that a resumption
	// has the time to bring them.
	notes int
}

// A run is what a client saw and, over stdio, what the command it started
// (mcpvcr record or replay) wrote to stderr and exited with (-1: unknown).
type run struct {
	t      Transcript
	stderr string
	code   int
}

// A client is a real MCP client of the matrix.
type client struct {
	name       string
	transports []string
	// revisions are those the client can ask for; nil: any.
	revisions []string
	// oneShot clients make one session per invocation and can only list
	// or call (Inspector's CLI): they run single-step plain plans.
	oneShot bool
	// answers: the client answers server requests and can answer them
	// otherwise (P5).
	answers bool
	// dropsOnCut, when set, says why the client does not carry on after
	// a cut stream it resumed: P3 then checks replay's side (the cut
	// reported, the resumption served, nothing invented) but not the
	// client's results.
	dropsOnCut string
	// peer is what the client needs installed (node and npm peers); it
	// skips the cell, or fails it with MCPVCR_REQUIRE_PEERS=1.
	peer func(testing.TB)
	run  func(t *testing.T, ep endpoint, c call) run
}

var clients = []client{
	{name: "gosdk", transports: []string{"stdio", "http", "sse"}, answers: true, run: goClient},
	{name: "gosdk-process", transports: []string{"stdio", "http", "sse"}, answers: true, run: goProcessClient},
	{name: "tssdk", transports: []string{"stdio", "http", "sse"}, revisions: []string{mcptest.V20251125}, answers: true,
		peer: func(tb testing.TB) { mcptest.Everything(tb) }, run: tsClient},
	{name: "inspector", transports: []string{"stdio", "http", "sse"}, revisions: []string{mcptest.V20251125}, oneShot: true,
		dropsOnCut: "Inspector's CLI 2.12.0 takes the SDK transport's error for a cut stream as a lost connection (its status becomes \"error\") even though the SDK resumes it, and then lists nothing (tools/list prints {\"tools\": []} without asking)",
		peer:       func(tb testing.TB) { mcptest.InspectorCLI(tb) }, run: inspectorClient},
}

// A server is a real MCP server of the matrix.
type server struct {
	name string
	// family names its tools: "gosdk" (internal/mcptest's test server) or
	// "everything" (server-everything).
	family     string
	transports []serverTransport
}

// A serverTransport is one way to reach a server.
type serverTransport struct {
	name      string // stdio, http or sse
	revisions []string
	// stateless servers (legacy revisions) cannot send a request to the
	// client nor learn of a cancellation.
	stateless bool
	// start starts the server (HTTP) or says how to (stdio); the server
	// lives until the test ends.
	start func(tb testing.TB) endpoint
}

var legacy = []string{mcptest.V20241105, mcptest.V20250326, mcptest.V20250618, mcptest.V20251125}

func goServerHTTP(args ...string) func(tb testing.TB) endpoint {
	return func(tb testing.TB) endpoint {
		u := mcptest.StartServer(tb, args...)
		tr := "http"
		if strings.HasSuffix(u, "/sse") {
			tr = "sse"
		}
		return endpoint{transport: tr, url: u}
	}
}

var servers = []server{
	{name: "gosdk-stateful", family: "gosdk", transports: []serverTransport{
		{name: "stdio", revisions: mcptest.Versions, start: func(tb testing.TB) endpoint {
			return endpoint{transport: "stdio", argv: []string{mcptest.BuildServer(tb), "-stubborn"}}
		}},
		{name: "http", revisions: legacy, start: goServerHTTP("-transport", "http", "-eventstore", "-stubborn")},
		{name: "sse", revisions: legacy, start: goServerHTTP("-transport", "sse", "-stubborn")},
	}},
	{name: "gosdk-stateless", family: "gosdk", transports: []serverTransport{
		{name: "http", revisions: []string{mcptest.V20251125, mcptest.V20260728}, stateless: true,
			start: goServerHTTP("-transport", "http", "-stateless", "-stubborn")},
	}},
	{name: "everything", family: "everything", transports: []serverTransport{
		{name: "stdio", revisions: legacy, start: func(tb testing.TB) endpoint {
			return endpoint{transport: "stdio", argv: mcptest.Everything(tb)}
		}},
		{name: "http", revisions: legacy, start: func(tb testing.TB) endpoint {
			return endpoint{transport: "http", url: mcptest.EverythingHTTP(tb, mcptest.StreamableHTTP)}
		}},
		{name: "sse", revisions: legacy, start: func(tb testing.TB) endpoint {
			return endpoint{transport: "sse", url: mcptest.EverythingHTTP(tb, mcptest.SSE)}
		}},
	}},
	// The TypeScript SDK server written for the matrix: the Go SDK test
	// server's tools (family gosdk) but for reconnect and script.
	{name: "ts-server", family: "ts", transports: []serverTransport{
		{name: "stdio", revisions: legacy, start: func(tb testing.TB) endpoint {
			node, script := tsServerScript(tb)
			return endpoint{transport: "stdio", argv: []string{node, script, "stdio"}}
		}},
		{name: "http", revisions: legacy, start: startTSServer},
	}},
}

// tsServerScenarios are the scenarios of family gosdk the TypeScript
// server's tools play too.
var tsServerScenarios = []string{"list", "echo", "basic", "progress", "sampling", "elicitation", "roots", "cancel-honoured", "cancel-ignored"}

func init() {
	for _, sc := range scenarios {
		if slices.Contains(tsServerScenarios, sc.name) {
			sc.plans["ts"] = sc.plans["gosdk"]
		}
	}
}

// A scenario is what a client does, in each server family's tools.
type scenario struct {
	name  string
	plans map[string][]step // by server family; absent: the family has no such feature
	// serverRequests: the server asks the client (sampling, elicitation,
	// roots): P5 applies, and a stateless legacy server cannot.
	serverRequests bool
	// cancels: a call is cancelled mid-progress: P6 applies.
	cancels bool
	// since is the first revision with the feature, if any.
	since string
}

var scenarios = []scenario{
	{name: "list", plans: map[string][]step{
		"gosdk":      {{Op: "list"}},
		"everything": {{Op: "list"}},
	}},
	{name: "echo", plans: map[string][]step{
		"gosdk":      {{Op: "call", Tool: "echo", Args: map[string]any{"text": "hello"}}},
		"everything": {{Op: "call", Tool: "echo", Args: map[string]any{"message": "hello"}}},
	}},
	{name: "basic", plans: map[string][]step{
		"gosdk":      {{Op: "list"}, {Op: "call", Tool: "echo", Args: map[string]any{"text": "hello"}}, {Op: "call", Tool: "add", Args: map[string]any{"a": 2, "b": 3}}, {Op: "call", Tool: "fail"}},
		"everything": {{Op: "list"}, {Op: "call", Tool: "echo", Args: map[string]any{"message": "hello"}}, {Op: "call", Tool: "get-sum", Args: map[string]any{"a": 2, "b": 40}}, {Op: "call", Tool: "get-structured-content", Args: map[string]any{"location": "New York"}}},
	}},
	{name: "progress", plans: map[string][]step{
		"gosdk":      {{Op: "call", Tool: "progress", Args: map[string]any{"steps": 3}, Progress: true, WaitFor: 3}},
		"everything": {{Op: "call", Tool: "trigger-long-running-operation", Args: map[string]any{"duration": 0.3, "steps": 3}, Progress: true, WaitFor: 3}},
	}},
	{name: "sampling", serverRequests: true, plans: map[string][]step{
		"gosdk":      {{Op: "call", Tool: "sample", Args: map[string]any{"prompt": "Say hello."}}},
		"everything": {{Op: "call", Tool: "trigger-sampling-request", Args: map[string]any{"prompt": "Say hello.", "maxTokens": 10}}},
	}},
	{name: "elicitation", serverRequests: true, since: mcptest.V20250618, plans: map[string][]step{
		"gosdk":      {{Op: "call", Tool: "elicit"}},
		"everything": {{Op: "call", Tool: "trigger-elicitation-request"}},
	}},
	{name: "roots", serverRequests: true, plans: map[string][]step{
		"gosdk":      {{Op: "call", Tool: "roots"}},
		"everything": {{Op: "call", Tool: "get-roots-list"}},
	}},
	// cancel-honoured: the server stops at the cancellation (the Go SDK
	// test server's slow); server-everything honours none.
	{name: "cancel-honoured", cancels: true, plans: map[string][]step{
		"gosdk": {{Op: "call", Tool: "slow", Progress: true, CancelAt: 1}, {Op: "call", Tool: "echo", Args: map[string]any{"text": "after"}}},
	}},
	// cancel-ignored: the server goes on after the cancellation (the Go
	// SDK test server's stubborn; server-everything's long operation).
	{name: "cancel-ignored", cancels: true, plans: map[string][]step{
		"gosdk":      {{Op: "call", Tool: "stubborn", Progress: true, CancelAt: 1, WaitFor: 2}, {Op: "call", Tool: "echo", Args: map[string]any{"text": "after"}}},
		"everything": {{Op: "call", Tool: "trigger-long-running-operation", Args: map[string]any{"duration": 1.2, "steps": 6}, Progress: true, CancelAt: 2, WaitFor: 6}, {Op: "call", Tool: "echo", Args: map[string]any{"message": "after"}}},
	}},
	// reconnect: with an event store the Go SDK test server closes the
	// call's stream mid-call and the client resumes it (GET with
	// Last-Event-ID).
	{name: "reconnect", plans: map[string][]step{
		"gosdk": {{Op: "call", Tool: "reconnect", Progress: true, WaitFor: 2}},
	}},
	// script: mcptest.Script, every feature of the Go SDK test server
	// (logging, resources, prompts, sampling, elicitation, roots, a
	// cancelled call, a reconnect), for the Go SDK client only.
	{name: "script", serverRequests: true, cancels: true, plans: map[string][]step{
		"gosdk": {{Script: true}},
	}},
}

// A cell is one client × server × transport × revision × scenario.
type cell struct {
	client    client
	server    server
	transport serverTransport
	rev       string
	scenario  scenario
	plan      []step
}

func (c cell) name() string {
	return strings.Join([]string{c.client.name, c.server.name, c.transport.name, c.rev, c.scenario.name}, "/")
}

// cannot says why the pair cannot form the cell, or "".
func (c cell) cannot() string {
	switch {
	case !slices.Contains(c.client.transports, c.transport.name):
		return c.client.name + " does not speak " + c.transport.name
	case c.plan == nil:
		return c.server.name + " has no " + c.scenario.name + " feature"
	case c.scenario.since != "" && c.rev < c.scenario.since:
		return c.scenario.name + " exists from " + c.scenario.since
	case c.transport.stateless && c.scenario.serverRequests && !mcptest.Modern(c.rev):
		return "a stateless server cannot send requests to the client before 2026-07-28"
	case c.transport.stateless && c.scenario.cancels && !mcptest.Modern(c.rev):
		return "a stateless server does not learn of a cancellation before 2026-07-28"
	case taskCannot(c) != "":
		return taskCannot(c)
	}
	for _, s := range c.plan {
		if s.Script && c.client.name != "gosdk" {
			return "mcptest.Script runs in the Go SDK client only"
		}
		if c.client.oneShot && (len(c.plan) > 1 || !s.plain()) {
			return c.client.name + " runs one plain list or call per session"
		}
	}
	return ""
}

// cells returns every cell of the matrix, formable or not.
func cells() []cell {
	var out []cell
	for _, cl := range clients {
		for _, sv := range servers {
			for _, tr := range sv.transports {
				revs := tr.revisions
				if cl.revisions != nil {
					revs = nil
					for _, r := range tr.revisions {
						if slices.Contains(cl.revisions, r) {
							revs = append(revs, r)
						}
					}
				}
				for _, rev := range revs {
					for _, sc := range scenarios {
						out = append(out, cell{client: cl, server: sv, transport: tr, rev: rev, scenario: sc, plan: sc.plans[sv.family]})
					}
				}
			}
		}
	}
	return out
}

// slice is the cheap part of the matrix plain go test runs: per
// client, a few cells at revision 2025-11-25.
func (c cell) inSlice() bool {
	if c.client.name == "gosdk-process" && c.rev == mcptest.V20260728 {
		return c.server.name == "gosdk-stateless" && c.scenario.name == "sampling"
	}
	if c.rev != mcptest.V20251125 {
		return false
	}
	switch c.client.name {
	case "gosdk":
		switch c.server.name + "/" + c.transport.name {
		case "gosdk-stateful/stdio":
			return slices.Contains([]string{"basic", "progress", "cancel-ignored", "sampling"}, c.scenario.name)
		case "gosdk-stateful/http":
			return slices.Contains([]string{"progress", "cancel-honoured", "elicitation"}, c.scenario.name)
		case "everything/stdio", "everything/http":
			return c.scenario.name == "basic"
		}
	case "gosdk-process":
		return c.server.name == "gosdk-stateless" && c.scenario.name == "basic"
	case "tssdk":
		return c.server.name == "ts-server" && c.transport.name == "http" && c.scenario.name == "cancel-ignored" ||
			c.server.name == "everything" && c.transport.name != "sse" && c.scenario.name == "progress"
	case "inspector":
		return c.server.name == "everything" && c.transport.name == "http" && c.scenario.name == "echo" ||
			c.server.name == "gosdk-stateful" && c.transport.name == "stdio" && c.scenario.name == "list"
	}
	return false
}
