package verify

import (
	"fmt"
	"slices"
	"time"

	"github.com/mcpvcr/mcpvcr/diff"
	"github.com/mcpvcr/mcpvcr/internal/causal"
	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/internal/mcpwire"
	"github.com/mcpvcr/mcpvcr/store"
)

// A verify plan is the recorded client side of a session cut into steps:
// each step sends one recorded client frame (or, over HTTP, opens a
// recorded stream that carried no client frame, such as the standalone
// GET) once the server has said, live, what it had said in the recording
// before that frame. The client's recorded answers to server requests are
// not steps: they are sent when the live server asks.

// waitKind is what a step waits for.
type waitKind uint8

const (
	waitAnswer   waitKind = iota + 1 // the answer to client request id
	waitCount                        // count messages of a kind, while owner is unanswered
	waitExchange                     // an HTTP exchange's response (its 202 or JSON body)
	waitServer                       // count messages of a kind the server sent on its own, until a time
	waitLinger                       // a time: the recorded client's pause
	waitTask                         // a task poll's recorded time since the task's creation (see tasks.go)
)

// wait is one condition of a step. A count wait gives up once its owner
// (the client request the message belongs to) is answered: what the server
// did not send while handling a request, it will not send after. Over
// Streamable HTTP it gives up lateGrace after the answer: what the server
// sent before it on another stream may still be on its way.
//
// What the server sent on its own (no client request was in flight: a
// roots/list it sends a while after initialized, a log message) has no
// answer to give up on: a server wait gives up lateGrace after the time
// the recording had it, counted from when the step before it was sent
// live. A linger wait is a pause of the recorded client's, from when the
// step before it was sent live: the time the recorded session lasted
// after its last step, during which the server could still speak.
type wait struct {
	kind  waitKind
	id    string        // waitAnswer: the client request id; waitExchange: exchangeKey; waitServer, waitLinger: the exchangeKey of the step the time counts from
	ids   []string      // waitExchange: the requests the exchange carried
	key   string        // waitCount, waitServer: countKey of the messages
	n     int           // waitCount, waitServer: how many
	owner string        // waitCount: the client request id the messages belong to
	after time.Duration // waitServer, waitLinger: the recorded time from the step named by id; waitTask: from the task's creation
}

// countKey identifies a kind of server message for counting: a request
// or notification method, or the progress token of a progress
// notification.
func countKey(m jsonrpc.Message) string {
	switch {
	case m.Kind == jsonrpc.KindRequest:
		return "request " + m.Method
	case m.Method == "notifications/progress":
		return "progress " + string(mcpwire.ProgressNotificationToken(m.Params))
	}
	return "notification " + m.Method
}

// step is one thing the client side does.
type step struct {
	f     *store.Frame  // the client frame to send; nil for an open
	open  *store.Stream // an HTTP stream to open without a client frame
	msgs  []jsonrpc.Message
	waits []wait
	task  *taskStep // a poll or tasks/result of a task the recorded client created
}

// srvReq is a recorded server request with the client's recorded answer.
type srvReq struct {
	method string
	mkey   string
	answer []byte       // the client's response, as recorded (a batch member's own bytes)
	frame  *store.Frame // the frame that carried the response
}

// plan is what verify sends, in order. A run only reads it: runs of
// one Verifier share it (see Verifier.prepare).
type plan struct {
	// rec is the recording the plan was built from; model is its causal
	// model, which disorder reads too.
	rec   *store.Recording
	model *causal.Model
	steps []step
	// final are the waits after the last step: the answers still owed.
	final   []wait
	srvReqs []*srvReq
	// responses maps a client request id to its recorded answer, for
	// learning the server-minted values the client echoes.
	responses map[string]jsonrpc.Message
	// handshake maps the ids of the client's initialize and
	// server/discover requests to them: their answers name the revision.
	handshake map[string]jsonrpc.Message
	// methods maps client request ids to their methods.
	methods map[string]string
	// recTools are the tools the recorded tools/list answers named.
	recTools map[string]toolAnnotations
	// polls maps the ids of the recorded tasks/get and tasks/result of
	// tasks the recorded client created to their steps; creators holds
	// the ids of the requests that created them.
	polls    map[string]*step
	creators map[string]bool
	// firstRequest is the index of the step with the first request, -1
	// if none.
	firstRequest int
}

