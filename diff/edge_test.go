package diff

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpvcr/mcpvcr/internal/storetest"
	"github.com/mcpvcr/mcpvcr/store"
)

// edgeSession is a session whose client initializes and lists the tools
// (its last step at 100 ms) and that ends at end; with roots, the server
// asks for the roots, on its own, at rootsAt.
func edgeSession(t *testing.T, roots bool, rootsAt, end time.Duration) *store.Recording {
	lines := []string{
		`> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"roots":{}},"clientInfo":{"name":"c","version":"1"}}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`,
		`> {"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"tools":[]}}`,
	}
	at := []time.Duration{0, 5, 10, 100, 105}
	if roots {
		lines = append(lines, `< {"jsonrpc":"2.0","id":0,"method":"roots/list"}`)
		at = append(at, rootsAt/time.Millisecond)
	}
	rec := storetest.LineRecording(t, 1, lines...)
	for i := range rec.Frames {
		rec.Frames[i].Offset = at[i] * time.Millisecond
	}
	rec.Streams[0].Closed = end
	return rec
}

// TestCompare_ServerTrafficAtTheEdge: what the server sent on its own
// after the other session had ended is timing (how long each client
// stayed), not the server: a roots/list one session has there and the
// other lacks is a note, not a difference. While both sessions were open
// it is a difference, however near their ends.
func TestCompare_ServerTrafficAtTheEdge(t *testing.T) {
	ms := time.Millisecond
	plain := edgeSession(t, false, 0, 400*ms)
	for _, tt := range []struct {
		name    string
		other   *store.Recording
		differs bool
	}{
		{"before the other session ended", edgeSession(t, true, 360*ms, 380*ms), true},
		{"well before the end", edgeSession(t, true, 360*ms, 900*ms), true},
		{"before the last step", edgeSession(t, true, 50*ms, 120*ms), true},
		{"after the other session ended", edgeSession(t, true, 500*ms, 900*ms), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, pair := range [][2]*store.Recording{{plain, tt.other}, {tt.other, plain}} {
				r := Compare(pair[0], pair[1], Noise{})
				if r.Differs() != tt.differs {
					t.Errorf("Differs() = %t; want %t (server %+v, notes %q)", r.Differs(), tt.differs, r.Server, r.Notes)
				}
				noted := len(r.Notes) == 1 && strings.Contains(r.Notes[0], `requests["roots/list"]`)
				if noted == tt.differs {
					t.Errorf("notes %q; want a note of the roots/list only when it is not a difference", r.Notes)
				}
			}
		})
	}
}
