package chaos

import (
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/internal/mcpwire"
	"github.com/mcpvcr/mcpvcr/replayer"
	"github.com/mcpvcr/mcpvcr/store"
)

// Hook is chaos replay as a replayer.Hook: set it as a replayer.Server's
// Hook and it draws faults from Config's seed at places in each recorded
// session, injects them, and judges what the client does next (see
// Write). The zero Hook draws from every kind with seed 0; its methods
// are safe for concurrent use.
type Hook struct {
	Config
	// Logger receives a warning for each fault injected. If nil,
	// nothing is logged.
	Logger *slog.Logger

	once sync.Once
	// mu guards everything below. A replayer.Session's methods may be
	// called while holding it.
	mu sync.Mutex
	// plans are the faults of each recorded session, by session id.
	plans map[int64][]Fault
	// actions are the client's requests, in the order they arrived.
	actions []chaosAction
	// injected are the faults injected, in order.
	injected []*injection
	// done marks a planned fault injected for a live session.
	done map[doneKey]bool
	// events counts the events sent on a recorded stream of a live
	// session (comments aside).
	events map[liveStream]int
	// refuseGet marks live sessions whose GET streams are refused;
	// expired those that expired.
	refuseGet map[*replayer.Session]*injection
	expired   map[*replayer.Session]*injection
	// posts counts the POSTs of each live session (a 503 aside).
	posts map[*replayer.Session]int
	// awaiting are faults whose verdict waits for the next event sent
	// on a stream: a delay, a dropped priming event, a late resumption.
	awaiting map[liveStream]*injection
	// retry are the retry faults injected on a stream's priming event,
	// whose cut is still to come; limited the limit_data faults whose
	// half event is being written, to be cut once it was; redeliver the
	// redeliver faults whose resumption is still to come.
	retry, limited, redeliver map[liveStream]*injection
	// sessions are the live sessions, in the order they began, for the
	// faults they never reached; pool stands for the 2026-07-28
	// exchanges.
	sessions []*replayer.Session
	pool     *replayer.Session
	// stdio is the state of each stdio session (stdio.go).
	stdio map[*replayer.Session]*stdioState
	// exited holds the recorded sessions whose exit was taken: a
	// restarted server (another stdio session of this replay) works.
	exited map[int64]bool
	// poolRecs are the 2026-07-28 sessions chaos drew plans for.
	poolRecs map[int64]*store.Recording
	// sent holds, for each recorded notification or response sent to a live session
	// (by seq), how many client actions had come by then: a reorder whose
	// other notification went first is judged by what the client did
	// after that one, which may come before the held one's turn.
	sent map[liveSeq]int
	// holds are the reorders holding a notification until the other is
	// sent.
	holds []*reorderHold
	// conns are the client connections seen, by remote address.
	conns map[string]*connState
	// pinned is, by live session, the recorded session whose plan it
	// draws from (pinLocked).
	pinned map[*replayer.Session]*store.Recording
	// answered marks the live POSTs answered whole (a JSON answer, or
	// one of chaos's own); streamOf is the recorded stream a live POST
	// follows, once an event of it went; responded marks the recorded
	// streams whose response was sent to a live session (on the POST's
	// own stream or on its resumption).
	answered  map[*http.Request]bool
	streamOf  map[*http.Request]int
	responded map[liveStream]bool
}

// New returns the chaos Hook of c, logging to logger (nil: nowhere).
func New(c Config, logger *slog.Logger) *Hook {
	return &Hook{Config: c, Logger: logger}
}

type liveSeq struct {
	ls  *replayer.Session
	seq int64
}

type doneKey struct {
	ls      *replayer.Session
	session int64
	fault   int
}

type liveStream struct {
	ls     *replayer.Session
	stream int // the recorded stream's number in its session
}

