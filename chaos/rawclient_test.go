package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpvcr/mcpvcr/internal/sse"
	"github.com/mcpvcr/mcpvcr/replayer"
	"github.com/mcpvcr/mcpvcr/store"
)

// rawClient is a client of raw HTTP requests, written to keep or to
// break one rule: it sends the recorded client's POSTs of rec in order,
// with the session id replay issued, and its test decides what it does
// after a fault. Each rawClient has connections of its own (a transport
// of its own) and keeps at most one idle, so that its next request goes
// out on the connection its last answer came on, as a client that sends
// one request at a time does.
type rawClient struct {
	t      *testing.T
	ctx    context.Context // its requests', cancelled when it leaves
	cancel context.CancelFunc
	url    string
	hc     *http.Client
	sid    string
	posts  [][]byte // the recorded client's POST bodies, in order
	next   int      // the next of posts to send
	// untilResponse stops reading a POST's event stream at its
	// JSON-RPC response, and closes it, as SDK clients do.
	untilResponse bool
}

// isResponse reports whether data is a JSON-RPC response.
func isResponse(data []byte) bool {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	return json.Unmarshal(data, &m) == nil && len(m.ID) > 0 && m.Method == ""
}

// newRawClient returns a raw client of the replay at url, sending the
// POSTs of rec.
// rawClientLimit bounds a raw client's life: one still waiting then was
// hung by replay, and its test fails with the logs instead of timing out.
const rawClientLimit = 2 * time.Minute

func newRawClient(t *testing.T, url string, rec *store.Recording) *rawClient {
	tr := &http.Transport{MaxIdleConnsPerHost: 1}
	t.Cleanup(tr.CloseIdleConnections)
	ctx, cancel := context.WithTimeout(t.Context(), rawClientLimit)
	t.Cleanup(cancel)
	c := &rawClient{t: t, ctx: ctx, cancel: cancel, url: url, hc: &http.Client{Transport: tr}}
	for i := range rec.Streams {
		st := &rec.Streams[i]
		if st.Kind != store.PostStream {
			continue
		}
		for j := range rec.Frames {
			if f := &rec.Frames[j]; f.StreamID == st.ID && f.Direction == store.ClientToServer {
				c.posts = append(c.posts, f.Data)
				break
			}
		}
	}
	return c
}

// rawAnswer is what a request got: its status, the events of its
// stream (or its JSON body as one event), and the error that ended it
// early (a cut).
type rawAnswer struct {
	status int
	events []sse.Event
	err    error
}

// lastID returns the id of the last event with one.
func (a rawAnswer) lastID() string {
	id := ""
	for _, e := range a.events {
		if e.HasID {
			id = e.ID
		}
	}
	return id
}

// do sends a request of method with body and the headers given (pairs),
// and the session id when sid is set, and reads the whole answer.
func (c *rawClient) do(ctx context.Context, method string, body []byte, sid bool, headers ...string) rawAnswer {
	c.t.Helper()
	return c.doWith(ctx, method, body, sid, nil, headers...)
}

// doStarted is do of a POST of body that closes started once the first
// event of its answer came, or the answer ended.
func (c *rawClient) doStarted(ctx context.Context, body []byte, started chan<- struct{}) rawAnswer {
	var once sync.Once
	first := func() { once.Do(func() { close(started) }) }
	defer first()
	return c.doWith(ctx, http.MethodPost, body, true, first)
}

// doWith is do, calling first (when not nil) once the first event came.
func (c *rawClient) doWith(ctx context.Context, method string, body []byte, sid bool, first func(), headers ...string) rawAnswer {
	req, err := http.NewRequestWithContext(ctx, method, c.url, bytes.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
	}
	if sid && c.sid != "" {
		req.Header.Set("Mcp-Session-Id", c.sid)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return rawAnswer{err: err}
	}
	defer resp.Body.Close()
	a := rawAnswer{status: resp.StatusCode}
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" && c.sid == "" {
		c.sid = id
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, err := io.ReadAll(resp.Body)
		a.err = err
		if len(b) > 0 {
			a.events = append(a.events, sse.Event{Data: b, HasData: true})
		}
		return a
	}
	r := sse.NewReader(resp.Body)
	for {
		e, err := r.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				a.err = err
			}
			return a
		}
		if e.Partial {
			a.err = io.ErrUnexpectedEOF
			return a
		}
		if !e.Comment {
			a.events = append(a.events, e)
			if first != nil {
				first()
			}
			if c.untilResponse && method == http.MethodPost && isResponse(e.Data) {
				return a
			}
		}
	}
}

// post sends the recorded client's next POST and returns its answer.
func (c *rawClient) post() rawAnswer {
	c.t.Helper()
	if c.next >= len(c.posts) {
		c.t.Fatalf("the recording has %d POSTs; the client wants one more", len(c.posts))
	}
	b := c.posts[c.next]
	c.next++
	return c.do(c.ctx, http.MethodPost, b, true)
}