// buildPlan cuts rec into steps, in the order of the session's causal
// model: each client frame waits for the server messages the recorded
// client had received before it, and over HTTP for the POSTs it had
// completed (a notification's 202, a JSON answer); frames the recording
// shows in flight together are sent without waiting for each other.
func buildPlan(rec *store.Recording) *plan {
	b := newPlanner(rec)
	for si, s := range b.m.Sends {
		b.send(si, s)
	}
	if b.http {
		b.opens(0, len(b.m.Msgs), true)
	}
	b.file(len(b.m.Msgs))
	if b.lastKey != "" && b.ended > b.lastAt {
		// The session lasts until the recorded one ended: what the server
		// said by then belongs to it.
		b.pending = append(b.pending, b.ends(b.ended)...)
	}
	b.p.final = b.pending
	b.p.planTasks(b.answerAt)
	return b.p
}

// planner is buildPlan's state while it walks the causal model: the plan
// so far and the waits the next step will carry.
type planner struct {
	p         *plan
	m         *causal.Model
	http      bool
	counts    map[string]int
	pending   []wait
	srvByMsg  map[int]*srvReq
	stepOf    map[int]int  // send index -> step index
	waited    map[int]bool // sends whose exchange a step waits for
	openSteps []*store.Stream
	next      int           // the next message of m.Msgs to file
	lastKey   string        // the exchangeKey of the latest step, "" before the first
	lastAt    time.Duration // when the recorded client took it
	// initKey and initAt name the step that sent notifications/initialized
	// and when, until the next request ("" once it is sent): see settle.
	initKey string
	initAt  time.Duration
	// initedKey and initedAt are the same, kept: see ends.
	initedKey string
	initedAt  time.Duration
	ended     time.Duration // when the recorded client ended the session
	answerAt  map[string]time.Duration
}

// newPlanner returns a planner at the start of rec.
func newPlanner(rec *store.Recording) *planner {
	m := causal.New(rec)
	b := &planner{
		p:         &plan{rec: rec, responses: map[string]jsonrpc.Message{}, handshake: map[string]jsonrpc.Message{}, methods: map[string]string{}, recTools: map[string]toolAnnotations{}, polls: map[string]*step{}, creators: map[string]bool{}, firstRequest: -1},
		m:         m,
		http:      rec.Session.Transport != store.Stdio,
		counts:    map[string]int{},
		srvByMsg:  map[int]*srvReq{},
		stepOf:    map[int]int{},
		waited:    map[int]bool{},
		openSteps: streamOpens(rec),
		ended:     sessionEnd(rec),
		answerAt:  map[string]time.Duration{},
	}
	b.p.model = m
	return b
}

// file adds the waits of the server messages up to message end.
func (b *planner) file(end int) {
	for ; b.next < end; b.next++ {
		x := b.m.Msgs[b.next]
		if x.Send != causal.None {
			continue
		}
		switch x.M.Kind {
		case jsonrpc.KindResult, jsonrpc.KindError:
			b.fileAnswer(x)
		case jsonrpc.KindRequest, jsonrpc.KindNotification:
			b.fileServerMessage(x)
		}
	}
}

// fileAnswer adds the wait for x, a server answer, if it answers a
// request of the client's.
func (b *planner) fileAnswer(x causal.Msg) {
	if x.Answers == causal.None || b.m.Msgs[x.Answers].Send == causal.None {
		return
	}
	id := string(b.m.Msgs[x.Answers].M.ID)
	b.p.responses[id] = x.M
	b.answerAt[id] = x.Frame.Offset
	b.pending = append(b.pending, wait{kind: waitAnswer, id: id})
}

