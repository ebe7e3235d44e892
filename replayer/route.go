package replayer

// What an HTTP request is: route decides it once, and ServeHTTP answers
// each kind.

import (
	"net/http"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/internal/localsite"
	"github.com/mcpvcr/mcpvcr/internal/script"
)

// routeKind is what a request is, as route decides.
type routeKind int

const (
	toSession  routeKind = iota // a frame of a conversation
	toPool                      // a 2026-07-28 exchange of its own (pool.go)
	toDiscover                  // a dual-era client's probe no recording holds
	toRefusal                   // a shape the server refused (door.go)
	toInvented                  // a shape no recorded request has (door.go)
	toForeign                   // a foreign Origin or Host
)

// routed is what route decided about a request, with what its answer
// needs.
type routed struct {
	kind     routeKind
	x        *poolEntry  // toPool: the exchange
	exact    bool        // toPool: x has the request's very shape
	refusals []doorShape // toRefusal: the recorded refusals of its shape
	door     doorShape   // toInvented: its shape
	shapes   []doorShape // toInvented: every recorded shape
	why      string      // toForeign: why it is refused
}

// route decides what r, carrying live, is: a 2026-07-28 exchange of its
// own; a dual-era client's server/discover probe, which falls back to
// initialize; a request of a recorded refusal's shape, or of a shape no
// recorded request has (answered by replay itself); a request from a
// foreign Origin or naming a foreign Host (DNS rebinding protection); or
// a frame of a conversation. Origin and Host are checked here, once: a
// recorded refusal answers only a request of its very shape (a foreign
// Origin included); any other request must pass the checks a server
// makes first.
func (s *Server) route(r *http.Request, live jsonrpc.Message) routed {
	why := foreign(r)
	if x, exact := s.pooled(r, live); x != nil && (exact || why == "") {
		return routed{kind: toPool, x: x, exact: exact}
	}
	if s.legacyDiscover(r, live) {
		return routed{kind: toDiscover}
	}
	if rt, ok := s.door(r); ok {
		return rt
	}
	if why != "" {
		return routed{kind: toForeign, why: why}
	}
	return routed{kind: toSession}
}

// foreign returns why r comes from an Origin or names a Host replay
// refuses (DNS rebinding protection), "" when it does not.
func foreign(r *http.Request) string {
	if why := localsite.Foreign(r, nil, nil); why != "" {
		return "mcpvcr replay: " + why + " is not allowed (DNS rebinding protection)"
	}
	return ""
}

// pooled returns the 2026-07-28 exchange of its own that answers r, nil
// when r is none; exact reports that it has r's very shape.
func (s *Server) pooled(r *http.Request, live jsonrpc.Message) (x *poolEntry, exact bool) {
	p := s.pool()
	if p == nil || r.Header.Get("Mcp-Session-Id") != "" || s.boundEndpoint(r) {
		return nil, false
	}
	return p.find(r, live)
}

// servePooled answers r with x, a 2026-07-28 exchange of its own, once a
// strict server would take it and the hooks let it through.
func (s *Server) servePooled(w http.ResponseWriter, r *http.Request, live jsonrpc.Message, body []byte, x *poolEntry, exact bool) {
	p := s.pool()
	if s.Strict && !exact && strictRefuses(w, r, live, body, x.rec, "", true, p.mismatch) {
		return
	}
	if a := s.actHTTP(r, Point{Where: AtRequest, Pooled: true, Recording: x.rec.Recording, Stream: x.st, StreamNumber: script.Ordinal(x.rec.Recording, x.st.ID), Body: body}); a.answers() {
		p.unuse(r, live, exact) // the exchange stays unused, for the client's retry
		a.write(w)
		return
	}
	p.serve(w, r, live, x)
}
