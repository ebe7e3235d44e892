package replayer

// The door: what an HTTP replay answers before any conversation sees a
// request, by the request's shape alone. A server refuses some requests
// for their shape (no Mcp-Session-Id on a GET, a foreign Host or Origin,
// no token): such a request gets the recorded refusal of that shape, at
// once. A request of a shape no recorded exchange has gets an answer
// replay invents, at once: a 4xx naming the closest recorded exchange
// (with a JSON-RPC -32019 body when the request was JSON-RPC), logged the
// moment it is sent and reported, so that replay exits 1.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/internal/mcpwire"
	"github.com/mcpvcr/mcpvcr/internal/reqshape"
	"github.com/mcpvcr/mcpvcr/internal/script"
	"github.com/mcpvcr/mcpvcr/store"
)

// doorShape is the door of a recorded request (see reqshape.Door), with
// its session and stream, read from the exchange index when needed (see
// resolve) from sid and stid.
type doorShape struct {
	reqshape.Door
	rec       *recording
	st        *store.Stream
	sid, stid int64
}

// liveDoor returns the door shape of a live request.
func liveDoor(r *http.Request) doorShape {
	return doorShape{Door: reqshape.LiveDoor(r)}
}

// resolve returns d with its recording and stream read.
func (s *Server) resolve(d doorShape) (doorShape, bool) {
	if d.rec != nil {
		return d, true
	}
	rec, st, err := s.atOnce().stream(d.sid, d.stid)
	if err != nil {
		s.logger().Warn("reading a recorded session failed", "session", d.sid, "err", err)
		return d, false
	}
	d.rec, d.st = rec, st
	return d, true
}

// doorState is what the door knows of the recordings: every recorded MCP
// request's door shape, computed once.
type doorState struct {
	once   sync.Once
	shapes []doorShape
	// byKey groups shapes by what same compares, so that a request is
	// checked in constant time, whatever the number of sessions.
	byKey map[reqshape.Key]*doorGroup

	mu       sync.Mutex // guards invented and refusals
	invented []string   // what replay answered of its own, for the summary
	// refusals counts requests answered with a recorded refusal of their
	// shape.
	refusals int
	// discovers counts the server/discover probes answered as a legacy
	// server would, because no recording holds one.
	discovers int
}

func (s *Server) doorShapes() []doorShape {
	ds := &s.http().door
	ds.once.Do(func() {
		// The distinct shapes, each with its first request: what the door
		// decides by is the same.
		ds.shapes = s.atOnce().shapes
		ds.byKey = map[reqshape.Key]*doorGroup{}
		for _, d := range ds.shapes {
			for _, k := range d.Keys() {
				g := ds.byKey[k]
				if g == nil {
					g = &doorGroup{}
					ds.byKey[k] = g
				}
				if d.Refused {
					g.refusals = append(g.refusals, d)
				} else {
					g.answered = true
				}
			}
		}
	})
	return ds.shapes
}

// doorGroup is what was recorded of one reqshape.Key: whether the server
// answered any request of it, and the refusals.
type doorGroup struct {
	answered bool
	refusals []doorShape
}

// door decides whether r is answered by its shape: with the recorded
// refusal when every recorded request of its shape was refused and r
// names no live session, or with an answer of replay's own when no
// recorded request has its shape. It reports false when the
// conversation decides.
func (s *Server) door(r *http.Request) (routed, bool) {
	shapes := s.doorShapes()
	if len(shapes) == 0 {
		return routed{}, false
	}
	ld := liveDoor(r)
	ld.HostUnknown = false
	if s.resumesServed(r, ld) {
		return routed{}, false // the live session serves the rest of the stream (resume)
	}
	var refusals []doorShape
	if g := s.http().door.byKey[ld.Keys()[0]]; g != nil {
		if g.answered {
			return routed{}, false // a shape the server answered: the conversation decides
		}
		refusals = g.refusals
	}
	if len(refusals) > 0 {
		if r.Header.Get("Mcp-Session-Id") != "" && s.knownSession(r) {
			return routed{}, false // the live session's conversation decides
		}
		return routed{kind: toRefusal, refusals: refusals}, true
	}
	return routed{kind: toInvented, door: ld, shapes: shapes}, true
}

