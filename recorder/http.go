package recorder

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpvcr/mcpvcr/clock"
	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/store"
)

// HTTP records MCP traffic over HTTP as a reverse proxy in front of
// Upstream: Streamable HTTP (every revision) and the 2024-11-05 HTTP+SSE
// transport. Requests and answers are forwarded unchanged, SSE answers
// event by event with a flush after each; each exchange becomes a stream
// of the session it belongs to.
//
// CONNECT, TRACE and paths that are not clean are refused; with Header
// set, so is every path but the MCP endpoint, the HTTP+SSE message
// endpoints the server announces and the OAuth paths the recorder fronts
// (see pathRefusal). Paths pass through unchanged, except that "/" goes
// to Upstream's path, so a client can be pointed at the proxy's root. A request addressed to
// the proxy itself goes upstream with Upstream's host. A request from
// another site (a foreign Host or Origin: a DNS-rebinding page, say) is
// refused with 403 unless AllowOrigins names it; an allowed one goes
// upstream with its Host and Origin unchanged, and without Header.
//
// Upstream and Sink are required; the zero values of the other fields are
// usable. An HTTP is safe for concurrent use once serving.
type HTTP struct {
	// Upstream is the server's MCP endpoint (or HTTP+SSE stream) URL.
	Upstream *url.URL
	// Sink receives sessions, streams and frames.
	Sink Sink
	// Transport makes the upstream requests. If nil, a clone of
	// http.DefaultTransport is used (or, when a program has replaced it
	// with a RoundTripper of its own, a transport with the standard
	// library's defaults).
	Transport http.RoundTripper
	// Redactor hides credentials (headers, URLs, OAuth bodies, secret JSON
	// members of frames) in what is stored. If nil, the defaults are
	// redacted.
	Redactor *Redactor
	// Name is given to every recorded session.
	Name string
	// Clock times the frames. If nil, the real clock is used.
	Clock clock.Clock
	// Logger receives diagnostics. If nil, nothing is logged.
	Logger *slog.Logger
	// AuthDirect lets clients talk to the authorization servers of an
	// OAuth-protected upstream directly. By default the recorder fronts
	// them (see auth.go): their exchanges are recorded, and the resource
	// a token is asked for is mapped to the upstream's, so tokens are
	// issued for the real server.
	AuthDirect bool
	// Header is added to every request sent to the upstream's origin
	// (not to fronted authorization servers), replacing a header of the
	// same name: a token the user already holds, say. It is not recorded,
	// and it is added only to requests addressed to the proxy itself.
	Header http.Header
	// AllowOrigins names the origins ("http://app.example:3000") whose
	// pages may use the proxy besides loopback ones: requests with that
	// Origin, or with that host as Host, are served. "*" allows every
	// origin. By default a foreign Origin or Host is refused with 403.
	AllowOrigins []string
	// MaxFrame bounds the bytes recorded of one request body, answer body
	// or SSE event: a longer one is forwarded whole, as it arrives, and
	// recorded cut to MaxFrame with its true length
	// (store.Frame.Oversize), so that memory stays bounded. If zero,
	// DefaultMaxFrame. OAuth exchanges, which the recorder may rewrite,
	// are read whole.
	MaxFrame int64
	// Active, if set, is told how many exchanges are under way each time
	// that changes: requests other than GET, whose streams may stay open
	// and idle. mcpvcr record sizes the Go runtime by it (package procs).
	Active func(n int)

	once  sync.Once
	proxy *httputil.ReverseProxy
	// stopping is set by Stop: streams cut from then on were cut by the
	// proxy, not by their client.
	stopping atomic.Bool
	// inflight counts the ServeHTTP calls under way that Close waits for:
	// those begun before it. A WaitGroup's Add at zero must not run beside
	// its Wait, and a client that never stops sends requests while Close
	// waits, so inMu orders each Add against closing.
	inMu     sync.Mutex
	closing  bool
	inflight sync.WaitGroup
	active   atomic.Int64 // ServeHTTP calls under way other than GETs (see Active)
	red      *Redactor
	log      *slog.Logger

	// life ends when Close begins, and with it the upstream requests of
	// the GET streams under way, which only their client would end
	// (endStreams cancels it); drain ends when Close has waited for the
	// other exchanges as long as its ctx allows, and with it their
	// upstream requests (endAll). Lifecycle contexts, the one kind a
	// struct may hold.
	life, drain        context.Context
	endStreams, endAll context.CancelFunc

	mu          sync.Mutex              // guards the fields below
	byID        map[string]*httpSession // Mcp-Session-Id -> session
	byEndpoint  map[string]*httpSession // HTTP+SSE endpoint request URI -> session
	sessionless *httpSession            // the latest legacy session without a server-minted id
	modern      *httpSession            // the modern-era recording run
	all         []*httpSession          // every session not let go, to end them on Close (in no set order)
	pendingInit map[*http.Request]*httpSession
	open        map[*exchange]bool // exchanges under way
	err         error              // first sink error
	// lastRefused is the session last answered 401 or 403: the OAuth
	// exchanges that follow belong to it.
	lastRefused *httpSession
	fronts      map[string]*frontAS // authwire.FrontID -> fronted authorization server
	resources   map[string]string   // resource as the client knows it -> the upstream's
	// metadataAt maps the path of a custom protected-resource metadata
	// location, as the client knows it, to its real URL (auth.go).
	metadataAt map[string]string
	// links ties OAuth exchanges to their client's session (authlink.go).
	links authLinks
	// swept is when the sessions were last looked at for idle ones
	// (retire.go).
	swept time.Time
}