// fileServerMessage adds the wait for x, a server request or
// notification (message b.next), and records a server request for the
// client's recorded answer.
func (b *planner) fileServerMessage(x causal.Msg) {
	k := countKey(x.M)
	b.counts[k]++
	switch {
	case x.Owner != causal.None:
		b.pending = append(b.pending, wait{kind: waitCount, key: k, n: b.counts[k], owner: string(b.m.Msgs[x.Owner].M.ID)})
	case b.lastKey != "" && x.Frame.Offset <= b.ended:
		// Sent on the server's own: expected about when the
		// recording had it (see wait). What came after the
		// client had ended the session comes after it live too.
		b.pending = append(b.pending, wait{kind: waitServer, key: k, n: b.counts[k], id: b.lastKey, after: max(0, x.Frame.Offset-b.lastAt)})
	}
	if x.M.Kind == jsonrpc.KindRequest {
		sr := &srvReq{method: x.M.Method, mkey: x.M.Method + " " + diff.Key(x.M.Params)}
		b.p.srvReqs = append(b.p.srvReqs, sr)
		b.srvByMsg[b.next] = sr
	}
}

// opens adds the steps of the streams that opened before offset at,
// filing what the server said before each opened, up to message end.
// A stream opens once what had ended before it did in the recording
// has ended live: a GET stream opened too early gets what the server
// sent before the recorded one existed (and dropped).
func (b *planner) opens(at time.Duration, end int, all bool) {
	for len(b.openSteps) > 0 && (all || b.openSteps[0].Opened <= at) {
		st := b.openSteps[0]
		cut := b.next
		for cut < end && b.m.Msgs[cut].Frame.Offset < st.Opened {
			cut++
		}
		b.file(cut)
		b.awaitClosedBefore(st.Opened)
		b.open(st)
	}
}

// awaitClosedBefore makes the next step wait for the POST exchanges
// whose response streams had closed by offset at.
func (b *planner) awaitClosedBefore(at time.Duration) {
	for e := range len(b.m.Sends) {
		if b.m.Sends[e].Frame.Offset > at {
			break
		}
		si, ok := b.stepOf[e]
		rs := b.m.Stream(b.m.Sends[e].Frame)
		if !ok || b.waited[e] || rs == nil || rs.Kind != store.PostStream || rs.Closed <= 0 || rs.Closed > at {
			continue
		}
		b.waited[e] = true
		b.pending = append(b.pending, wait{kind: waitExchange, id: exchangeKey(&b.p.steps[si]), ids: requestIDs(b.p.steps[si].msgs)})
	}
}

// open adds the step that opens st, the first of openSteps.
func (b *planner) open(st *store.Stream) {
	if st.Kind == store.DeleteStream && b.lastKey != "" {
		// The session ends when the recorded client ended it.
		b.pending = append(b.pending, b.ends(st.Opened)...)
	}
	b.p.steps = append(b.p.steps, step{open: st, waits: b.pending})
	b.pending, b.openSteps = nil, b.openSteps[1:]
	b.lastKey, b.lastAt = exchangeKey(&b.p.steps[len(b.p.steps)-1]), st.Opened
	if st.Kind == store.GetStream || st.Kind == store.SSEGetStream {
		// The stream was open when the client sent its next
		// frame: what the server sends on it is not lost.
		b.pending = append(b.pending, wait{kind: waitExchange, id: b.lastKey})
	}
}

