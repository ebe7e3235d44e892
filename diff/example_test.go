package diff_test

import (
	"fmt"
	"os"
	"strings"

	"github.com/mcpvcr/mcpvcr/diff"
	"github.com/mcpvcr/mcpvcr/store"
)

// session builds a stdio recording from lines prefixed "> " (client) or
// "< " (server).
func session(id int64, lines ...string) *store.Recording {
	rec := &store.Recording{
		Session: store.Session{ID: id, Transport: store.Stdio, Revision: "2025-06-18"},
		Streams: []store.Stream{{ID: 1, SessionID: id, Kind: store.StdinStream}, {ID: 2, SessionID: id, Kind: store.StdoutStream}},
	}
	for i, l := range lines {
		dir, st, kind := store.ClientToServer, int64(1), store.StdinStream
		if strings.HasPrefix(l, "< ") {
			dir, st, kind = store.ServerToClient, 2, store.StdoutStream
		}
		f := store.Frame{SessionID: id, StreamID: st, Seq: int64(i + 1), Direction: dir, Raw: []byte(l[2:] + "\n")}
		f.Derive(kind)
		rec.Frames = append(rec.Frames, f)
	}
	return rec
}

// Compare two recorded sessions: the new release renamed a tool. The
// ids and the timestamp differ too, but they are noise.
func ExampleCompare() {
	old := session(1,
		`> {"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"add"},{"name":"echo"}],"at":"2026-01-02T03:04:05Z"}}`,
	)
	new := session(2,
		`> {"jsonrpc":"2.0","id":9,"method":"tools/list"}`,
		`< {"jsonrpc":"2.0","id":9,"result":{"tools":[{"name":"add"},{"name":"say"}],"at":"2026-06-07T08:09:10Z"}}`,
	)
	r := diff.Compare(old, new, diff.Noise{})
	fmt.Println("differs:", r.Differs())
	for _, rd := range r.Requests {
		for _, c := range rd.Changes {
			fmt.Println(rd.Label(), c.Path, c.Kind)
		}
	}
	// Output:
	// differs: true
	// tools/list (seq 1) result.tools[name=echo] removed
	// tools/list (seq 1) result.tools[name=say] added
}

// Write a report for people; WriteJSON and WriteJUnit write the same for
// tools and CI.
func ExampleReport_WriteText() {
	old := session(1, `> {"jsonrpc":"2.0","id":1,"method":"ping"}`, `< {"jsonrpc":"2.0","id":1,"result":{}}`)
	new := session(2, `> {"jsonrpc":"2.0","id":1,"method":"ping"}`, `< {"jsonrpc":"2.0","id":1,"result":{}}`)
	if err := diff.Compare(old, new, diff.Noise{}).WriteText(os.Stdout); err != nil {
		fmt.Println(err)
	}
	// Output:
	// comparing session 1 (stdio, 2025-06-18) with session 2 (stdio, 2025-06-18)
	// no differences in 1 requests
}
