package replayer

import (
	"slices"
	"time"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/internal/mcpwire"
	"github.com/mcpvcr/mcpvcr/internal/script"
	"github.com/mcpvcr/mcpvcr/store"
)

// ref names the recorded client request with id rec that this replay
// matched (the latest with that id); one with frame -1, which no table
// holds, if none.
func (e *engine) ref(rec string) script.Ref {
	f := e.reqAt[rec]
	if f == nil {
		return script.Ref{Frame: -1}
	}
	return script.Ref{Frame: e.index[f], ID: rec}
}

// engine replays one recorded session to one live client: it matches the
// client's frames to recorded ones and releases the recorded server frames
// whose causes have happened. It is not safe for concurrent use.
type engine struct {
	rec *recording
	mt  Match
	// frames are the recording's protocol frames as its template linked
	// them, shared by every engine of it (read only); done says, for
	// each, whether this replay has received or sent it. Copying the
	// frames per engine cost each live session a copy of the whole
	// recording, and a sessionless client gets a live session per POST.
	frames []script.Frame
	done   marks
	// lo is the index of the first frame not yet done: every frame
	// before it is matched or sent, so scans start there.
	lo     int
	ids    map[string]string       // recorded client request id -> live id
	rids   map[string]string       // live client request id -> recorded id
	reqAt  map[string]*store.Frame // recorded client request id -> the frame that carried it
	tokens map[string]string       // recorded progress token -> live token

	// dependents lists, for each frame, the server frames that wait for
	// it (their prev or extra); ready holds the server frames whose causes
	// changed since the last release, which is all release looks at.
	dependents [][]int
	ready      []int
	started    bool
	// firstC2S is the first client frame not yet received: every client
	// frame before it has been.
	firstC2S int
	// unsentS2C counts the server frames not yet sent.
	unsentS2C int
	// answerOf maps a recorded client request to the index of the
	// server's answer to it, and cancelOf to the index of the client's
	// notifications/cancelled for it, as the causal model pairs them.
	answerOf map[script.Ref]int
	cancelOf map[script.Ref]int
	// index maps a recorded frame to its index in frames.
	index map[*store.Frame]int
	// queue holds released frames the cursor has not sent yet (stdio).
	queue []outFrame
	// touched is one past the last frame received or sent.
	touched int
	// node is, for a cursor reading a Source, the node of the candidate
	// tree whose sessions e speaks for: they share their first frames.
	node *treeNode
	// history is, for an engine a cursor reading a Source loaded after
	// the client's first frames, the recorded frame each of those matched
	// (nil where none did), by place in the cursor's history; it does not
	// change once the engine is a candidate.
	history []*store.Frame
	// byTaskID are the recording's server tasks by taskId (tasks.go),
	// nil when none; live what this replay knows of the tasks it created.
	byTaskID map[string]*script.Task
	live     map[*script.Task]*liveTask
	// taskIDs maps the ids of the tasks the recorded client ran to the
	// live client's, as JSON values (tasks.go).
	taskIDs map[string]string
	// order keeps recorded order over one stream (order.go).
	order holdState
}

func newEngine(rec *recording, mt Match) *engine {
	t := rec.template(mt)
	e := &engine{rec: rec, mt: mt, ids: map[string]string{}, rids: map[string]string{}, tokens: map[string]string{}, reqAt: map[string]*store.Frame{},
		frames: t.Frames, done: newMarks(len(t.Frames)), dependents: t.Dependents, unsentS2C: t.ServerFrames,
		answerOf: t.AnswerOf, cancelOf: t.CancelOf, index: t.Index, byTaskID: t.Tasks, order: holdState{lastC2S: -1}}
	return e
}

// template returns the engine state every replay of r under mt starts
// from: the protocol frames parsed and linked, with nothing received or
// sent yet. It is computed once per matching mode; engines copy its
// frames and share the rest, which they only read.
func (r *recording) template(mt Match) *script.Script {
	r.tmplMu.Lock()
	defer r.tmplMu.Unlock()
	k := mt.String()
	if t, ok := r.tmpls[k]; ok {
		return t
	}
	t := script.Build(r.Recording, mt)
	if r.tmpls == nil {
		r.tmpls = map[string]*script.Script{}
	}
	r.tmpls[k] = t
	return t
}

