package diff

import (
	"slices"
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
	return edgeSessionListing(t, 100*time.Millisecond, roots, rootsAt, end)
}

// edgeSessionListing is edgeSession with the tools listed at listAt.
func edgeSessionListing(t *testing.T, listAt time.Duration, roots bool, rootsAt, end time.Duration) *store.Recording {
	lines := []string{
		`> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"roots":{}},"clientInfo":{"name":"c","version":"1"}}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`,
		`> {"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"tools":[]}}`,
	}
	at := []time.Duration{0, 5, 10, listAt / time.Millisecond, listAt/time.Millisecond + 5}
	if roots {
		lines = append(lines, `< {"jsonrpc":"2.0","id":0,"method":"roots/list"}`)
		at = append(at, rootsAt/time.Millisecond)
	}
	return timedSession(t, lines, at, end)
}

// timedSession is a one-stream session of lines (see
// storetest.LineRecording), line i at at[i] milliseconds, that ends at
// end.
func timedSession(t *testing.T, lines []string, at []time.Duration, end time.Duration) *store.Recording {
	rec := storetest.LineRecording(t, 1, lines...)
	for i := range rec.Frames {
		rec.Frames[i].Offset = at[i] * time.Millisecond
	}
	rec.Streams[0].Closed = end
	return rec
}

// TestCompare_ServerTrafficAtTheEdge: what the server sent on its own
// after the other session had ended, or on a timer of its own that came
// near that end (on the other session's clock: as long after the same
// client message), is timing (how long each client stayed), not the
// server: a roots/list one session has there and the other lacks is a
// note, not a difference. Well before the other's end it is a
// difference, and so is what came as a reply to the client's message
// (within the reaction time), however near the end.
func TestCompare_ServerTrafficAtTheEdge(t *testing.T) {
	ms := time.Millisecond
	for _, tt := range []struct {
		name    string
		plain   *store.Recording // the session without the roots/list
		other   *store.Recording
		differs bool
	}{
		{"well before the other's end", edgeSession(t, false, 0, 400*ms), edgeSession(t, true, 250*ms, 900*ms), true},
		{"before the last step", edgeSession(t, false, 0, 400*ms), edgeSession(t, true, 50*ms, 120*ms), true},
		{"a reply at the other's end", edgeSession(t, false, 0, 110*ms), edgeSession(t, true, 102*ms, 900*ms), true},
		{"a timer near the other's end", edgeSession(t, false, 0, 400*ms), edgeSession(t, true, 360*ms, 380*ms), false},
		{"after the other session ended", edgeSession(t, false, 0, 400*ms), edgeSession(t, true, 500*ms, 900*ms), false},
		// Inspector against server-everything: the recorded client listed
		// at once and left 480 ms after initialized, before the server's
		// roots/list (350 ms after initialized, late on a loaded machine);
		// the verify run listed 50 ms later and got it. As long after the
		// listing it would have come before the recorded end, but the
		// timer runs from initialized.
		{"a timer that runs from an earlier message", edgeSessionListing(t, 12*ms, false, 0, 490*ms), edgeSessionListing(t, 60*ms, true, 360*ms, 900*ms), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, pair := range [][2]*store.Recording{{tt.plain, tt.other}, {tt.other, tt.plain}} {
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

// TestCompare_OwnRequestAnsweredOnlyHere: a server that echoes the
// client's call back as a request of its own, changed in the new build.
// The new session's client answers that request (the recorded one sent a
// line that is no message instead): neither is a step of the client's
// own, so the echoes sit on both clocks after the same call, and the
// change is a difference. Counted as steps, they put the recorded echo
// after the new session's end and made it a note.
func TestCompare_OwnRequestAnsweredOnlyHere(t *testing.T) {
	ms := time.Millisecond
	recorded := timedSession(t, []string{
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"v":"a"}}}`,
		`> not json`,
		`< {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"v":"a"}}}`,
	}, []time.Duration{3, 3, 25}, 26*ms)
	replayed := timedSession(t, []string{
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"v":"a"}}}`,
		`< {"jsonrpc":"2.0","id":1,"method":"tools/cbll","params":{"name":"x","arguments":{"v":"a"}}}`,
		`> {"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no answer recorded"}}`,
	}, []time.Duration{0, 30, 31}, 32*ms)
	for _, pair := range [][2]*store.Recording{{recorded, replayed}, {replayed, recorded}} {
		if r := Compare(pair[0], pair[1], Noise{}); !r.Differs() {
			t.Errorf("Differs() = false; want the changed echo counted (server %+v, notes %q)", r.Server, r.Notes)
		}
	}
}

// TestCompare_EdgeIgnoresWhatBothHold: a tool call during which the server
// asks the client (elicitation/create) in both sessions, and a roots/list
// on a timer only the longer one held. On a loaded run the elicitation
// came late, so it sits inside the other session's end on one clock and
// not on the other: that says nothing, since both sessions hold it alike.
// Only the roots/list differs, and it came after the recorded end: a note.
// Before, the elicitation's placement made the roots/list a difference.
func TestCompare_EdgeIgnoresWhatBothHold(t *testing.T) {
	ms := time.Millisecond
	lines := []string{
		`> {"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{},"elicitation":{}},"clientInfo":{"name":"c","version":"1"}}}`,
		`< {"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`,
		`> {"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"trigger-elicitation-request"}}`,
		`< {"jsonrpc":"2.0","id":0,"method":"elicitation/create","params":{"message":"?"}}`,
		`> {"jsonrpc":"2.0","id":0,"result":{"action":"accept"}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"content":[]}}`,
	}
	recorded := timedSession(t, lines, []time.Duration{0, 31, 85, 141, 152, 186, 201}, 214*ms)
	loaded := timedSession(t, append(slices.Clone(lines), `< {"jsonrpc":"2.0","id":1,"method":"roots/list"}`),
		[]time.Duration{0, 10, 20, 80, 300, 310, 320, 375}, 400*ms)
	for _, pair := range [][2]*store.Recording{{recorded, loaded}, {loaded, recorded}} {
		r := Compare(pair[0], pair[1], Noise{})
		if r.Differs() {
			t.Errorf("Differs() = true; want the roots/list as a note (server %+v, notes %q)", r.Server, r.Notes)
		}
		if len(r.Notes) != 1 || !strings.Contains(r.Notes[0], `requests["roots/list"]`) {
			t.Errorf("notes %q; want one of the roots/list", r.Notes)
		}
	}
}