type exchangeKey struct{}

// exchange is one proxied request: its stream and what is still owed.
type exchange struct {
	// act counts the exchange as under way (HTTP.Active) until its
	// answer's last bytes are read, or it ends without them.
	act     *activity
	hs      *httpSession
	st      *store.Stream
	reqIDs  map[string]bool // request ids in the POST body not yet answered
	reqBody []byte
	resumed *store.Stream
	// ref is what the session's event ids lead to while the stream is
	// under way: nil until the stream carries an event id (guarded by
	// hs.mu; see retire.go).
	ref *eventRef
	// host is the Host the client addressed, for rewriting an absolute
	// HTTP+SSE endpoint back to the proxy.
	host string
	// client is the client request's context: done when the client left.
	client context.Context
	// auth is set for a plain HTTP exchange (OAuth) rather than MCP.
	auth *authExchange
	// big is set for a request body longer than MaxFrame.
	big *bigBody
	// ctx is the context of the exchange's writes to the sink; trace
	// hands its placed writes over once the request is sent.
	ctx   context.Context
	trace httptrace.ClientTrace
}

func (h *HTTP) init() {
	h.once.Do(func() {
		h.red = h.Redactor
		if h.red == nil {
			h.red = &Redactor{}
		}
		h.log = h.Logger
		if h.log == nil {
			h.log = slog.New(slog.DiscardHandler)
		}
		if h.Clock == nil {
			h.Clock = clock.Real{}
		}
		t := h.Transport
		if t == nil {
			t = upstreamTransport()
		}
		h.byID = map[string]*httpSession{}
		h.byEndpoint = map[string]*httpSession{}
		h.pendingInit = map[*http.Request]*httpSession{}
		h.fronts = map[string]*frontAS{}
		h.open = map[*exchange]bool{}
		h.resources = map[string]string{}
		h.life, h.endStreams = context.WithCancel(context.Background())
		h.drain, h.endAll = context.WithCancel(context.Background())
		h.proxy = &httputil.ReverseProxy{
			Rewrite:        h.rewrite,
			Transport:      t,
			FlushInterval:  -1,
			BufferPool:     copyBuffers,
			ModifyResponse: h.modifyResponse,
			ErrorHandler:   h.errorHandler,
			ErrorLog:       slog.NewLogLogger(h.log.Handler(), slog.LevelDebug),
		}
	})
}

// upstreamTransport is the transport to the upstream when HTTP.Transport
// is nil: http.DefaultTransport's settings, with more idle connections per
// host and no compression of its own. A program may have replaced
// http.DefaultTransport with a RoundTripper of another type (an
// instrumented one, say); the standard library's defaults stand in for
// its settings then.
func upstreamTransport() *http.Transport {
	t, ok := http.DefaultTransport.(*http.Transport)
	if ok {
		t = t.Clone()
	} else {
		t = &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			ForceAttemptHTTP2:     true,
			MaxIdleConns:          100,
			IdleConnTimeout:       90 * time.Second,
			TLSHandshakeTimeout:   10 * time.Second,
			ExpectContinueTimeout: time.Second,
		}
	}
	t.MaxIdleConnsPerHost = 64
	t.DisableCompression = true // never add Accept-Encoding the client did not send
	return t
}

