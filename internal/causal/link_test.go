package causal

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpvcr/mcpvcr/store"
)

func TestLink(t *testing.T) {
	// Answers pair with the request sent the other way with the same id
	// token (1 and "1" differ), progress joins its request by token, and
	// a cancellation names the request it cancels; what the server sends
	// for a request after its cancellation is marked so.
	c, s := store.ClientToServer, store.ServerToClient
	fr := func(seq int64, dir store.Direction, raw string) store.Frame {
		f := store.Frame{Seq: seq, Direction: dir, Raw: []byte(raw)}
		f.Derive(store.StdinStream)
		return f
	}
	frames := []store.Frame{
		fr(1, c, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"progressToken":"p1"},"name":"slow"}}`),
		fr(2, c, `{"jsonrpc":"2.0","id":"1","method":"tools/list"}`),
		fr(3, s, `{"jsonrpc":"2.0","id":1,"method":"roots/list"}`),
		fr(4, s, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p1","progress":1}}`),
		fr(5, c, `{"jsonrpc":"2.0","id":1,"result":{"roots":[]}}`),
		fr(6, s, `{"jsonrpc":"2.0","id":"1","result":{"tools":[]}}`),
		fr(7, c, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`),
		fr(8, s, `{"jsonrpc":"2.0","id":1,"error":{"code":-32800,"message":"cancelled"}}`),
		fr(9, s, `not json`),
		fr(10, s, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p1","progress":2}}`),
	}
	want := Links{
		Answer:      map[int64]int64{1: 8, 2: 6, 3: 5},
		Request:     map[int64]int64{8: 1, 6: 2, 5: 3},
		Method:      map[int64]string{8: "tools/call", 6: "tools/list", 5: "roots/list"},
		Progress:    map[int64]int64{4: 1, 10: 1},
		Cancel:      map[int64]int64{7: 1},
		Cancelled:   map[int64]int64{1: 7},
		AfterCancel: map[int64]int64{8: 7, 10: 7},
	}
	if diff := cmp.Diff(want, Link(&store.Recording{Frames: frames})); diff != "" {
		t.Errorf("Link() mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, walk(frames)); diff != "" {
		t.Errorf("walk() mismatch (-want +got):\n%s", diff)
	}
}
