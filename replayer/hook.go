package replayer

import (
	"context"
	"net"
	"net/http"
	"time"

	"github.com/mcpvcr/mcpvcr/clock"
	"github.com/mcpvcr/mcpvcr/store"
)

// Hook is replay's one extension point: the core calls Act at each
// point where a fault can act (a request arrives, an event or JSON answer
// is about to go or went, a stream opens, resumes or ends, a session
// starts or may be retired), and does what the Action returned says.
// Faults (mcpvcr replay --cut, --delay, --expire-after) is a Hook the core
// calls along with Server.Hook; package chaos is another; so could be any
// fault of a test's own.
//
// Act is called concurrently, from the goroutines serving the client's
// requests. It may block (to delay what follows, through Point.Wait);
// it must not keep p after it returns, except Session, whose pointer
// stays the same for the live session's life.
type Hook interface {
	Act(p *Point) Action
}

// HookFunc adapts a function to a Hook.
type HookFunc func(p *Point) Action

// Act calls f(p).
func (f HookFunc) Act(p *Point) Action { return f(p) }

// Where is the point of replay a Hook is called at.
type Where int

// The points of replay. Each says which of Point's fields are set and
// which of Action's the core heeds; Request, At, Clock and Closed are set
// at every HTTP point.
const (
	// AtArrive: an HTTP request arrived (Request, Body), before it is
	// routed; Session is the live session it names, nil when none. Body,
	// without Status, is read instead of the live body (a hook that sent
	// a server request otherwise than recorded puts back the answer the
	// recording expects); the rest of the Action is ignored.
	AtArrive Where = iota + 1
	// AtRequest: a request of Session, or a 2026-07-28 exchange
	// (Pooled, with Recording and Stream, the exchange it matched), is
	// about to be answered. A Status answers it instead; for a request
	// of Session, Cut resets its connection with nothing answered.
	AtRequest
	// AtOpen: a standalone GET stream of Session is about to open. A
	// Status answers it instead.
	AtOpen
	// AtResume: a GET with Last-Event-ID (LastEventID) of Session. A
	// Status answers it instead.
	AtResume
	// AtResumeEmpty: the resumption with LastEventID found nothing left
	// to send. The Action is ignored.
	AtResumeEmpty
	// AtBefore: event Frame of Stream (StreamNumber in Recording) is
	// about to be sent; Frame is nil before a JSON answer, whole. Skip,
	// Cut, Stop, Replace and Pieces apply (Skip, Replace and Pieces to
	// events only). Over stdio, Frame is the recorded line about to be
	// written and Body the bytes of it replay writes (the live client's
	// ids in place of the recorded ones): Stop, Skip and Replace (its
	// newline added when missing) apply.
	AtBefore
	// AtAfter: event Frame of Stream was written. Cut drops the stream.
	AtAfter
	// AtEnd: Stream ended without the answer to live request LiveID.
	// Send is written as one more event, then the stream ends; Stop ends
	// it without anything more.
	AtEnd
	// AtLine: over stdio, the client sent Body; Matched is the recorded
	// request it matched in Recording, nil when none. Send is written to
	// the client; Stop ends the session there, as a server that exits
	// would: nothing more is read or written, and ServeStdio returns
	// (closing the client where it can, so that it reads the end).
	AtLine
	// AtStart: live Session began (an HTTP session, once issued, or a
	// stdio session). The Action is ignored.
	AtStart
	// AtRetire: Session ended (a DELETE) or was idle long enough to be
	// let go; Session is nil when the core asks about idle sessions in
	// general, possibly with its own locks held: answer from p alone.
	// Keep keeps it.
	AtRetire
	// AtReceive: over stdio, the client's line Body arrived, before
	// replay reads it; Recording is the recorded session followed. Body,
	// when not nil, is read instead of the line; Send answers the line
	// instead of replay: it is written to the client (its newline added
	// when missing) and replay never reads the line; Skip takes the line
	// for the hook's own (the answer to a request the hook sent): replay
	// never reads it, and nothing is written.
	AtReceive
)