// chaosAction is one client request as chaos saw it.
type chaosAction struct {
	ls          *replayer.Session // nil when it named no live session
	method      string            // HTTP method
	sid         string            // the Mcp-Session-Id it sent
	lastEventID string
	rpcMethod   string
	rpcID       string
	body        string
	// cancels is the request id a notifications/cancelled names.
	cancels string
	// at is when it arrived, on the server's clock.
	at time.Time
	// req is the request itself, so that a fault on its answer can find
	// what it sent.
	req *http.Request
	// conn is the connection it came on (its remote address), "" when
	// that says nothing of the order the client sent in (HTTP/2 sends
	// requests side by side on one connection). prevLS and prevSID are
	// the live session and session id of the request before it on conn;
	// after404 says a request of its session on conn was answered 404
	// before it came: the client had read that 404 when it sent this one.
	conn      string
	prevLS    *replayer.Session
	prevSID   string
	after404  bool
	freshConn bool // the first request seen on conn
}

// injection is a fault injected into a live session.
type injection struct {
	Fault
	session int64 // the recorded session
	index   int   // the fault's place in its session's plan
	ls      *replayer.Session
	sid     string // the live session id when injected
	at      int    // the index of the last action seen when injected (the request hit, for a request's fault)
	// lastID is the id of the last event the client received before a
	// cut.
	lastID string
	// delivered: what followed the fault reached the client; left: the
	// client went away first.
	delivered, left bool
	// body, method and id of the request answered 503 (or of the
	// request cut or closed early, in 2026-07-28; of the request a late
	// result answered).
	body, rpcMethod, rpcID string
	// cutAt is when a retry fault cut its stream, on the server's clock.
	cutAt time.Time
	// pooled marks a fault of 2026-07-28 exchanges: the client's
	// requests without a session id are its own.
	pooled bool
	// gaveUp: the client had cancelled the request a cut stream answers
	// before the cut (notifications/cancelled).
	gaveUp bool
	// waiting names, for a delay the client left, the requests of its
	// session still unanswered when it left ("" when none: it was done).
	waiting string
	// freshInit describes the first new session begun, after the
	// fault, on a connection nothing came on before: this client's or
	// another's, the wire does not tell ("" when none; see judge).
	freshInit string
	// asked and askedMethods are the ids and methods of the server
	// requests a redeliver sends again.
	asked, askedMethods []string
	// first: a reorder's other notification was sent before the held
	// one (delivered: the held one too); timedOut: it never came within
	// Delay, and the held one went anyway. more: the recorded client
	// sent requests after the pair.
	first, timedOut, more bool
	// held is the request whose response a reorder holds: it may arrive
	// after the other response went, and is then no step of the client
	// after the pair.
	held *http.Request
	// resent: over stdio, the client sent the request of a reorder's
	// held response again (its id seen a second time).
	resent bool
	// pair holds, over stdio, the live ids of the requests a reorder's
	// responses answer.
	pair []string
}

// state returns h, its maps made.
func (h *Hook) state() *Hook {
	h.once.Do(func() {
		h.plans = map[int64][]Fault{}
		h.done = map[doneKey]bool{}
		h.events = map[liveStream]int{}
		h.refuseGet = map[*replayer.Session]*injection{}
		h.expired = map[*replayer.Session]*injection{}
		h.posts = map[*replayer.Session]int{}
		h.awaiting = map[liveStream]*injection{}
		h.retry = map[liveStream]*injection{}
		h.limited = map[liveStream]*injection{}
		h.redeliver = map[liveStream]*injection{}
		h.sent = map[liveSeq]int{}
		h.pool = &replayer.Session{}
		h.stdio = map[*replayer.Session]*stdioState{}
		h.exited = map[int64]bool{}
		h.conns = map[string]*connState{}
		h.pinned = map[*replayer.Session]*store.Recording{}
		h.answered = map[*http.Request]bool{}
		h.streamOf = map[*http.Request]int{}
		h.responded = map[liveStream]bool{}
	})
	return h
}

