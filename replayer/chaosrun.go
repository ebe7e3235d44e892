package replayer

import (
	"bytes"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/internal/mcpwire"
	"github.com/mcpvcr/mcpvcr/store"
)

// chaosState is the live side of chaos replay: the plans drawn, what the
// client did on the wire, and each fault injected.
type chaosState struct {
	// mu guards everything below. The httpState's mu may be taken while
	// holding it, never the other way round.
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
	refuseGet map[*liveSession]*injection
	expired   map[*liveSession]*injection
	// posts counts the POSTs of each live session (a 503 aside).
	posts map[*liveSession]int
	// awaiting are faults whose verdict waits for the next event sent
	// on a stream: a delay, a dropped priming event, a late resumption.
	awaiting map[liveStream]*injection
	// retry are the retry faults injected on a stream's priming event,
	// whose cut is still to come.
	retry map[liveStream]*injection
	// stdio are the live stdio sessions, for the faults they never
	// reached; pool stands for the 2026-07-28 exchanges.
	stdio []*liveSession
	pool  *liveSession
	// poolRecs are the 2026-07-28 sessions chaos drew plans for.
	poolRecs map[int64]*store.Recording
	// sent holds, for each recorded notification sent to a live session
	// (by seq), how many client actions had come by then: a reorder whose
	// other notification went first is judged by what the client did
	// after that one, which may come before the held one's turn.
	sent map[liveSeq]int
	// holds are the reorders holding a notification until the other is
	// sent.
	holds []*reorderHold
}

type liveSeq struct {
	ls  *liveSession
	seq int64
}

type doneKey struct {
	ls      *liveSession
	session int64
	fault   int
}

type liveStream struct {
	ls     *liveSession
	stream int // the recorded stream's number in its session
}

// chaosAction is one client request as chaos saw it.
type chaosAction struct {
	ls          *liveSession // nil when it named no live session
	method      string       // HTTP method
	sid         string       // the Mcp-Session-Id it sent
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
}

// injection is a fault injected into a live session.
type injection struct {
	Fault
	session int64 // the recorded session
	index   int   // the fault's place in its session's plan
	ls      *liveSession
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
	// first: a reorder's other notification was sent before the held
	// one (delivered: the held one too); timedOut: it never came within
	// Delay, and the held one went anyway. more: the recorded client
	// sent requests after the pair.
	first, timedOut, more bool
}

func (s *Server) chaos() *chaosState {
	hs := s.http()
	hs.chaos.mu.Lock()
	if hs.chaos.plans == nil {
		hs.chaos.plans = map[int64][]Fault{}
		hs.chaos.done = map[doneKey]bool{}
		hs.chaos.events = map[liveStream]int{}
		hs.chaos.refuseGet = map[*liveSession]*injection{}
		hs.chaos.expired = map[*liveSession]*injection{}
		hs.chaos.posts = map[*liveSession]int{}
		hs.chaos.awaiting = map[liveStream]*injection{}
		hs.chaos.retry = map[liveStream]*injection{}
		hs.chaos.sent = map[liveSeq]int{}
	}
	hs.chaos.mu.Unlock()
	return &hs.chaos
}

// planLocked returns the plan of rec's session, drawn once.
func (cs *chaosState) planLocked(c Chaos, rec *store.Recording) []Fault {
	p, ok := cs.plans[rec.Session.ID]
	if !ok {
		p = c.Plan(rec)
		cs.plans[rec.Session.ID] = p
	}
	return p
}

// take returns the first fault of rec's plan that ok accepts and that was
// not injected into ls yet, and marks it injected; ok false when none.
func (cs *chaosState) takeLocked(c Chaos, ls *liveSession, rec *store.Recording, ok func(Fault) bool) (*injection, bool) {
	for i, f := range cs.planLocked(c, rec) {
		k := doneKey{ls, rec.Session.ID, i}
		if cs.done[k] || !ok(f) {
			continue
		}
		cs.done[k] = true
		inj := &injection{Fault: f, session: rec.Session.ID, index: i, ls: ls, sid: ls.sessionID(), at: len(cs.actions) - 1,
			more: clientAfter(rec, faultSeq(rec, f))}
		cs.injected = append(cs.injected, inj)
		return inj, true
	}
	return nil, false
}

// sessionID returns the session id issued to ls ("" before one is).
func (ls *liveSession) sessionID() string {
	hs := ls.srv.http()
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return ls.id
}

func (s *Server) announce(inj *injection) {
	s.logger().Warn("chaos: injected "+inj.Fault.String(), "session", inj.session, "seed", s.Chaos.Seed)
}

