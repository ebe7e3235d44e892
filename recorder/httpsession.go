package recorder

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/internal/mcpwire"
	"github.com/mcpvcr/mcpvcr/store"
)

// The session each request belongs to: found by Mcp-Session-Id, by the
// HTTP+SSE endpoint it posts to, or by the conversation it opens.

// httpSession is a recorded session plus what HTTP recording needs to
// know about it.
type httpSession struct {
	*session
	mu      sync.Mutex           // guards eventTo, eventIDs, eventNext, pending, pendingOrder, probes, others, awaitingSSEGet and the refs of its exchanges
	eventTo map[string]*eventRef // SSE event id -> the stream that carried it
	// eventIDs are the keys of eventTo (at most eventWindow, see
	// retire.go): a ring whose oldest is at eventNext once it is full.
	eventIDs  []string
	eventNext int
	// pending holds, per ended stream, the request ids it still owed an
	// answer to; a stream that resumes it inherits them. pendingOrder
	// are its keys, oldest first (at most pendingWindow).
	pending      map[int64]map[string]bool
	pendingOrder []int64
	// probes counts the server/discover requests of a modern session,
	// others its other requests. A session that only saw probes is where
	// a dual-era client's fallback initialize belongs: the probe was
	// refused, or answered without a version the client speaks.
	probes, others int
	// awaitingSSEGet marks a session that has no server-minted id and no
	// GET stream yet: its first GET may open an HTTP+SSE stream (the
	// client may have tried Streamable HTTP first and fallen back).
	awaitingSSEGet bool
	// refused: a request was answered 401 or 403; answered: an MCP
	// request was answered 2xx; mcp counts MCP requests (not OAuth
	// exchanges).
	refused, answered bool
	mcp               int

	// The fields below are guarded by HTTP.mu (retire.go): at is the
	// session's index in HTTP.all (-1 once it is let go); ids and
	// endpoints are the keys of HTTP.byID and HTTP.byEndpoint that lead
	// to the session; open counts its exchanges under way, used is when
	// one last began or ended, and ended is set once its client's
	// DELETE was answered 2xx or its HTTP+SSE stream ended.
	at             int
	ids, endpoints []string
	open           int
	used           time.Time
	ended          bool
}

// sessionFor returns the session r belongs to, creating one when r starts
// a new conversation.
func (h *HTTP) sessionFor(ctx context.Context, r *http.Request, msg jsonrpc.Message) *httpSession {
	h.mu.Lock()
	defer h.mu.Unlock()
	if sid := r.Header.Get("Mcp-Session-Id"); sid != "" {
		if hs, ok := h.byID[sid]; ok {
			return hs
		}
		// A session this proxy did not see start (or one the server has
		// forgotten): record it under the id the client sent.
		hs := h.newSession(ctx, r, store.StreamableHTTP, sid)
		h.byID[sid] = hs
		hs.ids = append(hs.ids, sid)
		return hs
	}
	if hs, ok := h.byEndpoint[r.URL.RequestURI()]; ok {
		return hs
	}
	modern := msg.Kind == jsonrpc.KindRequest && metaVersion(msg.Params) != ""
	switch {
	case r.Method == http.MethodPost && msg.Method == "initialize":
		if m := h.modern; m != nil && m.fallingBack() {
			// A dual-era client whose server/discover was refused.
			h.modern, h.sessionless = nil, m
			return m
		}
		if hs := h.retrySession(r); hs != nil {
			// The retry of an initialize refused for want of the token
			// it now presents.
			return hs
		}
		if hs := h.sessionless; hs != nil && hs.joinable() && !newClient(r, hs) {
			// The retry of an initialize refused for want of a token.
			return hs
		}
		hs := h.newSession(ctx, r, store.StreamableHTTP, "")
		h.sessionless = hs
		return hs
	case modern:
		if h.modern == nil {
			h.modern = h.newSession(ctx, r, store.StreamableHTTP, "")
		}
		h.modern.mu.Lock()
		if msg.Method == "server/discover" {
			h.modern.probes++
		} else {
			h.modern.others++
		}
		h.modern.mu.Unlock()
		return h.modern
	case r.Method == http.MethodGet && h.sessionless == nil && h.modern == nil:
		// A GET that opens a conversation: the HTTP+SSE transport. If its
		// first event is not an endpoint, it is corrected to Streamable HTTP.
		return h.newSession(ctx, r, store.LegacySSE, "")
	}
	return h.latest(ctx)
}

