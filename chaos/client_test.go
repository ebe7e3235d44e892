package chaos

import (
	"net/http"
	"strings"
	"testing"

	"github.com/mcpvcr/mcpvcr/store"
)

// The verdicts are tied to the client that met the fault: raw clients
// written to keep each rule pass, and those written to break it fail,
// whatever another client or a request already under way does.

// TestChaos_ExpireJudgesItsClient: the session expires (404) at POST 4.
// A client that starts a new session passes, even when a GET it had
// opened before it read the 404 arrives after it (on a connection of its
// own); one that sends the old id again on the connection the 404 came
// on fails; one that exits is not credited with the initialize of another
// client, on connections of its own.
func TestChaos_ExpireJudgesItsClient(t *testing.T) {
	recs := loadCassette(t, "gosdk-http-2025-11-25.jsonl")
	plan := []Fault{{Kind: FaultExpire, Request: 4}}
	for _, tt := range []struct {
		name string
		then func(t *testing.T, c *rawClient, url string)
		want Verdict
		says string
	}{
		{"new session, a GET under way", func(t *testing.T, c *rawClient, url string) {
			g := newRawClient(t, url, recs[0]) // the GET stream's connection
			g.sid = c.sid
			if a := g.do(t.Context(), http.MethodGet, nil, true); a.status != http.StatusNotFound {
				t.Errorf("the GET under way: %d; want 404", a.status)
			}
			if a := c.initialize(); a.status != http.StatusOK {
				t.Errorf("new initialize: %d, %v", a.status, a.err)
			}
		}, VerdictPass, "started a new session"},
		{"old id again", func(t *testing.T, c *rawClient, url string) {
			if a := c.again(5, true); a.status != http.StatusNotFound {
				t.Errorf("old id again: %d; want 404", a.status)
			}
		}, VerdictFail, "used the expired session id again"},
		{"exits, another client starts", func(t *testing.T, c *rawClient, url string) {
			other := newRawClient(t, url, recs[0])
			if a := other.initialize(); a.status != http.StatusOK {
				t.Errorf("the other client's initialize: %d, %v", a.status, a.err)
			}
		}, VerdictFail, "sent nothing more"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h, logs := rawReplay(t, recs, Config{Seed: 1}, plan, func(url string) {
				c := newRawClient(t, url, recs[0])
				c.upTo(3)
				if a := c.post(); a.status != http.StatusNotFound {
					t.Fatalf("POST 4: %d; want 404", a.status)
				}
				tt.then(t, c, url)
			})
			r := oneResult(t, h, logs)
			if r.Verdict != tt.want || !strings.Contains(r.Did, tt.says) {
				t.Errorf("the client %s: %s; want %s saying %q", r.Did, r.Verdict, tt.want, tt.says)
			}
		})
	}
}

// TestChaos_CutJudgesItsClient: a stream without event ids is cut before
// its first event (POST 3, tools/list). A client that carries on in its
// session (its next call) passes; one that hangs fails where the recorded
// client went on, though its GET stream opens after the cut and another
// client calls on.
func TestChaos_CutJudgesItsClient(t *testing.T) {
	recs := loadCassette(t, "multi-gosdk-http-sse.jsonl")[:1]
	plan := []Fault{{Kind: FaultCut, Stream: 4, StreamKind: store.PostStream}}
	for _, tt := range []struct {
		name string
		then func(t *testing.T, c *rawClient, url string)
		want Verdict
		says string
	}{
		{"carries on", func(t *testing.T, c *rawClient, url string) {
			if a := c.post(); a.status != http.StatusOK || a.err != nil {
				t.Errorf("the next call: %d, %v", a.status, a.err)
			}
		}, VerdictPass, "carried on: POST tools/call"},
		{"hangs", func(t *testing.T, c *rawClient, url string) {
			status, _, closeGET := c.open() // its GET stream, opened on its own time
			defer closeGET()
			if status != http.StatusOK {
				t.Errorf("GET stream: %d", status)
			}
			other := newRawClient(t, url, recs[0])
			other.upTo(2)
		}, VerdictFail, "sent nothing more of its session where the recorded client went on"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h, logs := rawReplay(t, recs, Config{Seed: 1}, plan, func(url string) {
				c := newRawClient(t, url, recs[0])
				c.upTo(2)
				if a := c.post(); a.err == nil {
					t.Fatalf("POST 3: %d, %d events, no error; want the stream cut", a.status, len(a.events))
				}
				tt.then(t, c, url)
			})
			r := oneResult(t, h, logs)
			if r.Verdict != tt.want || !strings.Contains(r.Did, tt.says) {
				t.Errorf("the client %s: %s; want %s saying %q", r.Did, r.Verdict, tt.want, tt.says)
			}
		})
	}
}