// chaosNote records a client request as it arrives.
func (s *Server) chaosNote(r *http.Request, live jsonrpc.Message, body []byte) {
	cs := s.chaos()
	a := chaosAction{method: r.Method, sid: r.Header.Get("Mcp-Session-Id"), lastEventID: r.Header.Get("Last-Event-ID"),
		rpcMethod: live.Method, rpcID: string(live.ID), body: string(body), cancels: cancelsID(live), at: s.clock().Now(), req: r}
	hs := s.http()
	hs.mu.Lock()
	if a.sid != "" {
		a.ls = hs.byID[a.sid]
	} else {
		a.ls = hs.byEndpoint[r.URL.RequestURI()] // an HTTP+SSE POST
	}
	hs.mu.Unlock()
	cs.mu.Lock()
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

// chaosRequest injects the faults at a request of ls: an expired session
// (404 from its POST n on) and a 503 (its POST n). It reports whether it
// answered.
func (s *Server) chaosRequest(w http.ResponseWriter, r *http.Request, ls *liveSession, live jsonrpc.Message, body []byte) bool {
	cs := s.chaos()
	rec := ls.recording().Recording
	cs.mu.Lock()
	n := 0
	if r.Method == http.MethodPost {
		cs.posts[ls]++
		n = cs.posts[ls]
	}
	exp := cs.expired[ls]
	if exp == nil && n > 0 {
		if inj, ok := cs.takeLocked(s.Chaos, ls, rec, func(f Fault) bool { return f.Kind == FaultExpire && f.Request == n }); ok {
			cs.expired[ls], exp = inj, inj
			defer s.announce(inj)
		}
	}
	var unavailable *injection
	if exp == nil && r.Method == http.MethodPost {
		if inj, ok := cs.takeLocked(s.Chaos, ls, rec, func(f Fault) bool { return f.Kind == Fault503 && f.Request == n }); ok {
			inj.body, inj.rpcMethod, inj.rpcID = string(body), live.Method, string(live.ID)
			unavailable = inj
			inj.cutAt = s.clock().Now()
			cs.posts[ls]-- // not a POST of the conversation: it is to come again
			defer s.announce(inj)
		}
	}
	cs.mu.Unlock()
	switch {
	case exp != nil:
		writeJSONError(w, http.StatusNotFound, nil, -32001, "Session not found")
		return true
	case unavailable != nil:
		write503(w)
		return true
	}
	return false
}

// chaosRefuseGet answers a standalone GET of ls with 405 when its plan
// refuses them: every one from the first planned on.
func (ls *liveSession) chaosRefuseGet(w http.ResponseWriter) bool {
	s := ls.srv
	cs := s.chaos()
	cs.mu.Lock()
	inj := cs.refuseGet[ls]
	if inj == nil {
		if i, ok := cs.takeLocked(s.Chaos, ls, ls.recording().Recording, func(f Fault) bool { return f.Kind == FaultRefuseGet }); ok {
			cs.refuseGet[ls], inj = i, i
			defer s.announce(i)
		}
	}
	cs.mu.Unlock()
	if inj == nil {
		return false
	}
	w.Header().Set("Allow", "POST, DELETE")
	w.WriteHeader(http.StatusMethodNotAllowed)
	return true
}

// chaosResume answers a resumption of a stream chaos cut: 404 for a
// resume-404, the rest late for a resume-late. It reports whether it
// answered (or the client left while it waited).
func (ls *liveSession) chaosResume(w http.ResponseWriter, r *http.Request, lastID string) bool {
	cs := ls.srv.chaos()
	cs.mu.Lock()
	var cut *injection
	for _, inj := range cs.injected {
		if inj.ls == ls && inj.lastID == lastID && (inj.Kind == FaultResume404 || inj.Kind == FaultResumeLate) {
			cut = inj
		}
	}
	if cut != nil && cut.Kind == FaultResumeLate {
		if cut.delivered || cut.left {
			cut = nil // its resumption was answered late once
		} else {
			cs.awaiting[liveStream{ls, cut.Stream}] = cut
		}
	}
	cs.mu.Unlock()
	switch {
	case cut == nil:
		return false
	case cut.Kind == FaultResume404:
		// The session is gone, as a 404 to its id says: every request
		// of it is answered 404 from now on.
		cs.mu.Lock()
		if cs.expired[ls] == nil {
			cs.expired[ls] = cut
		}
		cs.mu.Unlock()
		writeJSONError(w, http.StatusNotFound, nil, -32001, "mcpvcr replay --chaos: unknown Last-Event-ID "+lastID+" (an injected fault)")
		return true
	}
	if !ls.pause(r, cut.Delay) {
		cs.mu.Lock()
		cut.left = true
		cs.mu.Unlock()
		return true
	}
	return false
}

// chaosResumedEmpty notes that the resumption of a stream cut after its
// last event was served: nothing was left to send, so what the client
// asked for it got.
func (ls *liveSession) chaosResumedEmpty(lastID string) {
	cs := ls.srv.chaos()
	cs.mu.Lock()
	defer cs.mu.Unlock()
	for key, inj := range cs.awaiting {
		if key.ls == ls && inj.lastID == lastID && (inj.Kind == FaultCutResumable || inj.Kind == FaultRetry) {
			inj.delivered = true
			delete(cs.awaiting, key)
		}
	}
}

// chaosStep is what chaos does with an event about to be sent.
type chaosStep int

const (
	chaosSend chaosStep = iota // send it
	chaosSkip                  // leave it out
	chaosCut                   // drop the connection before it
	chaosGone                  // the client left during a delay
)

// chaosBefore is called before event f of recorded stream st (of rec) is
// sent to ls: it waits a planned delay, leaves out a planned priming
// event, or cuts before the first event.
func (ls *liveSession) chaosBefore(r *http.Request, rec *recording, st *store.Stream, f *store.Frame) (chaosStep, []byte) {
	if f.Comment {
		return chaosSend, nil
	}
	s := ls.srv
	cs := s.chaos()
	n := ordinalOf(rec, st.ID)
	key := liveStream{ls, n}
	cs.mu.Lock()
	sent := cs.events[key]
	inj, ok := cs.takeLocked(s.Chaos, ls, rec.Recording, func(g Fault) bool {
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
		}
		return false
	})
	if !ok && sent == 0 && f.Kind == store.KindEmpty && f.HasEventID {
		// A retry goes on the priming event; its cut comes later.
		inj, ok = cs.takeLocked(s.Chaos, ls, rec.Recording, func(g Fault) bool { return g.Kind == FaultRetry && g.Stream == n })
		if ok {
			cs.retry[key] = inj
		}
	}
	if ok && inj.Kind == FaultDelay {
		cs.awaiting[key] = inj
	}
	var hold *reorderHold
	if ok && inj.Kind == FaultReorder {
		inj.more = clientAfter(rec.Recording, inj.OtherSeq)
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
		return chaosSend, nil
	}
	s.announce(inj)
	if hold != nil {
		return ls.chaosHold(r, rec, hold), nil
	}
	switch inj.Kind {
	case FaultCut:
		return chaosCut, nil
	case FaultRetry:
		return chaosSend, withRetry(f.Raw, inj.Delay)
	case FaultDropPriming:
		cs.mu.Lock()
		for i := len(cs.actions) - 1; i >= 0; i-- {
			if cs.actions[i].req == r {
				inj.body = cs.actions[i].body // to tell a re-sent request
				break
			}
		}
		cs.events[key]++
		cs.awaiting[key] = inj
		cs.mu.Unlock()
		return chaosSkip, nil
	}
	if !ls.pause(r, inj.Delay) {
		cs.mu.Lock()
		inj.left = true
		delete(cs.awaiting, key)
		cs.mu.Unlock()
		return chaosGone, nil
	}
	return chaosSend, nil
}