// resumesServed reports whether r is a resumption the live session
// answers itself although no recording holds one: a GET with
// Last-Event-ID whose shape without it the server answered. A recording
// rarely holds a resumption, yet every SSE answer with event ids can be
// resumed, and a cut of replay's own (--cut, chaos) asks for one: the
// rest of the stream is in the recording. Over Streamable HTTP with
// session ids the GET must name a session replay issued; otherwise any
// live session could not be found anyway, and the conversation answers
// 404 as a server does.
func (s *Server) resumesServed(r *http.Request, ld doorShape) bool {
	if r.Method != http.MethodGet || !ld.Resume {
		return false
	}
	plain := ld
	plain.Resume = false
	g := s.http().door.byKey[plain.Keys()[0]]
	if g == nil || !g.answered {
		return false
	}
	return !ld.Session || s.knownSession(r)
}

// knownSession reports whether r names a live session replay issued.
func (s *Server) knownSession(r *http.Request) bool {
	hs := s.http()
	hs.mu.Lock()
	defer hs.mu.Unlock()
	_, ok := hs.byID[r.Header.Get("Mcp-Session-Id")]
	return ok
}

// answerRefusal answers r as the server refused a request of its shape:
// the refusal of the same request body if one was recorded, else the
// first.
func (s *Server) answerRefusal(w http.ResponseWriter, r *http.Request, live jsonrpc.Message, refusals []doorShape) {
	pick := refusals[0]
	// The first refusal of r's shape whose body is r's, else the first.
	key := liveDoor(r)
	key.HostUnknown = false
	k := key.Keys()[0].String()
	var infos []string
	if live.Kind != jsonrpc.KindEmpty {
		infos = []string{s.Match.RequestKey(live)}
	}
	a := s.atOnce()
	rec, st, ok := a.pick(script.RowRefusal, k, infos, 0)
	if !ok && infos != nil {
		rec, st, ok = a.pick(script.RowRefusal, k, nil, 0)
	}
	if ok {
		pick.rec, pick.st = rec, st
	} else if pick, ok = s.resolve(pick); !ok {
		writeJSONError(w, http.StatusInternalServerError, nil, -32603, "mcpvcr replay: reading the recorded refusal failed")
		return
	}
	ds := &s.http().door
	ds.mu.Lock()
	ds.refusals++
	ds.mu.Unlock()
	rec, st = pick.rec, pick.st
	s.logger().Info("answered with the recorded refusal of a request of this shape", "request", r.Method+" "+r.URL.Path,
		"status", st.Status, "session", rec.Session.ID, "stream", script.Ordinal(rec.Recording, st.ID))
	h := w.Header()
	for k, vs := range st.ResponseHeader {
		if !mcpwire.HopHeader(k) && !strings.EqualFold(k, "Mcp-Session-Id") {
			h[k] = slices.Clone(vs)
		}
	}
	var body []byte
	for _, f := range rec.serverFrames()[st.ID] {
		if live.Kind == jsonrpc.KindRequest && f.Kind.IsResponse() {
			if b, err := jsonrpc.Splice(f.Data, live.ID, "id"); err == nil {
				body = append(body, b...)
				continue
			}
		}
		body = append(body, f.Raw...)
	}
	w.WriteHeader(st.Status)
	_, _ = w.Write(body)
}