// send files what came before client send si and adds its step, unless
// it answers server requests: those are sent when the live server asks.
func (b *planner) send(si int, s causal.Send) {
	f := s.Frame
	if b.http {
		b.opens(f.Offset, s.Msgs[0], false)
	}
	b.file(s.Msgs[0])
	if b.m.Responses(s) {
		for _, i := range s.Msgs {
			if sr := b.srvByMsg[b.m.Msgs[i].Answers]; sr != nil && sr.answer == nil {
				sr.answer, sr.frame = b.m.Msgs[i].M.Raw, f
			}
		}
		b.next = s.Msgs[len(s.Msgs)-1] + 1
		return
	}
	if b.http {
		b.awaitExchanges(s)
	}
	msgs := b.clientMessages(s)
	b.settle(f, msgs)
	b.stepOf[si] = len(b.p.steps)
	b.p.steps = append(b.p.steps, step{f: f, msgs: msgs, waits: b.pending})
	b.pending = nil
	b.lastKey, b.lastAt = exchangeKey(&b.p.steps[len(b.p.steps)-1]), f.Offset
	if len(msgs) == 1 && msgs[0].Kind == jsonrpc.KindNotification && msgs[0].Method == "notifications/initialized" {
		b.initKey, b.initAt = b.lastKey, f.Offset
		b.initedKey, b.initedAt = b.lastKey, f.Offset
	}
	b.next = s.Msgs[len(s.Msgs)-1] + 1
	if b.p.firstRequest < 0 && len(requestIDs(msgs)) > 0 {
		b.p.firstRequest = len(b.p.steps) - 1
	}
}

// settle makes the first request after notifications/initialized,
// frame f carrying msgs, wait as long after it as the recorded client
// did (at most maxSettle). Many servers finish setting up a session once
// it is initialized (server-everything registers its tools then, and
// says so with notifications/tools/list_changed): a request sent sooner
// than the recorded one can meet a server not yet ready ("Tool not
// found"), which is not a change of the server.
func (b *planner) settle(f *store.Frame, msgs []jsonrpc.Message) {
	if b.initKey == "" || len(requestIDs(msgs)) == 0 {
		return
	}
	b.pending = append(b.pending, wait{kind: waitLinger, id: b.initKey, after: min(max(0, f.Offset-b.initAt), maxSettle)})
	b.initKey = ""
}

// ends returns the wait before the session ends, as the recorded one
// did at offset at: as long after notifications/initialized as the
// recorded session lasted (at most maxLinger), or, in a session without
// one, as long after the last step as the recorded client stayed. verify
// runs its steps faster than the recorded client, so the time since
// initialized keeps the messages a server sends on a timer of its own
// since the session began (server-everything asks for roots about
// 350 ms after initialized) inside the session as they were, or outside.
func (b *planner) ends(at time.Duration) []wait {
	if b.initedKey != "" && at > b.initedAt {
		// Measured from initialized alone: a wait from the last step
		// drifts later when the run is slower than the recording (under
		// load), and lets in what a server sends on a timer of its own
		// that the recorded session ended before. What the server sent
		// after the last step is waited for by count (waitServer).
		return []wait{{kind: waitLinger, id: b.initedKey, after: min(at-b.initedAt, maxLinger)}}
	}
	return []wait{{kind: waitLinger, id: b.lastKey, after: min(max(0, at-b.lastAt), maxLinger)}}
}

// maxSettle bounds settle's wait.
const maxSettle = time.Second

// awaitExchanges makes the next step, send s, wait for the JSON
// exchanges the recorded client had completed before sending it.
func (b *planner) awaitExchanges(s causal.Send) {
	for _, e := range s.Awaited {
		if st, ok := b.stepOf[e]; ok && !b.waited[e] && !b.m.Stream(b.m.Sends[e].Frame).SSE() {
			b.waited[e] = true
			b.pending = append(b.pending, wait{kind: waitExchange, id: exchangeKey(&b.p.steps[st]), ids: requestIDs(b.p.steps[st].msgs)})
		}
	}
}