// Act is the Hook: it notes what the client sends, and injects the
// faults planned at p.
func (h *Hook) Act(p *replayer.Point) replayer.Action {
	cs := h.state()
	switch p.Where {
	case replayer.AtArrive:
		cs.note(p)
	case replayer.AtRequest:
		if p.Pooled {
			return cs.poolRequest(p)
		}
		return cs.request(p)
	case replayer.AtOpen:
		return cs.refuseGetAt(p)
	case replayer.AtResume:
		return cs.resume(p)
	case replayer.AtResumeEmpty:
		cs.resumedEmpty(p)
	case replayer.AtBefore:
		switch {
		case p.Pooled:
			return cs.poolEvent(p, false)
		case p.Request == nil:
			return cs.stdioBefore(p)
		case p.Frame == nil:
			return cs.delayJSON(p)
		}
		return cs.before(p)
	case replayer.AtAfter:
		switch {
		case p.Pooled:
			return cs.poolEvent(p, true)
		case p.Request == nil:
			cs.stdioAfter(p)
			return replayer.Action{}
		}
		return replayer.Action{Cut: cs.after(p)}
	case replayer.AtEnd:
		return cs.lateResult(p)
	case replayer.AtLine:
		return cs.stdioLine(p)
	case replayer.AtReceive:
		if cs.takePingAnswer(p) {
			return replayer.Action{Skip: true}
		}
	case replayer.AtStart:
		cs.mu.Lock()
		// Not pinned yet: before its first request is matched a session
		// follows every recorded one, whichever comes first in the
		// cassette (a recording of another transport included).
		cs.sessions = append(cs.sessions, p.Session)
		cs.mu.Unlock()
	case replayer.AtRetire:
		return replayer.Action{Keep: true} // the verdicts read every session at the end
	}
	return replayer.Action{}
}

// take returns the first fault of ls's plan that ok accepts and that
// was not injected into ls yet, and marks it injected; ok false when
// none. rec is the recorded session ls follows at this point; the plan
// is that of the one it began with (see pinLocked), and a fault on a
// stream is taken only where rec's stream of that number is of the
// planned kind.
func (cs *Hook) takeLocked(ls *replayer.Session, rec *store.Recording, ok func(Fault) bool) (*injection, bool) {
	followed := rec
	rec = cs.pinLocked(ls, rec)
	for i, f := range cs.planLocked(rec) {
		k := doneKey{ls, rec.Session.ID, i}
		if cs.done[k] || cs.endedLocked(rec.Session.ID, i, f) || !ok(f) {
			continue
		}
		if f.Stream > 0 && (f.Stream > len(followed.Streams) || followed.Streams[f.Stream-1].Kind != f.StreamKind) {
			continue
		}
		cs.done[k] = true
		if endsSession(f) {
			cs.done[doneKey{session: rec.Session.ID, fault: i}] = true
		}
		inj := &injection{Fault: f, session: rec.Session.ID, index: i, ls: ls, sid: ls.ID(), at: len(cs.actions) - 1,
			more: clientAfter(rec, faultSeq(rec, f))}
		cs.injected = append(cs.injected, inj)
		return inj, true
	}
	return nil, false
}

// endsSession reports whether f ends the session it hits (expire,
// resume-404): the client that meets it must begin a new session, and
// the new one, following the same recorded session, must not meet it
// again (placed on initialize's stream, it would end every session the
// client begins). So such a fault is taken once per recorded session,
// for every live session of it, as exit is (see judgeExit).
func endsSession(f Fault) bool { return f.Kind == FaultExpire || f.Kind == FaultResume404 }

// endedLocked reports whether f, fault i of recorded session id, ends
// its session and was taken already by a live session of it.
func (cs *Hook) endedLocked(id int64, i int, f Fault) bool {
	return endsSession(f) && cs.done[doneKey{session: id, fault: i}]
}

func (h *Hook) logger() *slog.Logger {
	if h.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return h.Logger
}

func (h *Hook) announce(inj *injection) {
	h.logger().Warn("chaos: injected "+inj.Fault.String(), "session", inj.session, "seed", h.Seed)
}

