package replayer

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/internal/mcpwire"
	"github.com/mcpvcr/mcpvcr/internal/script"
	"github.com/mcpvcr/mcpvcr/store"
)

// DefaultSettle is how long a client that waits for an answer may stay
// silent, while the candidate sessions still disagree on that answer,
// before replay settles on the first candidate that has one.
const DefaultSettle = 150 * time.Millisecond

// cursor follows one live client through the recorded sessions that are
// still candidates for it: every session whose client frames agree with
// what this client has sent. Until one candidate remains, only what every
// candidate would send next goes out (equal after id rewriting), so no
// candidate's answer reaches a client that is replaying another. When
// the client waits for an answer the candidates disagree on, settle keeps
// those that agree with the first (in recorded order) that has one. It is
// safe for concurrent use.
type cursor struct {
	mu    sync.Mutex // guards everything below
	cands []*engine
	// queued reports whether candidates keep their released frames in
	// their queues until emit sends them (stdio); HTTP streams read the
	// released frames of each candidate's recorded streams instead.
	queued bool
	// changed is closed and replaced whenever a candidate releases frames
	// or candidates are dropped.
	changed chan struct{}
	// outstanding holds the live ids of client requests not yet answered.
	outstanding map[string]bool
	// selfAnswered holds the live ids of requests replay answered itself
	// (after --wait): their recorded answers are not sent any more.
	selfAnswered map[string]bool

	// For a cursor reading a Source: src loads sessions as they are
	// needed, ctx is the replay's lifetime, history the client frames
	// matched so far, emitted what went out of the queues (stdio).
	src     *Source
	tree    *tree // src's candidate tree under the cursor's rules
	ctx     context.Context
	history []jsonrpc.Message
	// accepts holds, by place in history, the accept each client frame
	// was matched with (see receive), so that a candidate loaded later
	// matches it as the loaded ones did: a refused request only to one of
	// its very shape.
	accepts []func(*engine, int) bool
	emitted emitLog
	// fresh holds, for a cursor that does not queue (HTTP), what the
	// candidates loaded since the last start or receive released while
	// they were brought to where the cursor is; freshMatched the frame
	// each of them matched for the newest client frame.
	fresh        []outFrame
	freshMatched map[*engine]*store.Frame
	// now is the replay's clock, which dates the tasks the client creates
	// (tasks.go); if nil, they are dated the zero time.
	now func() time.Time
}

// newLazyCursor returns a cursor over every session of src: queued for
// stdio, not for HTTP.
func newLazyCursor(ctx context.Context, src *Source, mt Match, queued bool) (*cursor, error) {
	c := &cursor{queued: queued, changed: make(chan struct{}), outstanding: map[string]bool{}, selfAnswered: map[string]bool{}, src: src, ctx: ctx,
		freshMatched: map[*engine]*store.Frame{}}
	t, cands, err := src.candidates(ctx, mt)
	if err != nil {
		return nil, err
	}
	for _, e := range cands {
		e.order.ordered = queued
	}
	c.tree, c.cands = t, cands
	return c, nil
}

func newCursor(recs []*recording, mt Match, queued bool) *cursor {
	c := &cursor{queued: queued, changed: make(chan struct{}), outstanding: map[string]bool{}, selfAnswered: map[string]bool{}}
	for _, r := range recs {
		e := newEngine(r, mt)
		e.order.ordered = queued
		c.cands = append(c.cands, e)
	}
	return c
}

// notify wakes everyone waiting for a change. The caller holds c.mu.
func (c *cursor) notify() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// wakeup returns a channel closed at the next change.
func (c *cursor) wakeup() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.changed
}

// start releases what each candidate's server sent before any client
// frame and returns it all.
func (c *cursor) start() []outFrame {
	c.mu.Lock()
	defer c.mu.Unlock()
	var outs []outFrame
	for _, e := range c.cands {
		o := e.release()
		if c.queued {
			e.queue = append(e.queue, o...)
		}
		outs = append(outs, o...)
	}
	c.splitLazy(nil)
	outs = append(outs, c.takeFresh()...)
	clear(c.freshMatched)
	c.notify()
	return outs
}

// takeFresh returns and forgets what candidates loaded since the last
// call released on the way (see fresh).
func (c *cursor) takeFresh() []outFrame {
	outs := c.fresh
	c.fresh = nil
	return outs
}

// receipt is what receiving one client frame did.
type receipt struct {
	// matched is, per surviving candidate, the recorded frame matched.
	matched map[*engine]*store.Frame
	// outs are the frames the candidates released, all of them.
	outs []outFrame
	// mm is set when nothing matched.
	mm *Mismatch
	// differs is set when live, a client's answer to a server request,
	// matched the recorded answer by id only: no candidate's recorded
	// answer says what it says. Replay goes on as recorded, and counts it
	// unmatched.
	differs *Mismatch
	// unrecorded reports an answer to a server request whose recorded
	// answer never came (the recorded client was gone first): a server
	// takes it and moves on.
	unrecorded bool
	// pos is, for a cursor reading a Source, the client frame's place in
	// its history: a candidate loaded later names the frame it matched
	// for it at that place (engine.history); -1 otherwise.
	pos int
}

