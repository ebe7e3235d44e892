package verify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/internal/sse"
	"github.com/mcpvcr/mcpvcr/store"
)

// RunHTTP sends the recorded session to an HTTP server at endpoint, the
// MCP endpoint URL (the SSE stream's URL for the 2024-11-05 HTTP+SSE
// transport): each recorded client frame is POSTed with the recorded
// request headers, minus hop-by-hop headers and redacted values, plus
// header (which may be nil). The recorded Mcp-Session-Id is replaced by
// the one the live server issued; JSON and SSE answers are read as they
// come, and an SSE answer the server ends early is resumed with
// Last-Event-ID; the standalone GET stream and the closing DELETE are
// replayed where the recording had them. Over HTTP+SSE the GET stream is
// opened first and frames are POSTed to the endpoint it names. client
// makes the requests; if nil, a client without timeouts is used.
//
// Errors are as for RunStdio.
func (v *Verifier) RunHTTP(ctx context.Context, endpoint string, client *http.Client, header http.Header) (*Run, error) {
	if v.Recording == nil {
		return nil, errors.New("verifier has no recording")
	}
	switch s := v.Recording.Session; s.Transport {
	case store.StreamableHTTP, store.LegacySSE:
	default:
		return nil, fmt.Errorf("verify over HTTP: session %d was recorded over %s", s.ID, s.Transport)
	}
	if client == nil {
		client = &http.Client{Transport: &http.Transport{DisableCompression: true}}
	}
	c := &httpConn{endpoint: endpoint, post: endpoint, client: client, extra: header, streams: map[int64]*store.Stream{}, ready: make(chan struct{})}
	if v.Recording.Session.Transport != store.LegacySSE {
		close(c.ready)
	}
	for i := range v.Recording.Streams {
		st := &v.Recording.Streams[i]
		c.streams[st.ID] = st
	}
	return v.run(ctx, c)
}

// httpConn is a Streamable HTTP server.
type httpConn struct {
	endpoint string
	client   *http.Client
	extra    http.Header
	streams  map[int64]*store.Stream
	d        *driver
	ctx      context.Context // the run's: cancelled by finish, ending open streams
	cancel   context.CancelFunc
	wg       sync.WaitGroup // exchanges in flight
	// answering counts the exchanges in flight that carry the client's
	// answers to server requests: finish lets them complete.
	answering sync.WaitGroup

	// ready is closed once POSTs may be sent: at once for Streamable
	// HTTP, on the endpoint event for HTTP+SSE.
	ready chan struct{}

	mu        sync.Mutex // guards sessionID, last and post
	sessionID string     // the live Mcp-Session-Id, "" if none
	last      http.Header
	post      string // where POSTs go: endpoint, or the HTTP+SSE endpoint event's URL
}

func (c *httpConn) start(ctx context.Context, d *driver) {
	c.d = d
	c.ctx, c.cancel = context.WithCancel(ctx)
}

// dropHeaders are recorded request headers that are not sent again: hop
// by hop, computed by the transport, or tied to the recorded connection.
var dropHeaders = []string{
	"Host", "Content-Length", "Connection", "Keep-Alive", "Proxy-Connection", "Te", "Trailer",
	"Transfer-Encoding", "Upgrade", "Accept-Encoding", "Last-Event-Id", "Mcp-Session-Id",
}

// header builds the request header from a recorded stream's.
func (c *httpConn) header(st *store.Stream) http.Header {
	h := http.Header{}
	c.mu.Lock()
	rec := c.last
	if st != nil {
		rec = st.RequestHeader
		c.last = rec
	}
	sid := c.sessionID
	c.mu.Unlock()
	for k, vs := range rec {
		for _, v := range vs {
			if !strings.HasPrefix(v, "REDACTED-") {
				h.Add(k, v)
			}
		}
	}
	for _, k := range dropHeaders {
		h.Del(k)
	}
	if rec.Get("Mcp-Session-Id") != "" && sid != "" {
		h.Set("Mcp-Session-Id", sid)
	}
	for k, vs := range c.extra {
		h[http.CanonicalHeaderKey(k)] = vs
	}
	if h.Get("Accept") == "" {
		h.Set("Accept", "application/json, text/event-stream")
	}
	return h
}

// endpointTimeout bounds the wait for the HTTP+SSE endpoint event.
const endpointTimeout = 30 * time.Second

