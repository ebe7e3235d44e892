package replayer

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/internal/replayreport"
	"github.com/mcpvcr/mcpvcr/internal/reqshape"
	"github.com/mcpvcr/mcpvcr/internal/script"
	"github.com/mcpvcr/mcpvcr/store"
)

// httpState is the live side of an HTTP replay: one liveSession per
// client session.
type httpState struct {
	// serving counts the ServeHTTP calls begun before Close, which Close
	// waits for; Add is called under mu, so never after Close's Wait.
	serving sync.WaitGroup

	mu   sync.Mutex // guards everything below
	byID map[string]*liveSession
	// byEndpoint maps an HTTP+SSE endpoint (path and query) to the live
	// session whose GET stream announced it.
	byEndpoint map[string]*liveSession
	anonymous  *liveSession // the latest session the client holds no id for
	all        []*liveSession
	// retired are the reports of the sessions that ended (a DELETE the
	// server answered, or idle past sessionIdle): their state is let go,
	// so that a replay serving clients all day stays flat.
	retired []*Report
	// clean holds, by recorded session, the report its clean retired
	// sessions were folded into (one of retired).
	clean map[int64]*Report
	// issued counts the ids issued for each recorded session id.
	issued map[string]int
	// swept is when idle sessions were last looked for.
	swept  time.Time
	done   chan struct{} // closed by Close
	closed bool
	door   doorState // answers by shape alone (door.go)
}

// liveSession follows one live client session through the recordings.
type liveSession struct {
	srv *Server
	pub Session // what a Hook sees of it (hook.go)
	id  string  // the Mcp-Session-Id issued; "" when the recording had none
	cur *cursor
	rep Report

	mu        sync.Mutex // guards the fields below
	released  map[*store.Frame]outFrame
	changed   chan struct{} // closed and replaced when released grows
	used      map[int64]bool
	requests  int
	cutEvents map[int64]int // recorded stream id -> events sent on it so far
	// sentEvents maps an event id sent to where it was sent.
	sentEvents map[string]sentEvent
	// stalled maps a stalled live request id to when it stalled, and
	// stallReports the ones replay answered itself to their reports.
	stalled      map[string]time.Time
	stallReports map[string]*Mismatch
	// injected are answers of replay's own waiting for the HTTP+SSE
	// stream (guarded by mu).
	injected [][]byte
	// sseClaimed reports that a live GET took the session's HTTP+SSE
	// stream (guarded by the httpState's mu).
	sseClaimed bool
	// inflight counts the client's requests being answered, last is when
	// the latest began or ended (guarded by mu): a session with nothing
	// in flight for sessionIdle is retired.
	inflight int
	last     time.Time
}

func (s *Server) http() *httpState {
	s.httpOnce.Do(func() {
		s.hs = &httpState{byID: map[string]*liveSession{}, byEndpoint: map[string]*liveSession{}, done: make(chan struct{})}
	})
	return s.hs
}

// ServeHTTP is the recorded server over HTTP: Streamable HTTP or the
// 2024-11-05 HTTP+SSE transport, as recorded. It issues the recorded
// session ids, answers each POST as recorded (JSON or SSE, with the
// recorded event ids and retry values, ending where the recording ended),
// serves GET streams with the server-initiated frames recorded on them,
// and answers a GET with Last-Event-ID with the rest of that stream.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer s.track()()
	body, ok := readBody(r)
	if !ok {
		return
	}
	live := jsonrpc.Parse(body)
	if s.Hook != nil {
		if a := s.actHTTP(r, Point{Where: AtArrive, Session: s.named(r), Body: body}); a.Body != nil && !a.answers() {
			body = a.Body
			live = jsonrpc.Parse(body)
		}
	}
	switch rt := s.route(r, live); rt.kind {
	case toPool:
		s.servePooled(w, r, live, body, rt.x, rt.exact)
	case toDiscover:
		s.answerLegacyDiscover(w, live)
	case toRefusal:
		s.answerRefusal(w, r, live, rt.refusals)
	case toInvented:
		s.invent(w, r, live, rt.door, rt.shapes)
	case toForeign:
		writeJSONError(w, http.StatusForbidden, nil, -32600, rt.why)
	default:
		s.serveSession(w, r, live, body)
	}
}

