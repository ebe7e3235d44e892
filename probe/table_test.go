package probe

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
)

// updateTable makes TestProbeTable write docs/probes.md's table of real
// clients instead of checking it: go test ./probe -run TestProbeTable -update.
var updateTable = flag.Bool("update", false, "TestProbeTable: write docs/probes.md's table of real clients")

const (
	tableBegin = "<!-- probe-table begin (go test ./probe -run TestProbeTable -update) -->\n"
	tableEnd   = "<!-- probe-table end -->\n"
)

// peerCase is a probe of a real client at a revision: the verdict its
// test wants, and what the wire shows, for the docs.
type peerCase struct {
	kind    Kind
	version string
	want    Verdict
	wire    string
	listen  bool // the recording and the client listen for tools/list_changed
	then    bool // the caller goes on to prompts/list
}

// goSDKCases are TestGoSDK's: the Go SDK v1.8.0 client lists the tools
// with its iterator, calls echo (and roots before 2026-07-28) and closes.
var goSDKCases = []peerCase{
	{kind: HeaderMismatch, version: modern, want: VerdictNotObserved,
		wire: "the SDK returns the `-32020` to its caller and sends nothing on its own: no `tools/list`, no retry"},
	{kind: EmptyCursor, version: modern, want: VerdictFail,
		wire: "the SDK's list iterator (`ClientSession.Tools`) ends the list at `\"\"` in every revision; 2026-07-28 makes `\"\"` a cursor"},
	{kind: EmptyCursor, version: legacyRev, want: VerdictPass, wire: "the list ends at `\"\"`"},
	{kind: RepeatedCursor, version: legacyRev, want: VerdictFail,
		wire: "the iterator sends the repeated cursor again; it stops only when the page has no `nextCursor` (the probe ends the list then)"},
	{kind: RepeatedCursor, version: modern, want: VerdictFail, wire: "the same"},
	{kind: Session404, version: legacyRev, want: VerdictFail,
		wire: "the SDK returns `Session not found` to its caller and sends the caller's next call with the same `Mcp-Session-Id`; it never starts a new session"},
	{kind: StringID, version: legacyRev, want: VerdictPass, wire: "the `roots/list` answer carries `\"1\"` as sent"},
	{kind: VersionRetry, version: modern, want: VerdictPass, wire: "one more `server/discover` with `2026-07-28`, the version `data.supported` named"},
	{kind: UnknownResultType, version: modern, want: VerdictFail,
		wire: "the iterator asks for the page the `nextCursor` of the invalid answer names: the SDK does not check `resultType` on a list result"},
	{kind: StreamClosed, version: modern, want: VerdictPass, then: true,
		wire: "the call fails at once (`request terminated without response`: the stream had no event id to resume from) and the caller's next request follows"},
	{kind: ListenEnded, version: modern, want: VerdictFail, listen: true,
		wire: "the SDK opens `subscriptions/listen` when it connects without waiting for its result; once the stream ended it never opens another"},
	{kind: Batch, version: mcptest.V20250326, want: VerdictFail,
		wire: "the SDK cannot decode the array (`failed to decode event`), the connection fails, no answer goes out; the next request is the `DELETE` of the session"},
}

// goSDKStdioCases are TestGoSDKStdio's: the Go SDK v1.8.0 client over
// stdio lists the tools with its iterator, calls echo, lists prompts and
// calls roots (before 2026-07-28).
var goSDKStdioCases = []peerCase{
	{kind: EmptyCursor, version: legacyRev, want: VerdictPass, wire: "over stdio as over HTTP: the list ends at `\"\"`"},
	{kind: EmptyCursor, version: modern, want: VerdictFail, wire: "the iterator ends the list at `\"\"` over stdio too"},
	{kind: UnknownResultType, version: modern, want: VerdictFail, wire: "the iterator asks for the page the invalid answer's `nextCursor` names, over stdio too"},
	{kind: RepeatedCursor, version: legacyRev, want: VerdictFail, wire: "the iterator sends the repeated cursor again"},
	{kind: StringID, version: legacyRev, want: VerdictPass, wire: "the `roots/list` answer carries `\"1\"` as sent"},
}

// goSDKSSECases are TestGoSDKSSE's: the Go SDK v1.8.0 client over
// HTTP+SSE (2024-11-05) lists the tools with its iterator, calls echo and
// roots.
var goSDKSSECases = []peerCase{
	{kind: EmptyCursor, version: mcptest.V20241105, want: VerdictPass, wire: "the list ends at `\"\"`; the next POST to the endpoint is the call"},
	{kind: StringID, version: mcptest.V20241105, want: VerdictPass, wire: "the `roots/list` answer POSTed to the endpoint carries `\"1\"` as sent"},
}