// ServeHTTP forwards one request upstream and records it.
func (h *HTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.init()
	if h.track() {
		defer h.inflight.Done()
	}
	if h.Upstream == nil || h.Sink == nil {
		http.Error(w, "mcpvcr: recorder has no upstream or sink", http.StatusInternalServerError)
		return
	}
	if why := h.refusal(r); why != "" {
		h.refuse(w, r, why)
		return
	}
	if why := h.pathRefusal(r); why != "" {
		h.refusePath(w, r, why)
		return
	}
	var act *activity
	if h.Active != nil && r.Method != http.MethodGet {
		act = &activity{h: h}
		h.Active(int(h.active.Add(1)))
		defer act.end()
	}
	// Long SSE answers while the client still sends: without full duplex
	// the server closes the request body early (golang/go#40747).
	_ = http.NewResponseController(w).EnableFullDuplex()

	var body []byte
	var big *bigBody
	if r.Body != nil && r.Body != http.NoBody {
		max := maxFrame(h.MaxFrame)
		var err error
		if h.isExchange(r.URL.Path) {
			body, err = io.ReadAll(r.Body)
		} else {
			body, err = readHead(r.Body, max+1, r.ContentLength)
		}
		if err != nil {
			r.Body.Close()
			h.cutBody(r, body, err)
		}
		if len(body) > max && !h.isExchange(r.URL.Path) {
			// Forwarded whole as it arrives; recorded cut to max.
			big = &bigBody{head: body, rest: r.Body, max: max}
			r.Body = big
			body = body[:max]
		} else {
			r.Body.Close()
			r.Body = io.NopCloser(bytes.NewReader(body))
			r.ContentLength = int64(len(body))
		}
	}
	if h.isExchange(r.URL.Path) {
		h.serveExchange(w, r, body)
		return
	}
	ctx := context.WithoutCancel(r.Context())
	x := h.begin(ctx, r, body, big)
	x.act = act
	// The upstream request ends when the client leaves, or when Close
	// begins for a GET stream (held open until its client leaves) and
	// once Close has waited its time for anything else (an answer under
	// way is let finish: its client may have had it all already).
	rctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	end := h.drain
	if r.Method == http.MethodGet {
		end = h.life
	}
	defer context.AfterFunc(end, cancel)()
	x.client = rctx
	h.mu.Lock()
	h.open[x] = true
	h.opened(x)
	h.mu.Unlock()
	defer func() {
		x.hs.settle(x)
		h.mu.Lock()
		delete(h.open, x)
		ended := h.closed(x)
		h.mu.Unlock()
		h.retire(ctx, ended)
	}()
	r = r.WithContext(httptrace.WithClientTrace(context.WithValue(rctx, exchangeKey{}, x), &x.trace))
	h.proxy.ServeHTTP(w, r)
}