// latest returns the latest conversation: the legacy session without a
// server-minted id, else the modern run, else a new legacy session. The
// caller holds h.mu.
func (h *HTTP) latest(ctx context.Context) *httpSession {
	switch {
	case h.sessionless != nil:
		return h.sessionless
	case h.modern != nil:
		return h.modern
	}
	hs := h.newSession(ctx, nil, store.StreamableHTTP, "")
	h.sessionless = hs
	return hs
}

// upstreamURL is the upstream URL r goes to (rewrite sends it there, and
// a session records it): Upstream's
// scheme and host with r's path and query, or Upstream itself for "/";
// Upstream when r is nil.
func (h *HTTP) upstreamURL(r *http.Request) *url.URL {
	u := *h.Upstream
	if r == nil || r.URL.Path == "" || r.URL.Path == "/" {
		if r != nil && r.URL.RawQuery != "" {
			u.RawQuery = r.URL.RawQuery
		}
		return &u
	}
	u.Path, u.RawPath, u.RawQuery = r.URL.Path, r.URL.RawPath, r.URL.RawQuery
	return &u
}

// newSession creates a recorded session. The caller holds h.mu.
func (h *HTTP) newSession(ctx context.Context, r *http.Request, t store.Transport, externalID string) *httpSession {
	tmpl := store.Session{Name: h.Name, Transport: t, Upstream: h.red.URL(h.upstreamURL(r).String()), ExternalID: externalID}
	h.red.label(&tmpl)
	rs, err := newSession(ctx, h.Sink, h.Clock, h.log, tmpl)
	if err != nil {
		if h.err == nil {
			h.err = err
			h.log.Error("recording stopped; traffic is still forwarded but no longer saved", "err", err)
		}
		// Keep forwarding with a session that records nothing.
		rs = &session{sink: h.Sink, clock: h.Clock, logger: h.log, start: h.Clock.Now(), failed: true, err: err,
			created: true, ready: make(chan struct{})}
		close(rs.ready)
	}
	rs.red = h.red
	hs := &httpSession{session: rs, eventTo: map[string]*eventRef{}, pending: map[int64]map[string]bool{}}
	hs.awaitingSSEGet = externalID == ""
	hs.used = h.Clock.Now()
	h.listLocked(hs)
	return hs
}

// fallingBack reports whether the session saw nothing but
// server/discover probes.
func (hs *httpSession) fallingBack() bool {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return hs.probes > 0 && hs.others == 0
}

func metaVersion(params json.RawMessage) string {
	return mcpwire.RequestMeta(params).ProtocolVersion
}

// bindSessionID ties a server-minted session id to hs.
func (h *HTTP) bindSessionID(ctx context.Context, hs *httpSession, sid string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if cur, ok := h.byID[sid]; ok && cur == hs {
		return
	}
	h.byID[sid] = hs
	hs.ids = append(hs.ids, sid)
	if h.sessionless == hs {
		h.sessionless = nil
	}
	hs.mu.Lock()
	hs.awaitingSSEGet = false // a Streamable HTTP session after all
	hs.mu.Unlock()
	hs.session.mu.Lock()
	hs.sess.ExternalID = sid
	if !hs.failed {
		hs.fail(hs.sink.UpdateSession(ctx, &hs.sess))
	}
	hs.session.mu.Unlock()
}