// Point is where replay calls a Hook, and what it knows there.
type Point struct {
	Where Where
	// Session is the live session; nil when the request names none or
	// is a 2026-07-28 exchange (then Pooled is set).
	Session *Session
	Pooled  bool
	// Request is the live HTTP request; nil over stdio.
	Request *http.Request
	// Body is the live request's body (over stdio, the client's line).
	Body []byte
	// LastEventID is the Last-Event-ID a resumption sent.
	LastEventID string
	// LiveID is the id of the live request Stream answers, "" for none.
	LiveID string
	// Recording is the recorded session replayed from; Stream the
	// recorded stream and StreamNumber its number in Recording, as
	// mcpvcr show numbers them (post#8 is 8); Frame the recorded event.
	Recording    *store.Recording
	Stream       *store.Stream
	StreamNumber int
	Frame        *store.Frame
	// Matched, over stdio, is the recorded request the line matched.
	Matched *store.Frame
	// Events is how many events (comments aside) were sent on Stream
	// before this point (at AtAfter, the one just sent included); set
	// for Pooled exchanges and at AtAfter.
	Events int
	// Requests is, at AtRequest, how many requests Session has had,
	// this one included.
	Requests int
	// At is when the core called, on Clock, the server's clock.
	At    time.Time
	Clock clock.Clock
	// Closed is closed once the server is closed.
	Closed <-chan struct{}

	ctx context.Context // the request's or the stdio session's
}

// Wait waits d on the server's clock. It reports false when the client
// left or the server closed first.
func (p *Point) Wait(d time.Duration) bool {
	if d <= 0 {
		return true
	}
	select {
	case <-p.Clock.After(d):
		return true
	case <-p.ctx.Done():
		return false
	case <-p.Closed:
		return false
	}
}

// Gone reports whether the client left (or, over stdio, the session
// ended).
func (p *Point) Gone() bool { return p.ctx.Err() != nil }

// Action is what a Hook asks the core to do at a Point. The zero Action
// carries on as recorded.
type Action struct {
	// Status, when not zero, answers the request with it, Header and
	// Body instead of what was recorded.
	Status int
	Header http.Header
	Body   []byte
	// Skip leaves the event out.
	Skip bool
	// Cut drops the connection as a network failure would: no clean end
	// of the body (at AtRequest, a reset before anything is written).
	Cut bool
	// Stop ends the stream (or the answer) here, cleanly: the client
	// left during the hook's wait, or the stream closes early.
	Stop bool
	// Replace is sent instead of the event's recorded bytes.
	Replace []byte
	// Pieces, at AtBefore of an event, is sent instead of its recorded
	// bytes (and of Replace), one piece at a time, each flushed on its
	// own, Gap apart: an event split across writes.
	Pieces [][]byte
	Gap    time.Duration
	// Send is sent to the client (see AtEnd, AtLine and AtReceive).
	Send []byte
	// Sent, if not nil, is called once Send was written (and flushed),
	// with the error of that.
	Sent func(error)
	// Keep keeps a session the core would let go (see AtRetire).
	Keep bool
}

// answers reports whether a answers the request itself.
func (a Action) answers() bool { return a.Status != 0 }

// write writes a's answer to w.
func (a Action) write(w http.ResponseWriter) {
	for k, vs := range a.Header {
		w.Header()[k] = vs
	}
	w.WriteHeader(a.Status)
	_, _ = w.Write(a.Body)
}

// Session is a live session as a Hook sees it. Its pointer identifies
// the live session; the zero Session stands for none. Its methods are
// safe for concurrent use.
type Session struct {
	ls *liveSession // nil in the zero Session
}

// ID returns the Mcp-Session-Id issued to s, "" before one is (or when
// its transport has none).
func (s *Session) ID() string {
	if s == nil || s.ls == nil || s.ls.srv == nil {
		return ""
	}
	return s.ls.sessionID()
}