// begin finds or creates the session of r and opens its stream. The
// request frame is recorded now, unless big holds a body longer than
// MaxFrame, which records it when it has been forwarded.
func (h *HTTP) begin(ctx context.Context, r *http.Request, body []byte, big *bigBody) *exchange {
	// The body is parsed once: for the session it belongs to, and as the
	// recorded frame (the stream kind matters to Derive only for stderr).
	req := &store.Frame{Raw: body}
	msg := req.DeriveMessage(store.PostStream)
	hs := h.sessionFor(ctx, r, msg)
	hs.mu.Lock()
	hs.mcp++
	hs.mu.Unlock()
	st := &store.Stream{
		Method:        r.Method,
		URL:           h.red.URL(r.URL.RequestURI()),
		RequestHeader: h.red.Header(r.Header),
	}
	if st.RequestHeader != nil && r.Host != "" {
		// Go keeps Host out of Header; replay matches on whether it was
		// the server's own or foreign (a DNS-rebinding probe).
		st.RequestHeader.Set("Host", r.Host)
	}
	x := &exchange{hs: hs, st: st, reqIDs: map[string]bool{}, reqBody: body, host: r.Host}
	switch r.Method {
	case http.MethodPost:
		st.Kind = store.PostStream
		if msg.Method == "subscriptions/listen" {
			st.Kind = store.ListenStream
		}
	case http.MethodGet:
		st.Kind = store.GetStream
		hs.mu.Lock()
		if hs.awaitingSSEGet {
			st.Kind, hs.awaitingSSEGet = store.SSEGetStream, false
		}
		hs.mu.Unlock()
		if id := r.Header.Get("Last-Event-ID"); id != "" {
			st.Kind, st.LastEventID = store.ResumeStream, id
			hs.mu.Lock()
			x.resumed = hs.eventTo[id].stream()
			if x.resumed != nil {
				st.ResumesID = x.resumed.ID
				for rid := range hs.pending[x.resumed.ID] {
					x.reqIDs[rid] = true
				}
			}
			hs.mu.Unlock()
		}
	case http.MethodDelete:
		st.Kind = store.DeleteStream
	default:
		st.Kind = store.PostStream
	}
	for _, m := range append([]jsonrpc.Message{msg}, msg.Members...) {
		if m.Kind == jsonrpc.KindRequest {
			x.reqIDs[string(m.ID)] = true
		}
	}
	// The stream and the request take their places in the session now,
	// so that nothing the server sends for the request can come before
	// them. What it costs to record them is done once the request has
	// left (see handOver), or by any write of the session before
	// that; a body longer than MaxFrame may take long to send, so its
	// stream is recorded at once.
	x.ctx = ctx
	x.trace.WroteRequest = func(httptrace.WroteRequestInfo) { x.handOver() }
	if big != nil {
		big.x, big.ctx = x, ctx
		x.big = big
		hs.openStream(ctx, st)
		return x
	}
	var f *store.Frame // no body, no request frame
	if len(body) > 0 {
		f = req
	}
	hs.placeExchange(st, f, msg)
	return x
}

// handOver hands the session's placed writes to the sink, the stream's
// opening and the request among them. The transport calls it once it
// has sent the request upstream (x.trace), so that the recording work
// runs while the server handles the request rather than before the
// request leaves. The answer may come before that: modifyResponse and
// errorHandler call it first, since the stream's fields may change only
// once its opening is handed over.
func (x *exchange) handOver() { x.hs.flush(x.ctx) }

// rewrite points the outgoing request at the upstream.
func (h *HTTP) rewrite(pr *httputil.ProxyRequest) {
	in := pr.In
	out := pr.Out
	if x, _ := in.Context().Value(exchangeKey{}).(*exchange); x != nil && x.auth != nil {
		// The recorder may have to rewrite the answer (metadata): ask for
		// it uncompressed.
		out.Header.Del("Accept-Encoding")
		if x.auth.target != nil {
			out.URL = x.auth.target
			out.Host = ""
			return
		}
	}
	toProxy := addressedToProxy(in)
	if toProxy {
		for k, vs := range h.Header {
			out.Header[k] = append([]string(nil), vs...)
		}
	}
	u := h.upstreamURL(in)
	out.URL.Scheme, out.URL.Host = u.Scheme, u.Host
	out.URL.Path, out.URL.RawPath, out.URL.RawQuery = u.Path, u.RawPath, u.RawQuery
	if toProxy {
		out.Host = ""
	} else {
		out.Host = in.Host
	}
}

// addressedToProxy reports whether r's Host names the address it arrived
// on (or localhost at that port).
func addressedToProxy(r *http.Request) bool {
	la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return true
	}
	host, port, err := net.SplitHostPort(r.Host)
	if err != nil {
		return false
	}
	lhost, lport, err := net.SplitHostPort(la.String())
	if err != nil || port != lport {
		return false
	}
	return host == lhost || host == "localhost" || (net.ParseIP(host) != nil && net.ParseIP(host).IsLoopback() && net.ParseIP(lhost).IsLoopback())
}

func (h *HTTP) modifyResponse(resp *http.Response) error {
	x, _ := resp.Request.Context().Value(exchangeKey{}).(*exchange)
	if x == nil {
		return nil
	}
	if x.auth != nil {
		return h.exchangeResponse(resp, x)
	}
	ctx := context.WithoutCancel(resp.Request.Context())
	x.handOver()
	if x.big != nil {
		x.big.record()
	}
	x.st.Status = resp.StatusCode
	x.st.ResponseHeader = h.red.Header(resp.Header)
	h.mcpResponse(resp, x)
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
		h.bindSessionID(ctx, x.hs, sid)
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	h.streamableOrNot(x, resp.StatusCode, mt)
	rb := &recordingBody{h: h, x: x, ctx: ctx, rc: resp.Body, sse: mt == "text/event-stream", json: strings.HasSuffix(mt, "json"), length: max(resp.ContentLength, 0)}
	resp.Body = rb
	return nil
}