// upTo sends the recorded POSTs up to POST n (from 1), each answered 2xx.
func (c *rawClient) upTo(n int) {
	c.t.Helper()
	for c.next < n {
		if a := c.post(); a.status/100 != 2 || a.err != nil {
			c.t.Fatalf("POST %d: %d, %v", c.next, a.status, a.err)
		}
	}
}

// again sends POST n (from 1) again, with the session id when sid is set.
func (c *rawClient) again(n int, sid bool) rawAnswer {
	c.t.Helper()
	return c.do(c.ctx, http.MethodPost, c.posts[n-1], sid)
}

// initialize starts a new session: the recorded initialize, without a
// session id, and notifications/initialized with the new one; post goes
// on with the recorded POST after them.
func (c *rawClient) initialize() rawAnswer {
	c.t.Helper()
	c.sid, c.next = "", 2
	a := c.do(c.ctx, http.MethodPost, c.posts[0], false)
	if a.status == http.StatusOK && len(c.posts) > 1 {
		c.do(c.ctx, http.MethodPost, c.posts[1], true)
	}
	return a
}

// rawReplay serves recs with the chaos Hook of c whose plan for each
// session is plan (nil: drawn from c), to run; it closes the server once
// run returns, and returns the Hook and what it logged.
func rawReplay(t *testing.T, recs []*store.Recording, c Config, plan []Fault, run func(url string)) (*Hook, string) {
	t.Helper()
	return rawReplayHook(t, recs, c, plan, nil, nil, run)
}

// rawReplayHook is rawReplay, calling spy (when not nil) at each point
// before the chaos Hook, and injected (when not nil) as the Hook
// announces each fault it injects: once it is taken, before any wait of
// the fault's own.
func rawReplayHook(t *testing.T, recs []*store.Recording, c Config, plan []Fault, spy func(*replayer.Point), injected func(), run func(url string)) (*Hook, string) {
	t.Helper()
	var logs syncWriter
	var handler slog.Handler = slog.NewTextHandler(&logs, nil)
	if injected != nil {
		handler = announced{handler, injected}
	}
	logger := slog.New(handler)
	h := New(c, logger)
	if plan != nil {
		cs := h.state()
		for _, rec := range recs {
			cs.plans[rec.Session.ID] = plan
		}
	}
	var hook replayer.Hook = h
	if spy != nil {
		hook = replayer.HookFunc(func(p *replayer.Point) replayer.Action {
			spy(p)
			return h.Act(p)
		})
	}
	srv := &replayer.Server{Recordings: recs, Hook: hook, Logger: logger}
	ts := httptest.NewServer(srv)
	run(ts.URL + "/mcp")
	ts.CloseClientConnections()
	ts.Close()
	srv.Close()
	return h, logs.String()
}

// announced is a slog.Handler that calls fn on each "chaos: injected"
// record it passes on.
type announced struct {
	slog.Handler
	fn func()
}

func (a announced) Handle(ctx context.Context, r slog.Record) error {
	if strings.HasPrefix(r.Message, "chaos: injected") {
		a.fn()
	}
	return a.Handler.Handle(ctx, r)
}

// oneResult returns the one fault injected, failing the test when there
// is not exactly one.
func oneResult(t *testing.T, h *Hook, logs string) Result {
	t.Helper()
	res := h.Results()
	if len(res) != 1 {
		t.Fatalf("%d faults injected (%v); want 1 (not reached: %v)\n%s", len(res), res, h.NotReached(), logs)
	}
	t.Logf("%s: the client %s: %s", res[0].Fault, res[0].Did, res[0].Verdict)
	return res[0]
}

// waitGroup runs fs concurrently and waits for them.
func waitGroup(fs ...func()) {
	var wg sync.WaitGroup
	for _, f := range fs {
		wg.Add(1)
		go func() { defer wg.Done(); f() }()
	}
	wg.Wait()
}

// open opens a GET stream of the session (with the headers given, in
// pairs) and returns its status once its answer's header came, with what
// reads the stream to its end (or until close) and what closes it. An
// answer other than 200 is read whole and closed at once.
func (c *rawClient) open(headers ...string) (status int, read func() rawAnswer, close func()) {
	c.t.Helper()
	ctx, cancel := context.WithCancel(c.ctx)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url, nil)
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", c.sid)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		cancel()
		return 0, func() rawAnswer { return rawAnswer{err: err} }, func() {}
	}
	if resp.StatusCode != http.StatusOK {
		// Read whole and closed, as a client does: its connection is
		// free for the next request.
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		cancel()
		return resp.StatusCode, func() rawAnswer { return rawAnswer{status: resp.StatusCode} }, func() {}
	}
	read = func() rawAnswer {
		a := rawAnswer{status: resp.StatusCode}
		r := sse.NewReader(resp.Body)
		for {
			e, err := r.Next()
			if err != nil || e.Partial {
				if err != nil && !errors.Is(err, io.EOF) {
					a.err = err
				}
				return a
			}
			if !e.Comment {
				a.events = append(a.events, e)
				if c.untilResponse && req.Header.Get("Last-Event-ID") != "" && isResponse(e.Data) {
					return a // a resumption ends at its response
				}
			}
		}
	}
	return resp.StatusCode, read, func() { cancel(); resp.Body.Close() }
}