// withRetry returns the SSE event block raw with a retry field of d (in
// milliseconds) added.
func withRetry(raw []byte, d time.Duration) []byte {
	b := bytes.TrimRight(raw, "\r\n")
	return fmt.Appendf(slices.Clip(b), "\nretry: %d\n\n", d.Milliseconds())
}

// chaosAfter is called once event f of st was written to ls: it notes a
// fault waiting for this delivery and reports whether a planned cut drops
// the stream now.
func (ls *liveSession) chaosAfter(rec *recording, st *store.Stream, f *store.Frame) bool {
	if f.Comment {
		return false
	}
	s := ls.srv
	cs := s.chaos()
	n := ordinalOf(rec, st.ID)
	key := liveStream{ls, n}
	cs.mu.Lock()
	if w := cs.awaiting[key]; w != nil {
		w.delivered = true
		delete(cs.awaiting, key)
	}
	if f.Kind == store.KindNotification {
		cs.sent[liveSeq{ls, f.Seq}] = len(cs.actions) - 1
		cs.holds = slices.DeleteFunc(cs.holds, func(h *reorderHold) bool {
			if h.inj.ls != ls || h.inj.OtherSeq != f.Seq {
				return false
			}
			h.inj.first = true
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
	inj, ok := cs.takeLocked(s.Chaos, ls, rec.Recording, func(g Fault) bool {
		return g.Stream == n && g.Event == sent && g.Event > 0 &&
			(g.Kind == FaultCutResumable || g.Kind == FaultCut || g.Kind == FaultResume404 || g.Kind == FaultResumeLate)
	})
	if ok {
		inj.lastID = lastEventSent(rec, st, sent)
		if st.Kind == store.SSEGetStream {
			// HTTP+SSE: the session is the stream; with it gone, its
			// endpoint answers 404 from now on, and no fault follows.
			cs.expired[ls] = inj
		} else if inj.Kind == FaultCutResumable {
			// Passed only once the rest reached the client: the next
			// event sent on this stream is its resumption's.
			cs.awaiting[key] = inj
		}
	}
	retry := cs.retry[key]
	if retry != nil && retry.Event == sent && retry.cutAt.IsZero() {
		// The retry fault announced at the priming event cuts now.
		retry.lastID, retry.cutAt = lastEventSent(rec, st, sent), s.clock().Now()
		delete(cs.retry, key)
		cs.awaiting[key] = retry
	} else {
		retry = nil
	}
	cs.mu.Unlock()
	if ok {
		s.announce(inj)
	}
	return ok || retry != nil
}

// chaosLateResult is called where a followed stream ends without the
// answer to live request liveID, the recorded client having cancelled
// it: when a late-result fault is planned there and this client has
// cancelled it too, it sends a result all the same, on the request's
// stream. It reports whether it injected (the stream is then over).
func (ls *liveSession) chaosLateResult(w http.ResponseWriter, r *http.Request, rec *recording, st *store.Stream, liveID string) bool {
	s := ls.srv
	cs := s.chaos()
	n := ordinalOf(rec, st.ID)
	sid := ls.sessionID()
	gone := r.Context().Err() != nil
	cs.mu.Lock()
	cancelled := slices.ContainsFunc(cs.actions, func(a chaosAction) bool {
		return a.cancels == liveID && (a.ls == ls || (sid != "" && a.sid == sid))
	})
	var inj *injection
	ok := false
	if cancelled || gone {
		inj, ok = cs.takeLocked(s.Chaos, ls, rec.Recording, func(g Fault) bool { return g.Kind == FaultLateResult && g.Stream == n })
	}
	if ok {
		inj.rpcID, inj.left = liveID, !cancelled
	}
	cs.mu.Unlock()
	if !ok {
		return false
	}
	s.announce(inj)
	if inj.left {
		return true // the client closed the stream before its cancellation came
	}
	method := ""
	if req := frameBySeq(rec.Recording, inj.Seq); req != nil {
		method = req.Method
	}
	_, err := fmt.Fprintf(w, "event: message\ndata: %s\n\n", lateResult(liveID, method))
	if err == nil {
		err = http.NewResponseController(w).Flush()
	}
	cs.mu.Lock()
	inj.at = len(cs.actions) - 1
	inj.delivered, inj.left = err == nil, err != nil
	cs.mu.Unlock()
	return true
}

// lateResult is the result a late-result fault sends for request id of
// method: the recording holds none (its client cancelled first).
func lateResult(id, method string) []byte {
	result := `{}`
	if method == "tools/call" {
		result = `{"content":[{"type":"text","text":"mcpvcr replay --chaos: a late result (an injected fault)"}]}`
	}
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"result":%s}`, id, result)
}

// frameBySeq returns the frame of rec with recorded seq seq.
func frameBySeq(rec *store.Recording, seq int64) *store.Frame {
	for i := range rec.Frames {
		if rec.Frames[i].Seq == seq {
			return &rec.Frames[i]
		}
	}
	return nil
}

// lastEventSent returns the id of the last event with an id among the
// first n events of st.
func lastEventSent(rec *recording, st *store.Stream, n int) string {
	id := ""
	for i, f := range sseEvents(rec.Recording, st.ID) {
		if i >= n {
			break
		}
		if f.HasEventID {
			id = f.EventID
		}
	}
	return id
}

// chaosDelayJSON waits a delay planned for the JSON answer of st; it
// reports false when the client left first.
func (ls *liveSession) chaosDelayJSON(r *http.Request, rec *recording, st *store.Stream) bool {
	s := ls.srv
	cs := s.chaos()
	n := ordinalOf(rec, st.ID)
	cs.mu.Lock()
	inj, ok := cs.takeLocked(s.Chaos, ls, rec.Recording, func(g Fault) bool { return g.Kind == FaultDelay && g.Stream == n })
	cs.mu.Unlock()
	if !ok {
		return true
	}
	s.announce(inj)
	gone := !ls.pause(r, inj.Delay)
	cs.mu.Lock()
	inj.left, inj.delivered = gone, !gone
	cs.mu.Unlock()
	return !gone
}