func (c *httpConn) send(ctx context.Context, f *store.Frame, data []byte) error {
	select {
	case <-c.ready:
	case <-ctx.Done():
		return ctx.Err()
	case <-c.ctx.Done():
		return c.ctx.Err()
	case <-c.d.clock.After(endpointTimeout):
		return fmt.Errorf("the server sent no endpoint event on its SSE stream within %v", endpointTimeout)
	}
	c.mu.Lock()
	post := c.post
	c.mu.Unlock()
	var st *store.Stream
	if f != nil {
		st = c.streams[f.StreamID]
	}
	method := http.MethodPost
	if st != nil && st.Method != "" {
		method = st.Method
	}
	req, err := http.NewRequestWithContext(c.ctx, method, post, bytes.NewReader(data))
	if err != nil {
		return err
	}
	req.Header = c.header(st)
	if req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	var ids []string
	answers := true
	for _, m := range messagesOf(data) {
		if m.Kind == jsonrpc.KindRequest {
			ids = append(ids, string(m.ID))
		}
		answers = answers && m.Kind.IsResponse()
	}
	key := ""
	if f != nil {
		key = exchangeKey(&step{f: f})
	}
	if answers {
		c.answering.Add(1)
	}
	closeAfter := c.closeAfter(st)
	c.wg.Go(func() {
		if answers {
			defer c.answering.Done()
		}
		c.exchange(req, key, ids, closeAfter)
	})
	return nil
}

// closeAfter returns how many messages the recorded client read of st's
// event stream before it closed it (a stream that ended client-aborted:
// a 2026-07-28 cancellation, or a client that stopped reading a call it
// cancelled), and -1 when it read st to its end. verify closes the live
// stream there too: what the server sent after, the recorded client
// never saw.
func (c *httpConn) closeAfter(st *store.Stream) int {
	if st == nil || st.End != store.EndClientAborted || !st.SSE() {
		return -1
	}
	n := 0
	for i := range c.d.v.Recording.Frames {
		f := &c.d.v.Recording.Frames[i]
		if f.StreamID == st.ID && f.Direction == store.ServerToClient && f.SSE && len(bytes.TrimSpace(f.Data)) > 0 {
			n++
		}
	}
	return n
}

func messagesOf(data []byte) []jsonrpc.Message {
	m := jsonrpc.Parse(data)
	if m.Kind == jsonrpc.KindBatch {
		return m.Members
	}
	return []jsonrpc.Message{m}
}

func (c *httpConn) open(_ context.Context, st *store.Stream, key string) error {
	req, err := http.NewRequestWithContext(c.ctx, st.Method, c.endpoint, nil)
	if err != nil {
		return err
	}
	req.Header = c.header(st)
	if st.Kind == store.DeleteStream {
		// The session ends: answers that are still owed will not come.
		c.exchange(req, key, nil, -1)
		return nil
	}
	c.wg.Go(func() { c.exchange(req, key, nil, -1) })
	return nil
}

// maxResumes bounds how often one exchange resumes its SSE answer.
const maxResumes = 10

// exchange makes one request and hands what it answers to the driver. An
// SSE answer that ends before answering every request in it is resumed
// with Last-Event-ID, as a client would (the server may close a stream
// mid-call and ask for polling). When the answer (JSON or SSE) ends, the
// requests it did not answer never will be; other answers (202 Accepted
// over HTTP+SSE) leave the answers to the SSE stream. An SSE answer is
// closed after closeAfter messages, as the recorded client closed it
// (-1: read to its end), and not resumed.
func (c *httpConn) exchange(req *http.Request, key string, ids []string, closeAfter int) {
	ev, ok, carried := c.do(req, ids, closeAfter, func() {
		if key != "" {
			c.d.exchangeDone(key)
		}
	})
	if carried {
		defer c.d.exchangeEnded(ids)
	}
	for n := 0; ok && ev.hasID && n < maxResumes && c.ctx.Err() == nil && !c.d.allAnswered(ids); n++ {
		if ev.retry > 0 {
			select {
			case <-c.d.clock.After(min(time.Duration(ev.retry)*time.Millisecond, maxRetryWait)):
			case <-c.ctx.Done():
				return
			}
		}
		get, err := http.NewRequestWithContext(c.ctx, http.MethodGet, c.endpoint, nil)
		if err != nil {
			return
		}
		get.Header = req.Header.Clone()
		get.Header.Del("Content-Type")
		get.Header.Set("Accept", "text/event-stream")
		get.Header.Set("Last-Event-ID", ev.lastID)
		next, nok, _ := c.do(get, ids, -1, func() {})
		if !nok || !next.hasID {
			return
		}
		ev = next
	}
}

// maxRetryWait bounds the wait a server's SSE retry field asks for.
const maxRetryWait = 5 * time.Second

// sseState is what an SSE answer said about resuming it.
type sseState struct {
	lastID string
	hasID  bool
	retry  int // milliseconds; 0 if not given
}