// invent answers a request of a shape no recorded request has, at once:
// 403 for a foreign Origin or Host, 405 for a method never recorded, else
// 400; the answer names the closest recorded request and how r differs.
func (s *Server) invent(w http.ResponseWriter, r *http.Request, live jsonrpc.Message, ld doorShape, shapes []doorShape) {
	best, bestN := shapes[0], -1
	methodSeen := false
	for _, d := range shapes {
		methodSeen = methodSeen || d.Method == ld.Method
		n := len(d.Differences(ld.Door))
		if d.Method != ld.Method {
			n += 100 // a request of the same method is closer than any other
		}
		if bestN < 0 || n < bestN || (n == bestN && !d.Refused && best.Refused) {
			best, bestN = d, n
		}
	}
	what := r.Method + " " + r.URL.Path
	if live.Method != "" {
		what += " " + live.Method
	}
	best, ok := s.resolve(best)
	if !ok {
		writeJSONError(w, http.StatusInternalServerError, nil, -32603, "mcpvcr replay: reading the closest recorded request failed")
		return
	}
	status := http.StatusBadRequest
	switch {
	case ld.ForeignOrigin || ld.ForeignHost:
		status = http.StatusForbidden
	case !methodSeen:
		status = http.StatusMethodNotAllowed
	}
	rec, st := best.rec, best.st
	closest := fmt.Sprintf("session %d stream %d (%s %d", rec.Session.ID, script.Ordinal(rec.Recording, st.ID), st.Method, st.Status)
	if f := script.FirstClientFrame(rec.Recording, st.ID); f != nil && f.Method != "" {
		closest += " " + f.Method
	}
	closest += ")"
	why := fmt.Sprintf("no recorded request has the shape of %s; closest is %s: %s", what, closest, strings.Join(best.Differences(ld.Door), ", "))
	s.noteInvented(what, status, why)
	msg := "mcpvcr replay: " + why
	switch live.Kind {
	case jsonrpc.KindRequest, jsonrpc.KindNotification, jsonrpc.KindBatch:
		var id json.RawMessage
		if live.Kind == jsonrpc.KindRequest {
			id = live.ID
		}
		writeJSONError(w, status, id, NoMatchCode, msg)
	default:
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(status)
		_, _ = fmt.Fprintln(w, msg)
	}
}

// noteInvented logs and keeps, for the summary and the exit code, an
// answer replay gave of its own: what was asked, its status and why.
func (s *Server) noteInvented(what string, status int, why string) {
	s.logger().Warn("answered a request of its own: "+why, "status", status)
	ds := &s.http().door
	ds.mu.Lock()
	ds.invented = append(ds.invented, fmt.Sprintf("%s answered %d: %s", what, status, why))
	ds.mu.Unlock()
}

// Invented returns, for people, each request replay answered of its own
// because no recorded request had its shape.
func (s *Server) Invented() []string {
	ds := &s.http().door
	ds.mu.Lock()
	defer ds.mu.Unlock()
	return slices.Clone(ds.invented)
}

// refusals returns how many requests got the recorded refusal of their
// shape.
func (s *Server) refusals() int {
	ds := &s.http().door
	ds.mu.Lock()
	defer ds.mu.Unlock()
	return ds.refusals
}

// LegacyDiscoverCode is the JSON-RPC error code a replay of legacy
// recordings answers server/discover with over stdio, as a legacy server
// answers a method it does not know (Method not found).
const LegacyDiscoverCode = -32601

// legacyDiscover reports whether r is a dual-era client's
// server/discover probe no recording holds.
func (s *Server) legacyDiscover(r *http.Request, live jsonrpc.Message) bool {
	if r.Method != http.MethodPost || live.Kind != jsonrpc.KindRequest || live.Method != "server/discover" || r.Header.Get("Mcp-Session-Id") != "" {
		return false
	}
	return !s.atOnce().discover // asked of the index, not of every session
}

// answerLegacyDiscover answers a dual-era client's server/discover probe
// the way a legacy server would: with 400 and a JSON-RPC error that is
// no modern one (the refusal that sends the client to initialize).
func (s *Server) answerLegacyDiscover(w http.ResponseWriter, live jsonrpc.Message) {
	ds := &s.http().door
	ds.mu.Lock()
	ds.discovers++
	ds.mu.Unlock()
	s.logger().Info("answered server/discover as a legacy server would (400): the recording holds none, so the client falls back to initialize")
	writeJSONError(w, http.StatusBadRequest, live.ID, -32000, "Bad Request: Server not initialized (mcpvcr replay: the recorded server is a legacy one, which knows no server/discover)")
}

// discovers returns how many server/discover probes were answered as a
// legacy server would.
func (s *Server) discovers() int {
	ds := &s.http().door
	ds.mu.Lock()
	defer ds.mu.Unlock()
	return ds.discovers
}