// match finds the first unconsumed recorded client frame that live
// reproduces. An answer to a server request matches only a recorded
// answer to a request this replay has sent; one whose content differs
// from the recorded answer's (under mt and its rules) matches when loose
// is set, and the caller reports it (answerMismatch): loose only keeps
// the conversation going. It changes nothing.
func (e *engine) match(live jsonrpc.Message, loose bool, accept func(*engine, int) bool) (int, bool) {
	k, members := e.mt.Key(live, e.rids)
	body, bodyOf := "", -1 // live's answerKey, under the method of server request bodyOf
	for i := e.lo; i < len(e.frames); i++ {
		fr := &e.frames[i]
		if !fr.C2S || e.done.has(i) {
			continue
		}
		var ok bool
		switch {
		case live.Kind == jsonrpc.KindBatch:
			ok = fr.Msg.Kind == jsonrpc.KindBatch && slices.Equal(fr.MemberKeys, members)
		case live.Kind.IsResponse():
			// An answer matches only an answer to a server request this
			// replay has sent.
			if ok = fr.Key == k && fr.Asks >= 0 && e.done.has(fr.Asks); ok && !loose {
				if bodyOf != fr.Asks {
					body, bodyOf = e.mt.AnswerKey(e.frames[fr.Asks].Msg.Method, live), fr.Asks
				}
				ok = fr.Body == body
			}
		default:
			ok = fr.Key == k
		}
		if ok && (accept == nil || accept(e, i)) {
			return i, true
		}
	}
	return -1, false
}

// consume marks recorded frame i as received as live, and learns the
// client's ids and progress tokens.
func (e *engine) consume(i int, live jsonrpc.Message) {
	e.done.set(i)
	e.touched = max(e.touched, i+1)
	e.ready = append(e.ready, e.dependents[i]...)
	if e.frames[i].C2S {
		e.order.lastC2S = max(e.order.lastC2S, i)
	}
	e.learn(i, live)
	e.learnTask(i, live)
}

// learn records the live client's ids and progress tokens for recorded
// client frame i, which live reproduces, so that rewrite can put them in
// the recorded answers.
func (e *engine) learn(i int, live jsonrpc.Message) {
	fr := &e.frames[i]
	learn := func(rec, got jsonrpc.Message) {
		if rec.Kind != jsonrpc.KindRequest {
			return
		}
		e.ids[string(rec.ID)] = string(got.ID)
		e.rids[string(got.ID)] = string(rec.ID)
		e.reqAt[string(rec.ID)] = fr.F
		if rt, lt := mcpwire.ProgressToken(rec.Params), mcpwire.ProgressToken(got.Params); rt != nil && lt != nil {
			e.tokens[string(rt)] = string(lt)
		}
	}
	if fr.Msg.Kind != jsonrpc.KindBatch {
		learn(fr.Msg, live)
		return
	}
	used := make([]bool, len(live.Members))
	for _, rm := range fr.Msg.Members {
		rk, _ := e.mt.Key(rm, nil)
		for j, lm := range live.Members {
			if lk, _ := e.mt.Key(lm, e.rids); !used[j] && lk == rk {
				used[j] = true
				learn(rm, lm)
				break
			}
		}
	}
}

// marks is a set of frame indexes, a bit each: a live session's engine
// over a long recording costs an eighth of a byte per frame (a
// sessionless client gets one per POST).
type marks []uint64

func newMarks(n int) marks { return make(marks, (n+63)/64) }

func (m marks) has(i int) bool { return m[i>>6]&(1<<(i&63)) != 0 }

func (m marks) set(i int) { m[i>>6] |= 1 << (i & 63) }

// rewriter returns an engine over rec's template that only learns ids
// and rewrites frames: it shares the template's frames, as every engine
// does, and has no marks (done is nil: it never matches or releases),
// so that it costs nothing per frame of the recording (the exchange pool
// makes one per request).
func (r *recording) rewriter(mt Match) *engine {
	t := r.template(mt)
	return &engine{rec: r, mt: mt, frames: t.Frames, index: t.Index, answerOf: t.AnswerOf, cancelOf: t.CancelOf, byTaskID: t.Tasks,
		ids: map[string]string{}, rids: map[string]string{}, tokens: map[string]string{}, reqAt: map[string]*store.Frame{}}
}