// clientMessages returns the messages of send s, noting on the plan the
// methods of its requests, the tools a recorded tools/list answer named
// and the handshake requests.
func (b *planner) clientMessages(s causal.Send) []jsonrpc.Message {
	var msgs []jsonrpc.Message
	for _, i := range s.Msgs {
		x := b.m.Msgs[i].M
		msgs = append(msgs, x)
		if x.Kind == jsonrpc.KindRequest {
			b.p.methods[string(x.ID)] = x.Method
		}
		if a := b.m.Msgs[i].Answer; x.Method == "tools/list" && a != causal.None && b.m.Msgs[a].M.Kind == jsonrpc.KindResult {
			toolsOf(b.m.Msgs[a].M.Result, b.p.recTools)
		}
		if x.Kind == jsonrpc.KindRequest && (x.Method == "initialize" || x.Method == "server/discover") {
			b.p.handshake[string(x.ID)] = x
		}
	}
	return msgs
}

// maxLinger bounds how long a verify run lasts after its last step: a
// recorded client may have stayed connected for long after it was done.
const maxLinger = 5 * time.Second

// sessionEnd is when the recorded client ended the session: over stdio
// when it closed the server's stdin, over HTTP when its last stream
// closed (the DELETE, or the GET stream it dropped), and at the latest
// frame if the recording has no such end.
func sessionEnd(rec *store.Recording) time.Duration {
	var end time.Duration
	for i := range rec.Frames {
		if f := &rec.Frames[i]; f.Direction == store.ClientToServer || rec.Session.Transport != store.Stdio {
			end = max(end, f.Offset)
		}
	}
	for i := range rec.Streams {
		st := &rec.Streams[i]
		switch {
		case st.Closed <= 0 || st.End == store.EndOpen || st.End == store.EndProxyShutdown:
		case rec.Session.Transport == store.Stdio && st.Kind == store.StdinStream:
			end = max(end, st.Closed)
		case rec.Session.Transport != store.Stdio:
			end = max(end, st.Closed)
		}
	}
	return end
}

// exchangeKey names the HTTP exchange of a step among the driver's waits.
func exchangeKey(st *step) string {
	if st.open != nil {
		return fmt.Sprintf("#stream %d", st.open.ID)
	}
	return fmt.Sprintf("#%d", st.f.Seq)
}

// requestIDs returns the ids of the requests among msgs.
func requestIDs(msgs []jsonrpc.Message) []string {
	var ids []string
	for _, m := range msgs {
		if m.Kind == jsonrpc.KindRequest {
			ids = append(ids, string(m.ID))
		}
	}
	return ids
}

// streamOpens returns the HTTP streams the client opened without sending
// a frame on them (the standalone GET, the HTTP+SSE stream, a DELETE), by
// when they opened.
// Resuming GETs are left out: they answered a broken stream, which the
// live run may not have.
func streamOpens(rec *store.Recording) []*store.Stream {
	withFrame := map[int64]bool{}
	for i := range rec.Frames {
		if rec.Frames[i].Direction == store.ClientToServer {
			withFrame[rec.Frames[i].StreamID] = true
		}
	}
	var out []*store.Stream
	for i := range rec.Streams {
		st := &rec.Streams[i]
		if (st.Kind == store.GetStream || st.Kind == store.DeleteStream || st.Kind == store.SSEGetStream) && !withFrame[st.ID] {
			out = append(out, st)
		}
	}
	slices.SortStableFunc(out, func(a, b *store.Stream) int {
		switch {
		case a.Opened < b.Opened:
			return -1
		case a.Opened > b.Opened:
			return 1
		}
		return 0
	})
	return out
}

// pick returns the recorded server request that best matches live: the
// first one not in used with the same method and params, else the first
// one not in used with the same method. It adds it to used, which is the
// run's (the plan is shared by runs).
func (p *plan) pick(live jsonrpc.Message, used map[*srvReq]bool) *srvReq {
	k := live.Method + " " + diff.Key(live.Params)
	var best *srvReq
	for _, sr := range p.srvReqs {
		if used[sr] || sr.answer == nil || sr.method != live.Method {
			continue
		}
		if sr.mkey == k {
			best = sr
			break
		}
		if best == nil {
			best = sr
		}
	}
	if best != nil {
		used[best] = true
	}
	return best
}