// readBody reads r's body; it reports false when reading failed.
func readBody(r *http.Request) ([]byte, bool) {
	if r.Body == nil {
		return nil, true
	}
	body, err := io.ReadAll(r.Body)
	return body, err == nil
}

// track counts a request begun before Close, for Close to wait for; it
// returns what ends it.
func (s *Server) track() (done func()) {
	hs := s.http()
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.closed {
		return func() {}
	}
	hs.serving.Add(1)
	return hs.serving.Done
}

// serveSession answers r, a frame of a conversation: it finds or starts
// its live session, lets the hooks act, checks strictness, and answers
// as recorded.
func (s *Server) serveSession(w http.ResponseWriter, r *http.Request, live jsonrpc.Message, body []byte) {
	ls, status := s.liveSessionFor(r, live)
	if ls == nil {
		writeJSONError(w, status, nil, -32001, "Session not found")
		return
	}
	ls.busy(+1)
	defer ls.busy(-1)
	ls.mu.Lock()
	ls.requests++
	n := ls.requests
	ls.mu.Unlock()
	if a := s.actHTTP(r, Point{Where: AtRequest, Session: ls.session(), Body: body, Requests: n}); a.answers() || a.Cut {
		if a.Cut {
			reset(w)
			return
		}
		a.write(w)
		return // --expire-after, or a fault of the Hook's
	}
	if s.Strict && ls.cur.cancelsInitialize(live) {
		ls.mismatch(&Mismatch{Live: body, Reason: initializeCancelled})
	}
	if s.Strict && strictRefuses(w, r, live, body, ls.recording(), ls.sessionID(), false, ls.mismatch) {
		return
	}
	switch r.Method {
	case http.MethodPost:
		ls.post(w, r, live)
	case http.MethodGet:
		ls.get(w, r)
	case http.MethodDelete:
		ls.deleteSession(w, r)
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
	}
}

func (ls *liveSession) recording() *recording { return ls.cur.leader().rec }