// outFrame is a recorded server frame released for sending.
type outFrame struct {
	// Frame is the recorded frame.
	Frame *store.Frame
	// Data is the payload to send: the recorded Data, or a copy with the
	// ids and progress tokens rewritten to the live client's.
	Data []byte
	// Rewritten reports whether Data differs from Frame.Data.
	Rewritten bool
	// Gap is the recorded time between the frame that released this one
	// and this one; paced replay waits it.
	Gap time.Duration
	// Timed reports that Gap is waited even when replay is not paced: a
	// server's cancellation of its own request, whose delay is the
	// server's timeout, which the client must get as it did; a server's
	// poll of a task the client runs, on the server's clock (tasks.go).
	Timed bool
	// Born is, for a task's status notification (tasks.go), when the live
	// task was created, and Since its recorded time since then: paced
	// stdio replay writes it then, holding nothing else back. For a
	// server's poll of a task the client runs (Timed), the same: it goes
	// no earlier than Born plus Since, scaled by the pace (pollTime).
	Born  time.Time
	Since time.Duration
	// By is the recorded client frame whose live counterpart released
	// this one (nil when the start, a wait or a timer did); Server.Trace
	// prints it.
	By *store.Frame
}

// release returns, in recorded order, every server frame whose causes
// have all happened, and marks them sent. It looks only at the frames
// that wait for something that happened since the last call (all frames
// on the first), so a session of n frames costs O(n) in all, not O(n)
// per client frame.
func (e *engine) release() []outFrame {
	defer e.advance()
	var work []int
	if !e.started {
		e.started = true
		for i := range e.frames {
			work = append(work, i)
		}
	} else {
		work, e.ready = e.ready, nil
	}
	// Frames held back in recorded order (order.go) are looked at again.
	work, e.order.held = append(work, e.order.held...), nil
	var idx []int
	for len(work) > 0 {
		// In recorded order, so that a frame is held only behind one
		// that is not ready too.
		slices.Sort(work)
		var next []int
		for _, i := range slices.Compact(work) {
			fr := &e.frames[i]
			if fr.C2S || e.done.has(i) {
				continue
			}
			if (fr.Prev >= 0 && !e.done.has(fr.Prev)) || (fr.Extra >= 0 && !e.done.has(fr.Extra)) {
				continue
			}
			if e.holds(i) {
				e.order.held = append(e.order.held, i)
				continue
			}
			e.done.set(i)
			e.unsentS2C--
			e.touched = max(e.touched, i+1)
			idx = append(idx, i)
			next = append(next, e.dependents[i]...)
		}
		if len(next) > 0 {
			// What was just sent may have been what the held waited for.
			next, e.order.held = append(next, e.order.held...), nil
		}
		work = next
	}
	slices.Sort(idx)
	var outs []outFrame
	for _, i := range idx {
		fr := &e.frames[i]
		var trigger time.Duration
		for _, d := range []int{fr.Prev, fr.Extra} {
			if d >= 0 && e.frames[d].F.Offset > trigger {
				trigger = e.frames[d].F.Offset
			}
		}
		data, changed := e.rewrite(fr)
		if d, ok := e.shiftTaskTimes(i, data); ok {
			data, changed = d, true
		}
		timed := fr.Msg.Kind == jsonrpc.KindNotification && fr.Msg.Method == "notifications/cancelled" || polls(fr.Msg)
		born, since, tt, isTask := e.taskTime(i)
		if isTask {
			trigger = tt // a task's status goes on its own timeline (tasks.go)
		}
		if b, s, ok := e.pollTime(i); ok && timed {
			born, since = b, s // a poll of the client's task, on the task's timeline too
		}
		if timed {
			// The server's timeout runs from its request, not from
			// the frame before (its answer to the client's call may
			// have overtaken the cancellation).
			if fr.Asks >= 0 {
				trigger = e.frames[fr.Asks].F.Offset
			}
		}
		outs = append(outs, outFrame{Frame: fr.F, Data: data, Rewritten: changed, Gap: max(fr.F.Offset-trigger, 0), Timed: timed, Born: born, Since: since})
	}
	return outs
}

// advance moves lo past the frames that are done.
func (e *engine) advance() {
	for e.lo < len(e.frames) && e.done.has(e.lo) {
		e.lo++
	}
}

// exhausted reports whether every recorded server frame has been sent.
func (e *engine) exhausted() bool { return e.unsentS2C == 0 }

// unsent returns the recorded client frames the live client never sent.
func (e *engine) unsent() []*store.Frame {
	var fs []*store.Frame
	for i := range e.frames {
		if e.frames[i].C2S && !e.done.has(i) {
			fs = append(fs, e.frames[i].F)
		}
	}
	return fs
}