// Recording returns the recorded session s follows now: the first of
// the candidates still in play.
func (s *Session) Recording() *store.Recording {
	if s == nil || s.ls == nil || s.ls.cur == nil {
		return nil
	}
	return s.ls.recording().Recording
}

// Candidates returns how many recorded sessions s still follows.
func (s *Session) Candidates() int {
	if s == nil || s.ls == nil || s.ls.cur == nil {
		return 0
	}
	return s.ls.cur.sessions()
}

// Settle returns how long s waits, with candidates disagreeing, before
// it settles on one (Server.Settle).
func (s *Session) Settle() time.Duration {
	if s == nil || s.ls == nil || s.ls.srv == nil {
		return DefaultSettle
	}
	return s.ls.srv.settle()
}

// CommitTo makes rec the one recorded session s follows from now on. It
// reports false when rec is not in play, or alone already.
func (s *Session) CommitTo(rec *store.Recording) bool {
	if s == nil || s.ls == nil || s.ls.cur == nil {
		return false
	}
	for _, e := range s.ls.cur.candidates() {
		if e.rec.Recording == rec {
			return s.ls.cur.commitTo(e.rec)
		}
	}
	return false
}

// session returns what a Hook sees of ls.
func (ls *liveSession) session() *Session { return &ls.pub }

// named returns the live session r names (by its Mcp-Session-Id, or its
// HTTP+SSE endpoint), nil when none.
func (s *Server) named(r *http.Request) *Session {
	hs := s.http()
	hs.mu.Lock()
	defer hs.mu.Unlock()
	var ls *liveSession
	if sid := r.Header.Get("Mcp-Session-Id"); sid != "" {
		ls = hs.byID[sid]
	} else {
		ls = hs.byEndpoint[r.URL.RequestURI()]
	}
	if ls == nil {
		return nil
	}
	return ls.session()
}

// sessionID returns the session id issued to ls ("" before one is).
func (ls *liveSession) sessionID() string {
	hs := ls.srv.http()
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return ls.id
}

// act calls the hooks at p: Faults and the Hook.
func (s *Server) act(ctx context.Context, p Point) Action { return s.actWith(ctx, p, true) }

// actWith calls the hooks at p, filling in what every point has: the
// Hook (when hook is set) and Faults, Faults first before an event (its
// delay comes first), second elsewhere. Once one answers, stops, skips,
// cuts or sends, the other is not called; a cut or a keep of either
// holds. It returns the zero Action when there is no hook.
func (s *Server) actWith(ctx context.Context, p Point, hook bool) Action {
	var hs [2]Hook
	if hook && s.Hook != nil {
		hs[0] = s.Hook
	}
	if !s.Faults.zero() {
		hs[1] = s.Faults
	}
	if hs[0] == nil && hs[1] == nil {
		return Action{}
	}
	if p.Where == AtBefore {
		hs[0], hs[1] = hs[1], hs[0]
	}
	p.ctx = ctx
	p.Clock = s.clock()
	p.At = p.Clock.Now()
	p.Closed = s.http().done
	var a Action
	for _, h := range hs {
		if h == nil {
			continue
		}
		q := p // each hook its own copy
		b := h.Act(&q)
		b.Cut, b.Keep = b.Cut || a.Cut, b.Keep || a.Keep
		a = b
		if a.answers() || a.Stop || a.Skip || a.Cut || a.Send != nil || p.Where == AtArrive && a.Body != nil {
			break
		}
	}
	return a
}

// actHTTP calls the hooks at p for request r.
func (s *Server) actHTTP(r *http.Request, p Point) Action {
	return s.actHTTPWith(r, p, true)
}

// actHTTPWith calls the hooks at p for request r, the Hook only when
// hook is set.
func (s *Server) actHTTPWith(r *http.Request, p Point, hook bool) Action {
	p.Request = r
	return s.actWith(r.Context(), p, hook)
}

// reset drops the connection of the request w answers as a peer's reset
// would (a TCP RST: SO_LINGER 0), nothing answered. Where the connection
// cannot be taken over (HTTP/2), the request is aborted instead.
func reset(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}
