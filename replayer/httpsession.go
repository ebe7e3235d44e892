package replayer

// Which live session a request belongs to, and the identities (session
// ids, HTTP+SSE endpoints) replay issues to each live client.

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/store"
)

// liveSessionFor finds the live session of r or starts one. It returns nil
// and a status when the client names a session that does not exist.
func (s *Server) liveSessionFor(r *http.Request, live jsonrpc.Message) (*liveSession, int) {
	ls, status, started := s.findSession(r, live)
	if started {
		s.act(context.Background(), Point{Where: AtStart, Session: ls.session()})
	}
	return ls, status
}

// findSession is liveSessionFor; started reports that it started ls.
func (s *Server) findSession(r *http.Request, live jsonrpc.Message) (ls *liveSession, status int, started bool) {
	hs := s.http()
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if sid := r.Header.Get("Mcp-Session-Id"); sid != "" {
		if ls, ok := hs.byID[sid]; ok {
			return ls, 0, false
		}
		return nil, http.StatusNotFound, false
	}
	if ls, ok := hs.byEndpoint[r.URL.RequestURI()]; ok {
		return ls, 0, false
	}
	if s.opens(r, live, hs.anonymous) {
		s.sweepLocked()
		cur, err := s.httpCursor()
		if err != nil {
			s.logger().Warn("reading the recorded sessions failed", "err", err)
			return nil, http.StatusInternalServerError, false
		}
		ls := &liveSession{sseClaimed: r.Method == http.MethodGet, srv: s, cur: cur, released: map[*store.Frame]outFrame{},
			changed: make(chan struct{}), used: map[int64]bool{}, cutEvents: map[int64]int{},
			sentEvents: map[string]sentEvent{}, stalled: map[string]time.Time{}, stallReports: map[string]*Mismatch{}}
		ls.pub.ls = ls
		ls.publish(ls.cur.start())
		hs.anonymous = ls
		hs.all = append(hs.all, ls)
		return ls, 0, true
	}
	return hs.anonymous, 0, false
}

// opens reports whether r, which names no session, starts a new
// conversation rather than continuing the latest one: an initialize (but
// not one that follows a refused server/discover of the same client), a
// server/discover, or a GET that opens an HTTP+SSE stream.
func (s *Server) opens(r *http.Request, live jsonrpc.Message, cur *liveSession) bool {
	if cur == nil {
		return true
	}
	switch {
	case r.Method == http.MethodPost && live.Method == "server/discover":
		return true
	case r.Method == http.MethodPost && live.Method == "initialize":
		// Only a client that probed with server/discover and was refused
		// goes on in the same conversation; any other initialize is a new
		// client (several may connect at once).
		return !cur.onlyDiscovered()
	case r.Method == http.MethodGet && r.Header.Get("Last-Event-ID") == "":
		// An HTTP+SSE GET opens the conversation it carries: it joins the
		// latest session only if that has none yet (a client that tried
		// Streamable HTTP first and fell back). Claimed here, under hs.mu,
		// so that two clients connecting at once never share one.
		if cur.recording().Session.Transport != store.LegacySSE {
			return false
		}
		if cur.sseClaimed {
			return true
		}
		cur.sseClaimed = true
		return false
	}
	return false
}

// onlyDiscovered reports whether the session has matched a
// server/discover and no initialize yet: a dual-era client about to fall
// back.
func (ls *liveSession) onlyDiscovered() bool {
	ls.cur.mu.Lock()
	defer ls.cur.mu.Unlock()
	discovered := false
	e := ls.cur.cands[0]
	for i, fr := range e.frames {
		if fr.C2S && e.done.has(i) {
			switch fr.Msg.Method {
			case "initialize":
				return false
			case "server/discover":
				discovered = true
			}
		}
	}
	return discovered
}

// boundEndpoint reports whether r is addressed to an HTTP+SSE endpoint
// a replayed GET stream announced.
func (s *Server) boundEndpoint(r *http.Request) bool {
	hs := s.http()
	hs.mu.Lock()
	defer hs.mu.Unlock()
	_, ok := hs.byEndpoint[r.URL.RequestURI()]
	return ok
}

// bindEndpoint routes the POSTs to an HTTP+SSE endpoint, as announced by
// a replayed endpoint event, to ls, and returns the endpoint to announce:
// the recorded one, or, when another live client holds it already, the
// recorded one with a query parameter that makes it this client's own.
func (s *Server) bindEndpoint(r *http.Request, data []byte, ls *liveSession) []byte {
	raw := strings.TrimSpace(string(data))
	u, err := r.URL.Parse(raw)
	if err != nil {
		return data
	}
	hs := s.http()
	hs.mu.Lock()
	defer hs.mu.Unlock()
	announce := raw
	for n := 2; hs.byEndpoint[u.RequestURI()] != nil && hs.byEndpoint[u.RequestURI()] != ls; n++ {
		sep := "?"
		if strings.Contains(raw, "?") {
			sep = "&"
		}
		announce = fmt.Sprintf("%s%smcpvcrClient=%d", raw, sep, n)
		if u, err = r.URL.Parse(announce); err != nil {
			return data
		}
	}
	hs.byEndpoint[u.RequestURI()] = ls
	if hs.anonymous == ls {
		hs.anonymous = nil
	}
	if announce == raw {
		return data
	}
	return []byte(announce)
}

// httpCursor returns the cursor a new live HTTP session starts with:
// over the Source (loading only the candidates in play) when s reads one,
// else over every HTTP recording.
func (s *Server) httpCursor() (*cursor, error) {
	if s.lazyHTTP() {
		// Sessions are read from the cassette, not the network: they
		// are the server's for as long as it serves.
		c, err := newLazyCursor(context.Background(), s.Source, s.Match, false)
		if c != nil {
			c.now = s.clock().Now
		}
		return c, err
	}
	c := newCursor(s.httpRecordings(), s.Match, false)
	c.now = s.clock().Now
	return c, nil
}