func (ls *liveSession) post(w http.ResponseWriter, r *http.Request, live jsonrpc.Message) {
	ls.mu.Lock()
	ls.rep.Received++
	ls.mu.Unlock()
	if ls.taskPoll(w, live) {
		return // a poll of a task: answered by its state (tasks.go)
	}
	sh := reqshape.Live(r)
	rc := ls.cur.receive(live, func(e *engine, i int) bool {
		st := script.Stream(e.rec.Recording, e.frames[i].F.StreamID)
		return st == nil || !script.Refused(st) || reqshape.Recorded(st).Same(sh)
	})
	if rc.mm != nil {
		ls.mismatch(rc.mm)
		if reply := replayreport.NoMatchReply(live, rc.mm); reply != nil && ls.recording().Session.Transport == store.LegacySSE {
			ls.inject(reply)
			w.WriteHeader(http.StatusAccepted)
			return
		} else if reply != nil {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(reply)
			return
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if rc.unrecorded {
		ls.mu.Lock()
		ls.rep.Unrecorded++
		ls.mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if rc.differs != nil {
		ls.mismatch(rc.differs)
	} else {
		ls.mu.Lock()
		ls.rep.Matched++
		ls.mu.Unlock()
	}
	ls.publish(rc.outs)
	streams := map[*engine]*store.Stream{}
	for e, f := range rc.matched {
		streams[e] = script.Stream(e.rec.Recording, f.StreamID)
	}
	liveID := ""
	if live.Kind == jsonrpc.KindRequest {
		liveID = string(live.ID)
	}
	pick := memo(streams, func(e *engine) *store.Stream {
		// A candidate loaded since (reading a Source) matched this
		// frame on its way to where the cursor was.
		if rc.pos >= 0 && rc.pos < len(e.history) && e.history[rc.pos] != nil {
			return script.Stream(e.rec.Recording, e.history[rc.pos].StreamID)
		}
		return nil
	})
	ls.follow(w, r, pick, liveID, func() { w.WriteHeader(http.StatusAccepted) })
}

func (ls *liveSession) mismatch(mm *Mismatch) {
	ls.mu.Lock()
	ls.rep.Mismatches = append(ls.rep.Mismatches, mm)
	ls.mu.Unlock()
	ls.srv.logger().Warn("unmatched client frame", "frame", mm.Error())
}

func (ls *liveSession) get(w http.ResponseWriter, r *http.Request) {
	if id := r.Header.Get("Last-Event-ID"); id != "" {
		if a := ls.srv.actHTTP(r, Point{Where: AtResume, Session: ls.session(), LastEventID: id}); a.answers() || a.Stop {
			if a.answers() {
				a.write(w)
			}
			return
		}
		rec := ls.recording()
		ls.resume(w, r, rec, ls.translateEventID(id))
		return
	}
	if a := ls.srv.actHTTP(r, Point{Where: AtOpen, Session: ls.session()}); a.answers() {
		a.write(w)
		return
	}
	// Each candidate's next GET stream not yet taken, taken now in all of
	// them: the live stream follows whichever candidate the client's
	// frames single out.
	take := func(e *engine) *store.Stream {
		return ls.nextUnused(e.rec, func(st *store.Stream) bool {
			return st.Kind == store.GetStream || st.Kind == store.SSEGetStream
		})
	}
	streams := map[*engine]*store.Stream{}
	for _, e := range ls.cur.candidates() {
		streams[e] = take(e)
	}
	// A candidate loaded since (reading a Source) takes its own.
	ls.follow(w, r, memo(streams, take), "", func() { w.WriteHeader(http.StatusMethodNotAllowed) })
}

func (ls *liveSession) deleteSession(w http.ResponseWriter, r *http.Request) {
	rec := ls.recording()
	st := ls.nextUnused(rec, func(st *store.Stream) bool { return st.Kind == store.DeleteStream })
	ls.publish(nil) // streams the recorded DELETE ended may end now
	if st == nil {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	ls.play(w, r, rec, st, nil)
	if st.Status >= 200 && st.Status < 300 {
		ls.srv.retire(ls) // the server ended the session
	}
}

// nextUnused returns the first recorded stream that ok accepts and no live
// request has taken yet, and takes it.
func (ls *liveSession) nextUnused(rec *recording, ok func(*store.Stream) bool) *store.Stream {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	for i := range rec.Streams {
		st := &rec.Streams[i]
		if ok(st) && !ls.used[st.ID] {
			ls.used[st.ID] = true
			return st
		}
	}
	return nil
}

// resume answers a GET with Last-Event-ID. When the recording holds a
// resume with that id, it is answered as recorded. Otherwise (the stream
// was cut by a fault option, say) the answer is the rest of that event's
// stream and the streams resuming it: the frames after the event, up to
// the end of the recorded exchange that carried the next of them, leaving
// out id-less transport events (a priming or a close with retry), which an
// event store does not keep.
func (ls *liveSession) resume(w http.ResponseWriter, r *http.Request, rec *recording, eventID string) {
	ls.mu.Lock()
	ls.rep.Resumed++
	ls.mu.Unlock()
	if st := ls.nextUnused(rec, func(st *store.Stream) bool {
		return st.Kind == store.ResumeStream && st.LastEventID == eventID
	}); st != nil {
		ls.play(w, r, rec, st, framesOf(rec, st.ID, 0))
		return
	}
	var origin *store.Frame
	for i := range rec.Frames {
		f := &rec.Frames[i]
		if f.HasEventID && f.EventID == eventID && f.Direction == store.ServerToClient {
			origin = f
		}
	}
	if origin == nil {
		why := "no recorded event has id " + eventID + ": the client resumed a stream this replay never sent"
		ls.srv.noteInvented(r.Method+" "+r.URL.Path+" (Last-Event-ID "+eventID+")", http.StatusBadRequest, why)
		writeJSONError(w, http.StatusBadRequest, nil, -32000, "mcpvcr replay: "+why)
		return
	}
	var rest []*store.Frame
	for _, f := range script.Chain(rec.Recording, origin.StreamID) {
		if f.Seq > origin.Seq && (script.IsProtocol(f) || f.HasEventID) {
			rest = append(rest, f)
		}
	}
	segment := script.Stream(rec.Recording, origin.StreamID)
	if len(rest) == 0 {
		ls.srv.actHTTP(r, Point{Where: AtResumeEmpty, Session: ls.session(), LastEventID: eventID})
	}
	if len(rest) > 0 {
		segment = script.Stream(rec.Recording, rest[0].StreamID)
		n := 0
		for n < len(rest) && rest[n].StreamID == segment.ID {
			n++
		}
		rest = rest[:n]
	}
	ls.playWith(w, r, rec, segment, segment, rest)
}

// framesOf returns the server frames of a stream after seq.
func framesOf(rec *recording, streamID, after int64) []*store.Frame {
	if after == 0 {
		return rec.serverFrames()[streamID]
	}
	var fs []*store.Frame
	for i := range rec.Frames {
		f := &rec.Frames[i]
		if f.StreamID == streamID && f.Direction == store.ServerToClient && f.Seq > after {
			fs = append(fs, f)
		}
	}
	return fs
}

// writeJSONError answers with a JSON-RPC error body.
func writeJSONError(w http.ResponseWriter, status int, id json.RawMessage, code int, msg string) {
	jsonErrorAction(status, id, code, msg).write(w)
}

// jsonErrorAction is an answer with status and a JSON-RPC error of code
// and msg for request id (nil: null).
func jsonErrorAction(status int, id json.RawMessage, code int, msg string) Action {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": msg}})
	return Action{Status: status, Header: http.Header{"Content-Type": {"application/json"}}, Body: b}
}

// Close releases everything s holds: it ends the HTTP streams held open
// (standalone GET streams, streams whose recorded client left first),
// makes every ServeStdio return, and waits for the HTTP requests s was
// serving to return, as httptest.Server.Close waits for its handlers.
// It may be called before or after the http.Server serving s closes; an
// http.Server's Shutdown waits for held streams to end, which Close (or
// the client) does. Recordings are plain data; a Source's DB stays its
// owner's to close. Close is safe to call more than once, and
// concurrently with serving.
func (s *Server) Close() {
	hs := s.http()
	hs.mu.Lock()
	if !hs.closed {
		hs.closed = true
		close(hs.done)
	}
	hs.mu.Unlock()
	hs.serving.Wait()
}

// closed reports whether Close was called.
func (s *Server) closed() bool {
	select {
	case <-s.http().done:
		return true
	default:
		return false
	}
}

// Reports returns one report per live HTTP client session so far.
func (s *Server) Reports() []*Report {
	hs := s.http()
	hs.mu.Lock()
	all := append([]*liveSession(nil), hs.all...)
	hs.mu.Unlock()
	var reps []*Report
	if p := s.pool(); p != nil {
		if rep := p.report(); rep != nil {
			reps = append(reps, rep)
		}
	}
	hs.mu.Lock()
	reps = append(reps, hs.retired...)
	hs.mu.Unlock()
	for _, ls := range all {
		reps = append(reps, ls.report())
	}
	return reps
}

// report returns what ls's client did so far.
func (ls *liveSession) report() *Report {
	lead := ls.cur.leader()
	ls.mu.Lock()
	rep := ls.rep
	rep.Mismatches = append([]*Mismatch(nil), ls.rep.Mismatches...)
	ls.mu.Unlock()
	rep.SessionID, rep.Clients = lead.rec.Session.ID, 1
	rep.Candidates = ls.cur.sessions()
	ls.cur.mu.Lock()
	rep.Unsent = slices.DeleteFunc(lead.unsent(), func(f *store.Frame) bool { return script.RefusedFrame(lead.rec.Recording, f) })
	ls.cur.mu.Unlock()
	return &rep
}