// do makes one request, which carried the requests ids, and delivers its
// answer. It calls done once the response came: at once for an event
// stream, else after its body (done may be called twice). It reports, for an SSE
// answer, where a resumption would start (isSSE is false for anything
// else), and whether the answer was JSON or SSE, which carry answers.
// An SSE answer is closed once closeAfter messages came (not with -1),
// and then reported as not SSE: it is not to be resumed.
func (c *httpConn) do(req *http.Request, ids []string, closeAfter int, done func()) (st sseState, isSSE, carried bool) {
	resp, err := c.client.Do(req)
	defer done()
	if err != nil {
		if c.ctx.Err() == nil {
			c.d.serverGone(fmt.Errorf("%s %s: %w", req.Method, req.URL, err))
		}
		return sseState{}, false, true
	}
	defer resp.Body.Close()
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
		c.mu.Lock()
		c.sessionID = sid
		c.mu.Unlock()
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case mt == "text/event-stream":
		done() // the stream is open: the rest of it comes as it comes
		r := sse.NewReader(resp.Body)
		for n := 0; ; {
			if n == closeAfter {
				return sseState{}, false, true
			}
			e, err := r.Next()
			if e.HasID && !e.Partial {
				st.lastID, st.hasID = e.ID, e.ID != ""
			}
			if e.Retry >= 0 && !e.Partial {
				st.retry = e.Retry
			}
			switch {
			case e.Type == "endpoint" && !e.Partial:
				c.endpointEvent(req, string(e.Data))
			case e.HasData && !e.Partial && len(bytes.TrimSpace(e.Data)) > 0:
				if n++; n == closeAfter {
					// Closed before the message is handed on, as the
					// recorded client closed it before what it did next
					// (its cancellation, say).
					resp.Body.Close()
				}
				c.d.deliver(c.ctx, jsonrpc.Parse(e.Data))
			}
			if err != nil {
				return st, true, true
			}
		}
	case strings.HasSuffix(mt, "json"):
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return sseState{}, false, true
		}
		if resp.StatusCode == http.StatusBadGateway && upstreamFailed(body) {
			c.d.serverGone(fmt.Errorf("the server stopped answering HTTP: %s", upstreamMessage(body)))
			return sseState{}, false, true
		}
		m := jsonrpc.Parse(body)
		if m.Kind.IsResponse() && !m.HasID() && len(ids) == 1 {
			// A refusal without an id (HTTP 400, "id": null) answers the
			// one request of the POST, as in the causal model.
			m.ID = json.RawMessage(ids[0])
			c.d.refused(ids[0], refusal(resp.StatusCode, body))
		}
		if m.Kind != jsonrpc.KindInvalid && m.Kind != jsonrpc.KindEmpty {
			c.d.deliver(c.ctx, m)
		}
		return sseState{}, false, true
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode >= 400 && len(ids) == 1 {
		c.d.refused(ids[0], refusal(resp.StatusCode, body))
	}
	return sseState{}, false, resp.StatusCode >= 400
}

// refusal says how the server refused a request: the HTTP status and the
// start of the body.
func refusal(status int, body []byte) string {
	text := strings.Join(strings.Fields(string(body)), " ")
	if len(text) > 200 {
		text = text[:200] + "…"
	}
	out := fmt.Sprintf("HTTP %d %s", status, http.StatusText(status))
	if text != "" {
		out += ": " + strconv.Quote(text)
	}
	return out
}

// endpointEvent learns where HTTP+SSE POSTs go: data is a URL relative
// to the stream's.
func (c *httpConn) endpointEvent(req *http.Request, data string) {
	u, err := req.URL.Parse(strings.TrimSpace(data))
	if err != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	select {
	case <-c.ready:
		return // only the first counts
	default:
	}
	c.post = u.String()
	close(c.ready)
}

// upstreamFailed reports whether body is the error mcpvcr's recording
// proxy answers when the upstream server is unreachable.
func upstreamFailed(body []byte) bool {
	return strings.HasPrefix(upstreamMessage(body), "mcpvcr: upstream")
}

func upstreamMessage(body []byte) string {
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	_ = json.Unmarshal(body, &e)
	return e.Error.Message
}

// finish lets the client's answers to server requests in flight
// complete (for at most lateGrace: the recorded client had sent them, and
// a server may act on them), then ends the streams still open and waits
// for them. The driver has sent every answer it will before it calls
// finish.
func (c *httpConn) finish(ctx context.Context) {
	answered := make(chan struct{})
	go func() {
		c.answering.Wait()
		close(answered)
	}()
	select {
	case <-answered:
	case <-c.d.clock.After(lateGrace):
	case <-ctx.Done():
	}
	c.cancel()
	c.wg.Wait()
	<-answered
}
