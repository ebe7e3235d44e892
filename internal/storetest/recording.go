// Package storetest builds store values for tests.
package storetest

import (
	"testing"

	"github.com/mcpvcr/mcpvcr/store"
)

// LineRecording builds a stdio recording of session id from lines
// prefixed "> " (client to server), "< " (server to client) or "! " (the
// server's stderr). Each line becomes one frame with a newline added.
func LineRecording(tb testing.TB, id int64, lines ...string) *store.Recording {
	tb.Helper()
	rec := &store.Recording{
		Session: store.Session{ID: id, Transport: store.Stdio, Revision: "2025-06-18"},
		Streams: []store.Stream{{ID: 1, SessionID: id, Kind: store.StdinStream}, {ID: 2, SessionID: id, Kind: store.StdoutStream}, {ID: 3, SessionID: id, Kind: store.StderrStream}},
	}
	for i, l := range lines {
		dir, st, kind := store.ClientToServer, int64(1), store.StdinStream
		switch {
		case len(l) < 2:
			tb.Fatalf("line %d: want a >, < or ! prefix: %q", i, l)
		case l[:2] == "< ":
			dir, st, kind = store.ServerToClient, 2, store.StdoutStream
		case l[:2] == "! ":
			dir, st, kind = store.ServerToClient, 3, store.StderrStream
		case l[:2] == "> ":
		default:
			tb.Fatalf("line %d: want a >, < or ! prefix: %q", i, l)
		}
		f := store.Frame{SessionID: id, StreamID: st, Seq: int64(i + 1), Direction: dir, Raw: []byte(l[2:] + "\n")}
		f.Derive(kind)
		rec.Frames = append(rec.Frames, f)
	}
	return rec
}