// tsCases are TestTSClient's: the TypeScript SDK 1.32.2 client lists
// the tools (one page), calls echo, calls roots and lists the prompts.
var tsCases = []peerCase{
	{kind: EmptyCursor, version: mcptest.V20251125, want: VerdictPass, wire: "`listTools` returns the page; the script goes on to its call (the SDK does not page on its own)"},
	{kind: RepeatedCursor, version: mcptest.V20251125, want: VerdictNotObserved, wire: "it does not page: the repeated cursor is never met"},
	{kind: Session404, version: mcptest.V20251125, want: VerdictFail,
		wire: "the SDK returns the 404 to its caller (`Session not found`) and sends the script's next request with the same `Mcp-Session-Id`"},
	{kind: StringID, version: mcptest.V20251125, want: VerdictPass, wire: "the `roots/list` answer carries `\"1\"` as sent"},
	{kind: StringID, version: mcptest.V20250326, want: VerdictPass, wire: "the same"},
	{kind: Batch, version: mcptest.V20250326, want: VerdictFail,
		wire: "neither request of the batch is answered: the SDK parses the data of an event as one message (it takes an array only in a JSON body); the call waits until replay gives up on it, then the script goes on"},
}

// tsStdioCases are TestTSClientStdio's: probe.mjs over its own stdio.
var tsStdioCases = []peerCase{
	{kind: EmptyCursor, version: mcptest.V20251125, want: VerdictPass, wire: "as over Streamable HTTP: `listTools` returns the page, the script goes on"},
	{kind: RepeatedCursor, version: mcptest.V20251125, want: VerdictNotObserved, wire: "it does not page"},
	{kind: StringID, version: mcptest.V20251125, want: VerdictPass, wire: "the `roots/list` answer line carries `\"1\"` as sent"},
	{kind: StringID, version: mcptest.V20250326, want: VerdictPass, wire: "the same"},
}

// tsSSECases are TestTSClientSSE's: probe.mjs over HTTP+SSE.
var tsSSECases = []peerCase{
	{kind: EmptyCursor, version: mcptest.V20251125, want: VerdictPass, wire: "`listTools` returns the page; the next POST to the endpoint is the call"},
	{kind: StringID, version: mcptest.V20251125, want: VerdictPass, wire: "the `roots/list` answer POSTed to the endpoint carries `\"1\"` as sent"},
	{kind: StringID, version: mcptest.V20241105, want: VerdictPass, wire: "the same"},
}

// inspectorCases are TestInspectorCLI's: one run lists the tools, a
// second calls echo.
var inspectorCases = []peerCase{
	{kind: EmptyCursor, version: mcptest.V20251125, want: VerdictFail,
		wire: "`--method tools/list` pages on its own and asks again with cursor `\"\"`, which before 2026-07-28 ends the list"},
	{kind: RepeatedCursor, version: mcptest.V20251125, want: VerdictPass, wire: "it asks for the cursor once, then stops at the repeated cursor"},
	{kind: Session404, version: mcptest.V20251125, want: VerdictNotObserved, wire: "the call is the run's last request: it prints the 404 and exits 1"},
}

// inspectorSSECases are TestInspectorCLISSE's: the same two runs over
// HTTP+SSE.
var inspectorSSECases = []peerCase{
	{kind: EmptyCursor, version: mcptest.V20251125, want: VerdictFail,
		wire: "it asks again with cursor `\"\"` over HTTP+SSE too (replay answers that page with its no-match error)"},
}

// TestProbeTable checks docs/probes.md's table of real clients against
// the cases the real-client tests hold them to (TestGoSDK, TestTSClient,
// TestInspectorCLI); with -update it writes it.
func TestProbeTable(t *testing.T) {
	var b strings.Builder
	b.WriteString("| client | probe | revision | verdict | what the wire showed |\n|---|---|---|---|---|\n")
	for _, c := range []struct {
		name  string
		cases []peerCase
	}{{"Go SDK v1.8.0", goSDKCases}, {"Go SDK v1.8.0 (stdio)", goSDKStdioCases}, {"Go SDK v1.8.0 (HTTP+SSE)", goSDKSSECases}, {"TypeScript SDK 1.32.2", tsCases}, {"TypeScript SDK 1.32.2 (stdio)", tsStdioCases}, {"TypeScript SDK 1.32.2 (HTTP+SSE)", tsSSECases}, {"Inspector CLI 2.12.0", inspectorCases}, {"Inspector CLI 2.12.0 (HTTP+SSE)", inspectorSSECases}} {
		for _, tc := range c.cases {
			v := tc.want.String()
			if _, _, level := specs[tc.kind].rule(tc.version); tc.want == VerdictFail && level == Warning {
				v += " (warning)"
			}
			fmt.Fprintf(&b, "| %s | `%s` | %s | %s | %s |\n", c.name, tc.kind, tc.version, v, tc.wire)
		}
	}
	table := b.String()
	path := filepath.Join("..", "docs", "probes.md")
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i, j := bytes.Index(doc, []byte(tableBegin)), bytes.Index(doc, []byte(tableEnd))
	if i < 0 || j < i {
		t.Fatalf("docs/probes.md has no %q … %q", strings.TrimSpace(tableBegin), strings.TrimSpace(tableEnd))
	}
	i += len(tableBegin)
	if !*updateTable {
		if got := string(doc[i:j]); got != table {
			t.Errorf("docs/probes.md's table of real clients is not the cases the tests hold them to; run go test ./probe -run TestProbeTable -update\ncommitted:\n%s\nnow:\n%s", got, table)
		}
		return
	}
	doc = append(doc[:i:i], append([]byte(table), doc[j:]...)...)
	if err := os.WriteFile(path, doc, 0o644); err != nil {
		t.Fatal(err)
	}
}