// receive matches a client frame against every candidate, drops the
// candidates it does not match, and releases what it caused. When nothing
// matches, the candidates are kept and a Mismatch naming the closest
// recorded frame of any candidate is returned.
//
// accept, if not nil, vets each recorded frame that would match: over
// HTTP, a frame the server refused at the HTTP level matches only a
// request of the same shape.
func (c *cursor) receive(live jsonrpc.Message, accept func(*engine, int) bool) receipt {
	c.mu.Lock()
	defer c.mu.Unlock()
	// What the candidates stood for: a frame that matches nothing leaves
	// them as they were, and is explained against all their sessions.
	prev := slices.Clone(c.cands)
	var before []*treeNode
	for _, e := range c.cands {
		if e.node != nil {
			before = append(before, e.node)
		}
	}
	c.splitLazy(&live)
	// An answer to a server request keeps the candidates whose recorded
	// answer it reproduces; when none does, those that sent that request
	// stay in play (loose) and the difference is reported.
	var kept []*engine
	var idx []int
	loosely := false
	for _, loose := range []bool{false, true} {
		if loose && !live.Kind.IsResponse() {
			break
		}
		for _, e := range c.cands {
			if i, ok := e.match(live, loose, accept); ok {
				kept = append(kept, e)
				idx = append(idx, i)
			}
		}
		if len(kept) > 0 {
			loosely = loose
			break
		}
	}
	if len(kept) == 0 {
		if c.src != nil {
			c.cands, c.fresh = prev, nil
			for i, e := range prev {
				e.node = before[i]
			}
		}
		if live.Kind.IsResponse() && c.cands[0].unanswered(live.ID) {
			return receipt{unrecorded: true, pos: -1}
		}
		if c.src != nil {
			return receipt{mm: c.closestLazy(live, before), pos: -1}
		}
		return receipt{mm: closestAmong(c.cands, live), pos: -1}
	}
	c.cands = kept
	rc := receipt{matched: map[*engine]*store.Frame{}, pos: -1}
	if loosely {
		rc.differs = kept[0].answerMismatch(live, idx[0])
	}
	for n, e := range kept {
		e.consume(idx[n], live)
		e.absorbTask(idx[n], c.clockNow())
		o := e.release()
		for k := range o {
			o[k].By = e.frames[idx[n]].F
		}
		if c.queued {
			e.queue = append(e.queue, o...)
		}
		rc.outs = append(rc.outs, o...)
		rc.matched[e] = e.frames[idx[n]].F
	}
	for _, id := range live.RequestIDs() {
		c.outstanding[id] = true
	}
	if c.src != nil {
		rc.pos = len(c.history)
		c.history = append(c.history, live)
		c.accepts = append(c.accepts, accept)
		clear(c.freshMatched) // of engines brought before live
		c.splitLazy(nil)
		// Loaded before the match, or brought past it since.
		rc.outs = append(c.takeFresh(), rc.outs...)
		for e, f := range c.freshMatched {
			rc.matched[e] = f
		}
		clear(c.freshMatched)
	}
	c.notify()
	return rc
}

// sent records that out went to the client: the requests it answers are
// no longer outstanding. It reports false when out answers a request
// replay answered itself, so out must not be sent. The caller holds c.mu.
func (c *cursor) sent(out outFrame) bool {
	if out.Frame == nil || !(out.Frame.Kind.IsResponse() || out.Frame.Kind == store.KindBatch) {
		return true
	}
	ids := jsonrpc.Parse(out.Data).ResponseIDs()
	if len(ids) == 1 && c.selfAnswered[ids[0]] {
		return false
	}
	for _, id := range ids {
		delete(c.outstanding, id)
	}
	return true
}

// undecided reports whether candidates still disagree on what to send
// next while the client waits for an answer (stdio).
func (c *cursor) undecided() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.cands) < 2 || len(c.outstanding) == 0 {
		return false
	}
	for _, e := range c.cands {
		if len(e.queue) > 0 {
			return true
		}
	}
	return false
}

// CancelGrace is how much longer than the recorded client took replay
// gives this client to cancel where a candidate session's client
// cancelled, before settling on a candidate whose server went on.
const CancelGrace = time.Second

// settleAfter returns how long the client may stay silent before settle,
// base unless a candidate waits for this client's cancellation of an
// outstanding request, as its recorded client cancelled: then the time
// that client took to cancel, plus CancelGrace (at least base), so that a
// client about to cancel is not settled away from the session it
// reproduces.
func (c *cursor) settleAfter(base time.Duration) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	d := base
	for _, e := range c.cands {
		for id := range c.outstanding {
			st, ok := e.stalled(id)
			if !ok || st.Cancel == nil || len(st.Awaited) > 1 || (len(st.Awaited) == 1 && st.Awaited[0] != st.Cancel) {
				continue
			}
			i := e.index[st.Cancel]
			var gap time.Duration
			if i > 0 {
				gap = max(st.Cancel.Offset-e.frames[i-1].F.Offset, 0)
			}
			d = max(d, gap+CancelGrace)
		}
	}
	return d
}

