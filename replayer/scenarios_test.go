package replayer

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
)

// Scenarios of protocol.md §12 that no real peer produces, replayed from
// hand-made recordings at the matching level.

// TestCursor_BatchedClientResponses (scenario 10): the server asked two
// things; the client answers both in one batch, in another order than
// recorded. The batch matches as a set and the server goes on.
func TestCursor_BatchedClientResponses(t *testing.T) {
	rec := stdioRecording(t, 1,
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask"}}`,
		`< {"jsonrpc":"2.0","id":"s1","method":"roots/list"}`,
		`< {"jsonrpc":"2.0","id":"s2","method":"sampling/createMessage","params":{"messages":[],"maxTokens":5}}`,
		`> [{"jsonrpc":"2.0","id":"s1","result":{"roots":[]}},{"jsonrpc":"2.0","id":"s2","result":{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"}}]`,
		`< {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"done"}]}}`,
	)
	c := newCursor([]*recording{rec}, Match{}, true)
	got := recv(t, c, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"ask"}}`)
	want := []string{
		`{"jsonrpc":"2.0","id":"s1","method":"roots/list"}`,
		`{"jsonrpc":"2.0","id":"s2","method":"sampling/createMessage","params":{"messages":[],"maxTokens":5}}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("server requests (-want +got):\n%s", diff)
	}
	got = recv(t, c, `[{"jsonrpc":"2.0","id":"s2","result":{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"}},{"jsonrpc":"2.0","id":"s1","result":{"roots":[]}}]`)
	if diff := cmp.Diff([]string{`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"done"}]}}`}, got); diff != "" {
		t.Errorf("after the batched answers (-want +got):\n%s", diff)
	}
}

// TestCursor_ServerCancelsOwnRequest (scenario 12): the server cancels a
// request it sent; the client's late answer is taken without a mismatch
// and the conversation goes on.
func TestCursor_ServerCancelsOwnRequest(t *testing.T) {
	rec := stdioRecording(t, 1,
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask"}}`,
		`< {"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage","params":{"messages":[],"maxTokens":5}}`,
		`< {"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"s1","reason":"gave up"}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":true}}`,
		`> {"jsonrpc":"2.0","id":"s1","result":{"role":"assistant","content":{"type":"text","text":"late"},"model":"m"}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"tools":[]}}`,
	)
	c := newCursor([]*recording{rec}, Match{}, true)
	got := recv(t, c, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask"}}`)
	if len(got) != 3 {
		t.Fatalf("got %d lines for the call; want the request, its cancellation and the result:\n%v", len(got), got)
	}
	outs, _, mm := c.recv(jsonrpc.Parse([]byte(`{"jsonrpc":"2.0","id":"s1","result":{"role":"assistant","content":{"type":"text","text":"late"},"model":"m"}}`)))
	if mm != nil || len(outs) != 0 {
		t.Errorf("late answer: %v, %v; want it taken silently", outs, mm)
	}
	if diff := cmp.Diff([]string{`{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}`}, recv(t, c, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)); diff != "" {
		t.Errorf("after (-want +got):\n%s", diff)
	}
}

// TestCursor_EmptyCursor (scenario 36): nextCursor "" is a value like any
// other; the request that echoes it matches, and one without it does not.
func TestCursor_EmptyCursor(t *testing.T) {
	rec := stdioRecording(t, 1,
		`> {"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","tools":[{"name":"a"}],"nextCursor":""}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":"","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","tools":[{"name":"b"}]}}`,
	)
	c := newCursor([]*recording{rec}, Match{}, true)
	recv(t, c, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`)
	if _, _, mm := c.recv(jsonrpc.Parse([]byte(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`))); mm == nil {
		t.Error("page 2 without the empty cursor matched; want a mismatch (\"\" is not absent)")
	}
	got := recv(t, c, `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":"","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`)
	if diff := cmp.Diff([]string{`{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","tools":[{"name":"b"}]}}`}, got); diff != "" {
		t.Errorf("page 2 (-want +got):\n%s", diff)
	}
}

// TestCursor_URLElicitationRequired (scenario 19): a call fails with
// -32042 naming a URL elicitation, the server later says it completed, and
// the client retries under a new id.
func TestCursor_URLElicitationRequired(t *testing.T) {
	rec := stdioRecording(t, 1,
		`> {"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"pay"}}`,
		`< {"jsonrpc":"2.0","id":4,"error":{"code":-32042,"message":"URL elicitation required","data":{"elicitations":[{"mode":"url","elicitationId":"E","url":"https://example.com/pay","message":"Pay"}]}}}`,
		`< {"jsonrpc":"2.0","method":"notifications/elicitation/complete","params":{"elicitationId":"E"}}`,
		`> {"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"pay"}}`,
		`< {"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"paid"}]}}`,
	)
	c := newCursor([]*recording{rec}, Match{}, true)
	got := recv(t, c, `{"jsonrpc":"2.0","id":40,"method":"tools/call","params":{"name":"pay"}}`)
	want := []string{
		`{"jsonrpc":"2.0","id":40,"error":{"code":-32042,"message":"URL elicitation required","data":{"elicitations":[{"mode":"url","elicitationId":"E","url":"https://example.com/pay","message":"Pay"}]}}}`,
		`{"jsonrpc":"2.0","method":"notifications/elicitation/complete","params":{"elicitationId":"E"}}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("first call (-want +got):\n%s", diff)
	}
	got = recv(t, c, `{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"name":"pay"}}`)
	if diff := cmp.Diff([]string{`{"jsonrpc":"2.0","id":41,"result":{"content":[{"type":"text","text":"paid"}]}}`}, got); diff != "" {
		t.Errorf("retry (-want +got):\n%s", diff)
	}
}
