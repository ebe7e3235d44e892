package chaos

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

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
// client, on connections of its own (a new session on a new connection
// may be either's: not observed).
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
		{"new session on a fresh connection", func(t *testing.T, c *rawClient, url string) {
			c.hc = &http.Client{Transport: &http.Transport{}} // a pool of its own for the new session
			if a := c.initialize(); a.status != http.StatusOK {
				t.Errorf("new initialize: %d, %v", a.status, a.err)
			}
		}, VerdictNotObserved, "a new session began on a new connection"},
		{"exits, another client starts", func(t *testing.T, c *rawClient, url string) {
			other := newRawClient(t, url, recs[0])
			if a := other.initialize(); a.status != http.StatusOK {
				t.Errorf("the other client's initialize: %d, %v", a.status, a.err)
			}
		}, VerdictNotObserved, "a new session began on a new connection"},
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

// withGetEvents returns rec (gosdk-http-2025-11-25) with two log
// messages on its standalone GET stream (get#2), as a server sends
// of its own: the first once the echo call was answered (the client
// waits for nothing), the second once the add call came (the client
// waits for its answer, recorded after it).
func withGetEvents(t *testing.T, rec *store.Recording) *store.Recording {
	t.Helper()
	out := *rec
	out.Frames = nil
	get := rec.Streams[1]
	if get.Kind != store.GetStream {
		t.Fatalf("stream 2 is a %s; want the GET stream", get.Kind)
	}
	event := func(after store.Frame, text string) store.Frame {
		f := store.Frame{SessionID: rec.Session.ID, StreamID: get.ID, Direction: store.ServerToClient, Offset: after.Offset, SSE: true, Event: "message", Retry: -1,
			Raw: fmt.Appendf(nil, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":%q}}\n\n", text)}
		f.Data = f.Raw[len("event: message\ndata: ") : len(f.Raw)-2]
		f.Derive(store.GetStream)
		return f
	}
	for _, f := range rec.Frames {
		out.Frames = append(out.Frames, f)
		switch {
		case f.Kind.IsResponse() && f.ID == "3" && f.Direction == store.ServerToClient: // the echo answer
			out.Frames = append(out.Frames, event(f, "echo done"))
		case f.Kind == store.KindRequest && f.Method == "tools/call" && f.ID == "9": // the slow call
			out.Frames = append(out.Frames, event(f, "slow call begun"))
		}
	}
	if len(out.Frames) != len(rec.Frames)+2 {
		t.Fatalf("the echo answer or the slow call not found")
	}
	for i := range out.Frames {
		out.Frames[i].Seq = int64(i + 1)
	}
	return &out
}

// TestChaos_DelayGetStreamClientDone: a delay before an event of the
// standalone GET stream. A client that had every answer it asked for and
// closes the stream during the delay was done: not observed, although
// the recorded client went on. One that closes it while a call of its
// own is unanswered fails.
func TestChaos_DelayGetStreamClientDone(t *testing.T) {
	rec := withGetEvents(t, loadCassette(t, "gosdk-http-2025-11-25.jsonl")[0])
	for _, tt := range []struct {
		name  string
		event int // of the GET stream, from 0
		calls int // POSTs the client sends before the event (after initialize and tools/list)
		want  Verdict
		says  string
	}{
		{"done", 0, 1, VerdictNotObserved, "it was done"},
		{"waiting", 1, 7, VerdictFail, "still waiting for tools/call"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var events []store.Frame // of the GET stream
			for _, f := range rec.Frames {
				if f.StreamID == rec.Streams[1].ID && f.Method != "" {
					events = append(events, f)
				}
			}
			f := events[tt.event]
			plan := []Fault{{Kind: FaultDelay, Stream: 2, StreamKind: store.GetStream, Event: tt.event, Seq: f.Seq, Delay: time.Minute}}
			delaying := make(chan struct{})
			var once sync.Once
			// Delaying once the Hook announced the delay: taken, before
			// its wait (a spy before the Hook would let the client close
			// the stream before the delay was taken).
			injected := func() { once.Do(func() { close(delaying) }) }
			h, logs := rawReplayHook(t, []*store.Recording{rec}, Config{Seed: 1}, plan, nil, injected, func(url string) {
				c := newRawClient(t, url, rec)
				c.upTo(3)
				status, read, closeGET := c.open()
				if status != http.StatusOK {
					t.Fatalf("GET stream: %d", status)
				}
				go read()
				var calls []func()
				for range tt.calls {
					calls = append(calls, func() { c.post() })
				}
				last := calls[len(calls)-1]
				for _, call := range calls[:len(calls)-1] {
					call()
				}
				done := make(chan struct{})
				go func() { defer close(done); last() }()
				if tt.event == 0 {
					<-done // the echo answered: it waits for nothing more
				}
				<-delaying
				closeGET()
				c.hc.Transport.(*http.Transport).CloseIdleConnections()
				if tt.event != 0 {
					// It leaves without its answer: its call's connection goes too.
					c.cancel()
					<-done
				}
			})
			r := oneResult(t, h, logs)
			if r.Verdict != tt.want || !strings.Contains(r.Did, tt.says) {
				t.Errorf("the client %s: %s; want %s saying %q", r.Did, r.Verdict, tt.want, tt.says)
			}
		})
	}
}