// note records a client request as it arrives.
func (cs *Hook) note(p *replayer.Point) {
	r, live := p.Request, jsonrpc.Parse(p.Body)
	a := chaosAction{method: r.Method, sid: r.Header.Get("Mcp-Session-Id"), lastEventID: r.Header.Get("Last-Event-ID"),
		rpcMethod: live.Method, rpcID: string(live.ID), body: string(p.Body), cancels: cancelsID(live), at: p.At, req: r,
		ls: p.Session} // by its id, or its HTTP+SSE endpoint
	cs.mu.Lock()
	cs.connLocked(&a)
	cs.actions = append(cs.actions, a)
	cs.mu.Unlock()
}

// cancelsID returns the request id a notifications/cancelled names, ""
// for any other message.
func cancelsID(m jsonrpc.Message) string {
	if m.Kind != jsonrpc.KindNotification || m.Method != "notifications/cancelled" {
		return ""
	}
	return string(mcpwire.CancelledRequestID(m.Params))
}

// before is called before event f of recorded stream st (of rec) is
// sent to ls: it waits a planned delay, leaves out a planned priming
// event, or cuts before the first event.
func (cs *Hook) before(p *replayer.Point) replayer.Action {
	ls, rec, f, r := p.Session, p.Recording, p.Frame, p.Request
	if f.Comment {
		return replayer.Action{}
	}
	n := p.StreamNumber
	key := liveStream{ls, n}
	cs.mu.Lock()
	if inj := cs.redeliver[key]; inj != nil {
		// The first event of a redeliver's resumption.
		delete(cs.redeliver, key)
		cs.mu.Unlock()
		return again(p, inj, f)
	}
	if f.Kind.IsResponse() {
		if inj, ok := cs.recordedLateLocked(p, key); ok {
			cs.mu.Unlock()
			cs.announce(inj)
			return replayer.Action{} // sent as recorded
		}
	}
	sent := cs.events[key]
	inj, ok := cs.takeLocked(ls, rec, func(g Fault) bool {
		if g.Stream != n || g.Event != sent {
			return false
		}
		switch g.Kind {
		case FaultDelay:
			return true
		case FaultDropPriming:
			return sent == 0 && f.Kind == store.KindEmpty && f.HasEventID
		case FaultCut:
			return sent == 0
		case FaultReorder:
			return g.Seq == f.Seq
		case FaultSlicer, FaultReframe, FaultStall, FaultMalformed, FaultErrorResult, FaultLimitData, FaultEarlyPing, FaultListChanged:
			return true
		}
		return false
	})
	if !ok && sent == 0 && f.Kind == store.KindEmpty && f.HasEventID {
		// A retry goes on the priming event; its cut comes later.
		inj, ok = cs.takeLocked(ls, rec, func(g Fault) bool { return g.Kind == FaultRetry && g.Stream == n })
		if ok {
			cs.retry[key] = inj
		}
	}
	if ok {
		cs.armLocked(inj, p, key, sent)
	}
	var hold *reorderHold
	if ok && inj.Kind == FaultReorder {
		inj.more = clientAfter(rec, inj.OtherSeq)
		inj.body, inj.held = cs.bodyOfLocked(r), r // to tell the held response's request sent again
		hold = &reorderHold{inj: inj, sent: make(chan struct{})}
		if at, sent := cs.sent[liveSeq{ls, inj.OtherSeq}]; sent {
			inj.first, inj.at = true, at
			close(hold.sent)
		} else {
			cs.holds = append(cs.holds, hold)
		}
	}
	cs.mu.Unlock()
	if !ok {
		return replayer.Action{}
	}
	cs.announce(inj)
	if hold != nil {
		return cs.hold(p, hold)
	}
	if a, ok := rewritten(inj, f); ok {
		return a
	}
	switch inj.Kind {
	case FaultStall:
		return cs.stall(p, inj)
	case FaultCut:
		return replayer.Action{Cut: true}
	case FaultRetry:
		return replayer.Action{Replace: withRetry(f.Raw, inj.Delay)}
	case FaultDropPriming:
		cs.mu.Lock()
		inj.body = cs.bodyOfLocked(r) // to tell a re-sent request
		cs.events[key]++
		cs.awaiting[key] = inj
		cs.mu.Unlock()
		return replayer.Action{Skip: true}
	}
	if !p.Wait(inj.Delay) {
		cs.mu.Lock()
		inj.left = true
		inj.waiting = cs.waitingLocked(ls)
		delete(cs.awaiting, key)
		cs.mu.Unlock()
		return replayer.Action{Stop: true}
	}
	return replayer.Action{}
}