// lazyHTTP reports whether HTTP replay reads its sessions from the Source
// as the candidates in play need them (see Server.Load).
func (s *Server) lazyHTTP() bool { return len(s.Recordings) == 0 && s.Source != nil }

// httpRecordings returns every recording HTTP replay serves. Reading from
// a Source, it loads every session, once: only when the index of what is
// answered from every session at once cannot be read (see atOnce).
func (s *Server) httpRecordings() []*recording {
	if s.lazyHTTP() {
		s.allOnce.Do(func() {
			recs, err := load(context.Background(), s.Source.ix.DB, s.Source.ix.IDs...)
			if err != nil {
				s.logger().Warn("reading the recorded sessions failed", "err", err)
			}
			s.all = recs
		})
		return s.all
	}
	var recs []*recording
	for _, r := range s.recordings() {
		if r.Session.Transport == store.StreamableHTTP || r.Session.Transport == store.LegacySSE {
			recs = append(recs, r)
		}
	}
	if len(recs) == 0 {
		return s.recordings()
	}
	return recs
}

// issueID gives ls the recorded session id once the leader answered
// initialize with one, unless another live client holds it already.
func (ls *liveSession) issueID(recorded string) string {
	if recorded == "" {
		return ""
	}
	hs := ls.srv.http()
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if ls.id != "" {
		return ls.id
	}
	// An id is issued once, even after its session was let go: a
	// client still holding it must get 404, not another's session.
	if hs.issued == nil {
		hs.issued = map[string]int{}
	}
	id := recorded
	for n := hs.issued[recorded] + 1; n > 1 || hs.byID[id] != nil; n++ {
		if id = fmt.Sprintf("%s-%d", recorded, n); hs.byID[id] == nil {
			hs.issued[recorded] = n
			break
		}
	}
	if id == recorded {
		hs.issued[recorded] = 1
	}
	ls.id = id
	hs.byID[id] = ls
	if hs.anonymous == ls {
		hs.anonymous = nil
	}
	return id
}

// sessionIdle is how long a live session may have no request in flight
// (no open stream either) before replay lets it go, as a server expires
// an idle session: its client then gets 404 and starts a new one.
const sessionIdle = 10 * time.Minute

// busy notes a request of ls beginning (+1) or ending (-1).
func (ls *liveSession) busy(d int) {
	now := ls.srv.clock().Now()
	ls.mu.Lock()
	ls.inflight += d
	ls.last = now
	ls.mu.Unlock()
}

// idle reports whether ls has had nothing in flight since before t.
func (ls *liveSession) idle(t time.Time) bool {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return ls.inflight == 0 && !ls.last.IsZero() && ls.last.Before(t)
}

// retire lets go of ls, whose session ended: its report is kept (folded
// into one per recorded session when it has nothing to say), and its id,
// endpoint and cursor are dropped, so that a request naming it gets 404
// as from a server that ended it, unless the Hook keeps it (chaos
// replay keeps every session, since its verdicts read them at the end).
func (s *Server) retire(ls *liveSession) {
	if s.act(context.Background(), Point{Where: AtRetire, Session: ls.session()}).Keep {
		return
	}
	rep := ls.report()
	hs := s.http()
	hs.mu.Lock()
	defer hs.mu.Unlock()
	s.retireLocked(ls, rep)
}

// retireLocked is retire with hs.mu held.
func (s *Server) retireLocked(ls *liveSession, rep *Report) {
	hs := s.hs
	i := slices.Index(hs.all, ls)
	if i < 0 {
		return // retired already
	}
	hs.all = slices.Delete(hs.all, i, i+1)
	hs.keepReport(rep)
	if ls.id != "" && hs.byID[ls.id] == ls {
		delete(hs.byID, ls.id)
	}
	maps.DeleteFunc(hs.byEndpoint, func(_ string, x *liveSession) bool { return x == ls })
	if hs.anonymous == ls {
		hs.anonymous = nil
	}
}

// keepReport keeps the report of a retired session. One with nothing to
// say (every frame matched, none unsent, one candidate) is added to the
// clean report of its recorded session, so that what a replay keeps does
// not grow with the clients it served.
func (hs *httpState) keepReport(rep *Report) {
	if !rep.OK() || len(rep.Unsent) > 0 || rep.Candidates > 1 {
		hs.retired = append(hs.retired, rep)
		return
	}
	if hs.clean == nil {
		hs.clean = map[int64]*Report{}
	}
	c := hs.clean[rep.SessionID]
	if c == nil {
		c = &Report{SessionID: rep.SessionID, Candidates: rep.Candidates}
		hs.clean[rep.SessionID] = c
		hs.retired = append(hs.retired, c)
	}
	c.Clients += rep.Clients
	c.Received += rep.Received
	c.Matched += rep.Matched
	c.Synthesized += rep.Synthesized
	c.Discovered += rep.Discovered
	c.Unrecorded += rep.Unrecorded
	c.Cut += rep.Cut
	c.Resumed += rep.Resumed
}

// sweepLocked retires the sessions idle for sessionIdle, at most once a
// minute. hs.mu is held.
func (s *Server) sweepLocked() {
	hs := s.hs
	now := s.clock().Now()
	if now.Sub(hs.swept) < time.Minute || s.act(context.Background(), Point{Where: AtRetire}).Keep {
		return
	}
	hs.swept = now
	for _, ls := range slices.Clone(hs.all) {
		if ls != hs.anonymous && ls.idle(now.Add(-sessionIdle)) {
			s.retireLocked(ls, ls.report())
		}
	}
}
