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
	used   bool
}

// plan is what verify sends, in order.
type plan struct {
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
	p := &plan{responses: map[string]jsonrpc.Message{}, handshake: map[string]jsonrpc.Message{}, methods: map[string]string{}, recTools: map[string]toolAnnotations{}, polls: map[string]*step{}, creators: map[string]bool{}, firstRequest: -1}
	m := causal.New(rec)
	var (
		counts    = map[string]int{}
		pending   []wait
		srvByMsg  = map[int]*srvReq{}
		stepOf    = map[int]int{}  // send index -> step index
		waited    = map[int]bool{} // sends whose exchange a step waits for
		openSteps = streamOpens(rec)
		next      = 0               // the next message of m.Msgs to file
		lastKey   string            // the exchangeKey of the latest step, "" before the first
		lastAt    time.Duration     // when the recorded client took it
		ended     = sessionEnd(rec) // when the recorded client ended the session
		answerAt  = map[string]time.Duration{}
	)
	http := rec.Session.Transport != store.Stdio
	// file adds the waits of the server messages up to message end.
	file := func(end int) {
		for ; next < end; next++ {
			x := m.Msgs[next]
			if x.Send != causal.None {
				continue
			}
			switch x.M.Kind {
			case jsonrpc.KindResult, jsonrpc.KindError:
				if x.Answers == causal.None || m.Msgs[x.Answers].Send == causal.None {
					continue
				}
				id := string(m.Msgs[x.Answers].M.ID)
				p.responses[id] = x.M
				answerAt[id] = x.Frame.Offset
				pending = append(pending, wait{kind: waitAnswer, id: id})
			case jsonrpc.KindRequest, jsonrpc.KindNotification:
				k := countKey(x.M)
				counts[k]++
				switch {
				case x.Owner != causal.None:
					pending = append(pending, wait{kind: waitCount, key: k, n: counts[k], owner: string(m.Msgs[x.Owner].M.ID)})
				case lastKey != "" && x.Frame.Offset <= ended:
					// Sent on the server's own: expected about when the
					// recording had it (see wait). What came after the
					// client had ended the session comes after it live too.
					pending = append(pending, wait{kind: waitServer, key: k, n: counts[k], id: lastKey, after: max(0, x.Frame.Offset-lastAt)})
				}
				if x.M.Kind == jsonrpc.KindRequest {
					sr := &srvReq{method: x.M.Method, mkey: x.M.Method + " " + diff.Key(x.M.Params)}
					p.srvReqs = append(p.srvReqs, sr)
					srvByMsg[next] = sr
				}
			}
		}
	}
	// opens adds the steps of the streams that opened before offset at,
	// filing what the server said before each opened, up to message end.
	// A stream opens once what had ended before it did in the recording
	// has ended live: a GET stream opened too early gets what the server
	// sent before the recorded one existed (and dropped).
	opens := func(at time.Duration, end int, all bool) {
		for len(openSteps) > 0 && (all || openSteps[0].Opened <= at) {
			st := openSteps[0]
			cut := next
			for cut < end && m.Msgs[cut].Frame.Offset < st.Opened {
				cut++
			}
			file(cut)
			for e := range len(m.Sends) {
				if m.Sends[e].Frame.Offset > st.Opened {
					break
				}
				si, ok := stepOf[e]
				rs := m.Stream(m.Sends[e].Frame)
				if !ok || waited[e] || rs == nil || rs.Kind != store.PostStream || rs.Closed <= 0 || rs.Closed > st.Opened {
					continue
				}
				waited[e] = true
				pending = append(pending, wait{kind: waitExchange, id: exchangeKey(&p.steps[si]), ids: requestIDs(p.steps[si].msgs)})
			}
			if st.Kind == store.DeleteStream && lastKey != "" {
				// The session ends when the recorded client ended it.
				pending = append(pending, wait{kind: waitLinger, id: lastKey, after: min(max(0, st.Opened-lastAt), maxLinger)})
			}
			p.steps = append(p.steps, step{open: st, waits: pending})
			pending, openSteps = nil, openSteps[1:]
			lastKey, lastAt = exchangeKey(&p.steps[len(p.steps)-1]), st.Opened
			if st.Kind == store.GetStream || st.Kind == store.SSEGetStream {
				// The stream was open when the client sent its next
				// frame: what the server sends on it is not lost.
				pending = append(pending, wait{kind: waitExchange, id: lastKey})
			}
		}
	}
	for si, s := range m.Sends {
		f := s.Frame
		if http {
			opens(f.Offset, s.Msgs[0], false)
		}
		file(s.Msgs[0])
		if m.Responses(s) {
			for _, i := range s.Msgs {
				if sr := srvByMsg[m.Msgs[i].Answers]; sr != nil && sr.answer == nil {
					sr.answer, sr.frame = m.Msgs[i].M.Raw, f
				}
			}
			next = s.Msgs[len(s.Msgs)-1] + 1
			continue
		}
		if http {
			for _, e := range s.Awaited {
				if st, ok := stepOf[e]; ok && !waited[e] && !m.Stream(m.Sends[e].Frame).SSE() {
					waited[e] = true
					pending = append(pending, wait{kind: waitExchange, id: exchangeKey(&p.steps[st]), ids: requestIDs(p.steps[st].msgs)})
				}
			}
		}
		var msgs []jsonrpc.Message
		for _, i := range s.Msgs {
			x := m.Msgs[i].M
			msgs = append(msgs, x)
			if x.Kind == jsonrpc.KindRequest {
				p.methods[string(x.ID)] = x.Method
			}
			if a := m.Msgs[i].Answer; x.Method == "tools/list" && a != causal.None && m.Msgs[a].M.Kind == jsonrpc.KindResult {
				toolsOf(m.Msgs[a].M.Result, p.recTools)
			}
			if x.Kind == jsonrpc.KindRequest && (x.Method == "initialize" || x.Method == "server/discover") {
				p.handshake[string(x.ID)] = x
			}
		}
		stepOf[si] = len(p.steps)
		p.steps = append(p.steps, step{f: f, msgs: msgs, waits: pending})
		pending = nil
		lastKey, lastAt = exchangeKey(&p.steps[len(p.steps)-1]), f.Offset
		next = s.Msgs[len(s.Msgs)-1] + 1
		if p.firstRequest < 0 && len(requestIDs(msgs)) > 0 {
			p.firstRequest = len(p.steps) - 1
		}
	}
	if http {
		opens(0, len(m.Msgs), true)
	}
	file(len(m.Msgs))
	if lastKey != "" && ended > lastAt {
		// The session lasts until the recorded one ended: what the server
		// said by then belongs to it.
		pending = append(pending, wait{kind: waitLinger, id: lastKey, after: min(ended-lastAt, maxLinger)})
	}
	p.final = pending
	p.planTasks(answerAt)
	return p
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
// first unused one with the same method and params, else the first
// unused one with the same method. It marks it used.
func (p *plan) pick(live jsonrpc.Message) *srvReq {
	k := live.Method + " " + diff.Key(live.Params)
	var best *srvReq
	for _, sr := range p.srvReqs {
		if sr.used || sr.answer == nil || sr.method != live.Method {
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
		best.used = true
	}
	return best
}