// settle is called when the client waits for an answer while the
// candidates disagree on what comes next: it keeps the first candidate,
// in recorded order, that is not stalled on any outstanding request (when
// all are, the first of those that released the most). It reports
// whether it dropped any.
func (c *cursor) settle() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.cands) < 2 {
		return false
	}
	pick, free := c.cands[0], false
	for _, e := range c.cands {
		stalled := false
		for id := range c.outstanding {
			if _, ok := e.stalled(id); ok {
				stalled = true
				break
			}
		}
		if !stalled {
			pick, free = e, true
			break
		}
	}
	if !free {
		// All wait for the client (a cancellation, say): the first of
		// those that released the most has frames to send before that;
		// keeping it keeps them from being held back for a client frame
		// that did not cause them.
		best := -1
		for _, e := range c.cands {
			if n := e.rec.template(e.mt).ServerFrames - e.unsentS2C; n > best {
				pick, best = e, n
			}
		}
	}
	c.only(pick)
	return true
}

// commitTo keeps the candidate replaying rec alone, when there are others:
// what replay does next was decided on rec's recording (a chaos fault
// planned on it, say), and candidates that would have done otherwise must
// not hold the live session back. It reports whether any was dropped.
func (c *cursor) commitTo(rec *recording) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	i := slices.IndexFunc(c.cands, func(e *engine) bool { return e.rec == rec })
	if i < 0 || len(c.cands) == 1 && (c.cands[0].node == nil || c.cands[0].node.Size < 2) {
		return false // not in play, or alone already
	}
	c.only(c.cands[i])
	return true
}

// only makes pick the one candidate left. c.mu must be held.
func (c *cursor) only(pick *engine) {
	c.cands = []*engine{pick}
	if pick.node != nil {
		// The sessions pick stood for are dropped with the others.
		pick.node = &treeNode{Rep: pick.rec.Session.ID, Size: 1, Shared: len(pick.frames)}
	}
	c.notify()
}

// waiting reports whether the client waits for an answer.
func (c *cursor) waiting() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.outstanding) > 0
}

// markSent records that out went to the client (HTTP); it reports false
// when out must not be sent because replay answered that request itself.
func (c *cursor) markSent(out outFrame) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sent(out)
}

// selfAnsweredID reports whether replay answered live request id itself.
func (c *cursor) selfAnsweredID(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.selfAnswered[id]
}

// snapshot returns the channel closed at the next change and the
// candidates in play now, in one go.
func (c *cursor) snapshot() (<-chan struct{}, []*engine) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.changed, slices.Clone(c.cands)
}

// candidates returns the candidates in play.
func (c *cursor) candidates() []*engine {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.cands)
}

// sessions counts the recorded sessions in play: a candidate reading a
// Source speaks for every session of its node.
func (c *cursor) sessions() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, e := range c.cands {
		if e.node != nil {
			n += max(1, e.node.Size)
		} else {
			n++
		}
	}
	return n
}

// leader returns the first candidate in play, whose recording stands for
// all of them where one must be named.
func (c *cursor) leader() *engine {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cands[0]
}

// caughtUp reports whether the leader has received every recorded client
// frame before offset t.
func (c *cursor) caughtUp(t time.Duration) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.cands[0]
	// A request the server refused for its shape changed nothing: the
	// door answers it (door.go), and a client need not send it at all.
	for e.firstC2S < len(e.frames) && (!e.frames[e.firstC2S].C2S || e.done.has(e.firstC2S) || script.RefusedFrame(e.rec.Recording, e.frames[e.firstC2S].F)) {
		e.firstC2S++
	}
	return e.firstC2S == len(e.frames) || e.frames[e.firstC2S].F.Offset >= t
}

// answerSelf marks live request id as answered by replay itself.
func (c *cursor) answerSelf(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.selfAnswered[id] = true
	delete(c.outstanding, id)
	c.notify()
}

// cancelsInitialize reports whether live is a notifications/cancelled for
// the initialize request this client sent: no revision lets a client
// cancel initialize. Strict replay reports it; the frame is replayed as
// recorded all the same.
func (c *cursor) cancelsInitialize(live jsonrpc.Message) bool {
	if live.Kind != jsonrpc.KindNotification || live.Method != "notifications/cancelled" {
		return false
	}
	id := string(mcpwire.CancelledRequestID(live.Params))
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.cands {
		if rec, ok := e.rids[id]; ok {
			if f := e.reqAt[rec]; f != nil && f.Method == "initialize" {
				return true
			}
		}
	}
	return false
}

// initializeCancelled is the strict report of a cancelled initialize.
const initializeCancelled = "strict: initialize must not be cancelled (no revision lets a client cancel it)"
