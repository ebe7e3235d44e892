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

// TestChaos_Resume404EndsTheSession: post#8 (POST 7, the progress call)
// is cut after two events and its resumption answered 404, which says
// the session is gone: from then on every request with the old id is
// answered 404. A client that starts a new session passes; one that
// uses the old id again, to call on or to resume once more, fails.
func TestChaos_Resume404EndsTheSession(t *testing.T) {
	recs := loadCassette(t, "gosdk-http-2025-11-25.jsonl")
	plan := []Fault{{Kind: FaultResume404, Stream: 8, StreamKind: store.PostStream, Event: 2, Seq: 20}}
	for _, tt := range []struct {
		name string
		then func(t *testing.T, c *rawClient, lastID string)
		want Verdict
		says string
	}{
		{"new session", func(t *testing.T, c *rawClient, lastID string) {
			if a := c.initialize(); a.status != http.StatusOK {
				t.Errorf("new initialize: %d, %v", a.status, a.err)
			}
			if a := c.post(); a.status != http.StatusOK {
				t.Errorf("the new session's first call: %d, %v", a.status, a.err)
			}
		}, VerdictPass, "got 404, then started a new session"},
		{"old id, calls on", func(t *testing.T, c *rawClient, lastID string) {
			if a := c.post(); a.status != http.StatusNotFound {
				t.Errorf("a call with the old id: %d; want 404", a.status)
			}
		}, VerdictFail, "used the expired session id again: POST logging/setLevel"},
		{"old id, resumes again", func(t *testing.T, c *rawClient, lastID string) {
			if status, _, _ := c.open("Last-Event-ID", lastID); status != http.StatusNotFound {
				t.Errorf("a second resumption: %d; want 404", status)
			}
		}, VerdictFail, "used the expired session id again: GET (Last-Event-ID"},
		{"old id, its GET stream", func(t *testing.T, c *rawClient, lastID string) {
			if status, _, _ := c.open(); status != http.StatusNotFound {
				t.Errorf("a GET stream with the old id: %d; want 404", status)
			}
		}, VerdictFail, "used the expired session id again: GET"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h, logs := rawReplay(t, recs, Config{Seed: 1}, plan, func(url string) {
				c := newRawClient(t, url, recs[0])
				c.upTo(6)
				a := c.post()
				if a.err == nil || len(a.events) != 2 || a.lastID() == "" {
					t.Fatalf("POST 7: %d, %d events, %v; want the stream cut after 2 events", a.status, len(a.events), a.err)
				}
				if status, _, _ := c.open("Last-Event-ID", a.lastID()); status != http.StatusNotFound {
					t.Fatalf("the resumption: %d; want 404", status)
				}
				tt.then(t, c, a.lastID())
			})
			r := oneResult(t, h, logs)
			if r.Verdict != tt.want || !strings.Contains(r.Did, tt.says) {
				t.Errorf("the client %s: %s; want %s saying %q", r.Did, r.Verdict, tt.want, tt.says)
			}
		})
	}
}