// streamableOrNot settles, from the answer to x (status, media type
// mt), whether a session without a server-minted id speaks Streamable
// HTTP or HTTP+SSE: a GET taken for an HTTP+SSE stream (see
// httpSession.awaitingSSEGet) that is not answered with one (405: a
// Streamable HTTP server with no GET stream) was a Streamable HTTP GET;
// a POST answered 200 with a body of JSON or events (HTTP+SSE answers
// 202, its answers come on the SSE stream) means the session is
// Streamable HTTP, and its first GET is no HTTP+SSE stream.
func (h *HTTP) streamableOrNot(x *exchange, status int, mt string) {
	switch {
	case x.st.Kind == store.SSEGetStream && (status != http.StatusOK || mt != "text/event-stream"):
		x.st.Kind = store.GetStream
	case x.st.Kind == store.PostStream && status == http.StatusOK && (mt == "text/event-stream" || strings.HasSuffix(mt, "json")):
		x.hs.mu.Lock()
		x.hs.awaitingSSEGet = false
		x.hs.mu.Unlock()
	}
}

// errorHandler answers a request the upstream could not: 502 with a
// JSON-RPC error body, recorded as the stream's upstream error.
func (h *HTTP) errorHandler(w http.ResponseWriter, r *http.Request, err error) {
	x, _ := r.Context().Value(exchangeKey{}).(*exchange)
	if x != nil && x.auth == nil { // an OAuth exchange places nothing
		x.handOver()
	}
	if x != nil && x.big != nil {
		x.big.record()
		if cerr := x.big.clientErr(); cerr != nil {
			// The client cut its body short: it gets no made-up answer.
			h.log.Warn("the client cut its request body short; closing its connection", "err", cerr)
			x.hs.closeStream(context.WithoutCancel(r.Context()), x.st, store.EndClientAborted, cerr)
			panic(http.ErrAbortHandler)
		}
	}
	if errors.Is(err, context.Canceled) && r.Context().Err() != nil {
		if x != nil {
			x.hs.closeStream(context.WithoutCancel(r.Context()), x.st, h.abortEnd(), nil)
		}
		return
	}
	h.log.Warn("upstream request failed", "url", h.red.URL(h.Upstream.String()), "err", err)
	if x != nil && x.auth != nil {
		// An OAuth exchange: answer as an OAuth server would (RFC 6749
		// §5.2), naming where it failed.
		x.st.Status = http.StatusBadGateway
		x.hs.closeStream(context.WithoutCancel(r.Context()), x.st, store.EndUpstreamError, err)
		body, _ := json.Marshal(map[string]string{"error": "temporarily_unavailable",
			"error_description": fmt.Sprintf("mcpvcr: %s %s failed: %v", r.Method, h.red.URL(r.URL.String()), err)})
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadGateway)
		_, _ = w.Write(body)
		return
	}
	id := json.RawMessage("null")
	if x != nil {
		if m := jsonrpc.Parse(x.reqBody); m.HasID() {
			id = m.ID
		}
		x.st.Status = http.StatusBadGateway
		x.hs.closeStream(context.WithoutCancel(r.Context()), x.st, store.EndUpstreamError, err)
	}
	body, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0", "id": id,
		"error": map[string]any{"code": -32603, "message": fmt.Sprintf("mcpvcr: upstream %s failed: %v", h.red.URL(h.Upstream.String()), err)},
	})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadGateway)
	_, _ = w.Write(body)
}

// Err returns the first recording error of any session.
func (h *HTTP) Err() error {
	h.init()
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.err != nil {
		return h.err
	}
	for _, hs := range h.all {
		if e := hs.Err(); e != nil {
			return e
		}
	}
	return nil
}

// rememberPending keeps the request ids x's stream still owed, for a
// stream that resumes it.
func (h *HTTP) rememberPending(x *exchange) {
	if len(x.reqIDs) == 0 {
		return
	}
	x.hs.mu.Lock()
	defer x.hs.mu.Unlock()
	x.hs.notePending(x.st.ID, x.reqIDs)
}