// after is called once event f of st was written to ls: it notes a
// fault waiting for this delivery and reports whether a planned cut drops
// the stream now.
func (cs *Hook) after(p *replayer.Point) bool {
	ls, rec, st, f := p.Session, p.Recording, p.Stream, p.Frame
	if f.Comment {
		return false
	}
	n := p.StreamNumber
	key := liveStream{ls, n}
	cs.mu.Lock()
	if w := cs.awaiting[key]; w != nil {
		w.delivered = true
		delete(cs.awaiting, key)
	}
	if p.Request.Method == http.MethodPost {
		cs.streamOf[p.Request] = n
	}
	if f.Kind.IsResponse() {
		cs.responded[key] = true
	}
	if f.Kind == store.KindNotification || f.Kind.IsResponse() {
		cs.sent[liveSeq{ls, f.Seq}] = len(cs.actions) - 1
		cs.holds = slices.DeleteFunc(cs.holds, func(h *reorderHold) bool {
			if h.inj.ls != ls || h.inj.OtherSeq != f.Seq {
				return false
			}
			h.inj.first, h.inj.at = true, len(cs.actions)-1 // judged by what came after the other one
			close(h.sent)
			return true
		})
	}
	for _, inj := range cs.injected {
		if inj.Kind == FaultReorder && inj.ls == ls && inj.Seq == f.Seq && inj.Stream == n {
			inj.delivered = true
		}
	}
	cs.events[key]++
	sent := cs.events[key]
	inj, ok := cs.takeLocked(ls, rec, func(g Fault) bool {
		return g.Stream == n && g.Event == sent && g.Event > 0 &&
			(g.Kind == FaultCutResumable || g.Kind == FaultCut || g.Kind == FaultResume404 || g.Kind == FaultResumeLate || g.Kind == FaultRedeliver)
	})
	if ok {
		cs.cutLocked(inj, p, lastEventSent(rec, st, sent))
		if st.Kind == store.SSEGetStream {
			// HTTP+SSE: the session is the stream; with it gone, its
			// endpoint answers 404 from now on, and no fault follows.
			cs.expired[ls] = inj
		} else if inj.Kind == FaultCutResumable || inj.Kind == FaultRedeliver {
			// Passed only once the rest reached the client: the next
			// event sent on this stream is its resumption's.
			cs.awaiting[key] = inj
		}
		if inj.Kind == FaultRedeliver {
			cs.redeliverLocked(inj, p, sent)
		}
	}
	limited := cs.limited[key]
	if limited != nil {
		// The half event of a limit_data went: drop the stream now.
		delete(cs.limited, key)
		cs.cutLocked(limited, p, limited.lastID)
		if limited.lastID != "" {
			cs.awaiting[key] = limited // passed once the rest reached the client
		}
	}
	retry := cs.retry[key]
	if retry != nil && retry.Event == sent && retry.cutAt.IsZero() {
		// The retry fault announced at the priming event cuts now.
		retry.lastID, retry.cutAt = lastEventSent(rec, st, sent), p.At
		delete(cs.retry, key)
		cs.awaiting[key] = retry
	} else {
		retry = nil
	}
	cs.mu.Unlock()
	if ok {
		cs.announce(inj)
	}
	return ok || retry != nil || limited != nil
}
