package verify

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/mcpvcr/mcpvcr/clock"
	"github.com/mcpvcr/mcpvcr/diff"
	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/internal/mcpwire"
	"github.com/mcpvcr/mcpvcr/store"
)

// DefaultTimeout is how long a Verifier waits for each answer when
// its Timeout is zero.
const DefaultTimeout = 30 * time.Second

// cancelGrace is how long a Verifier waits for the answer to a request
// it has cancelled: servers may answer it or not.
const cancelGrace = 2 * time.Second

// Errors of verify. ErrNoClientFrames, ErrNoAnswer and ErrUnsupported are
// Verifier runs that mean the server could not be verified; the others
// come from the expectation workflow (Cassette).
var (
	// ErrNoClientFrames means the session holds no client request to send.
	ErrNoClientFrames = errors.New("the session holds no client requests to send")
	// ErrNoAnswer means the server never answered the first request
	// (initialize, or the first request of a modern session).
	ErrNoAnswer = errors.New("the server did not answer the first request")
	// ErrUnsupported means verify cannot drive the session's transport yet.
	ErrUnsupported = errors.New("not supported yet")
	// ErrNoSessions means the cassette holds no session to verify over
	// the target's kind of transport.
	ErrNoSessions = errors.New("no sessions to verify")
	// ErrWrongTransport means the target reaches the server another way
	// than the session was recorded (a command for an HTTP session, or a
	// URL for a stdio one).
	ErrWrongTransport = errors.New("the target does not match the session's transport")
	// ErrTemporary means Learn or Update asked to store into a cassette
	// that is a temporary import of a JSONL export.
	ErrTemporary = errors.New("the cassette is a JSONL export: what verify stores would be lost")
	// ErrUnreachable means the HTTP target could not be dialled.
	ErrUnreachable = errors.New("not reachable")
	// ErrNotRecorded means the verify run could not be recorded (a full
	// disk, say).
	ErrNotRecorded = errors.New("the verify run could not be recorded")
	// ErrNotLearned means Learn could not run the server twice to the end.
	ErrNotLearned = errors.New("learn noise")
	// ErrNotUpdated means Update refused a run in which the server went
	// away.
	ErrNotUpdated = errors.New("not updating the expectation")
)

// Verifier sends the client side of a recorded session to a live server,
// as a client would: the recorded client frames, in order, with their
// recorded ids, in the session's causal order (package internal/causal):
// each frame waits until the live server has said what the recorded one
// had said before it (the answers, progress and requests that frame
// followed) and, over HTTP, until the exchanges the recorded client had
// completed by then have completed live (a notification's 202, a JSON
// answer, the GET stream's response); a stream the client opened without
// a frame (the GET stream, the DELETE) opens once the exchanges that had
// ended before it opened in the recording have ended live; frames the
// recording shows in flight together are sent concurrently. The run lasts
// as long as the recorded session did after its last step (at most 5
// seconds), and waits about as long as the recording shows for what the
// server sent on its own (a roots/list a while after initialized). Server
// requests (sampling, elicitation, roots, ping) are answered with the
// client's recorded answers. Values the server
// minted and the client echoes (cursor, requestState, taskId, and over
// HTTP the Mcp-Session-Id) are rewritten to the live server's.
//
// A Verifier only drives the conversation: record it (with package
// recorder) and compare the recordings with diff.Compare. Recording is required.
// A Verifier may run any number of times, also concurrently: runs share
// nothing but the Recording, which they only read.
type Verifier struct {
	// Recording is the session to send. Required.
	Recording *store.Recording
	// Timeout bounds the wait for each answer. If zero,
	// DefaultTimeout.
	Timeout time.Duration
	// Clock times the waits. If nil, the real clock is used.
	Clock clock.Clock
	// Logger receives diagnostics. If nil, nothing is logged.
	Logger *slog.Logger
	// Guard keeps tool calls that may write from being sent. If nil,
	// every recorded frame is sent.
	Guard *WriteGuard

	// plan is the plan prepare built, nil before; a run builds its own
	// if it is nil or was built from another Recording.
	plan *plan
}

// Run is what a Verifier run did.
type Run struct {
	// Sent counts the client frames sent.
	Sent int
	// NoAnswer maps the recorded seq of each client request that got no
	// live answer to why (not sent, timed out, the server went away).
	NoAnswer map[int64]string
	// ServerGone says how the server went away before it had answered
	// everything; nil if it did not.
	ServerGone error
	// Unrecorded lists the server requests the recording had no answer
	// for; they were answered with an error.
	Unrecorded []string
	// Skipped lists the tool calls the write guard did not send.
	Skipped []SkippedCall
}

// Annotate adds to r, which compares the recording with the run's
// session, why requests got no answer and how the server ended. A request
// that was not sent because the server had gone counts as unanswered.
func (vr *Run) Annotate(r *diff.Report) {
	skipped := map[int64]SkippedCall{}
	for _, sc := range vr.Skipped {
		skipped[sc.Seq] = sc
	}
	for i := range r.Requests {
		rd := &r.Requests[i]
		if sc, ok := skipped[rd.Seq]; ok && rd.Status == diff.StatusMissing {
			rd.Status, rd.Reason = diff.StatusSkipped, "not sent: tool "+sc.Tool+" may write ("+sc.Why+"); --allow-writes="+sc.Tool+" sends it"
			continue
		}
		why, ok := vr.NoAnswer[rd.Seq]
		if !ok || (rd.Status != diff.StatusUnanswered && rd.Status != diff.StatusMissing) {
			continue
		}
		rd.Status, rd.Reason = diff.StatusUnanswered, why
	}
	if vr.ServerGone != nil {
		r.Notes = append(r.Notes, "the server went away during the run: "+vr.ServerGone.Error())
	}
	for _, m := range vr.Unrecorded {
		r.Notes = append(r.Notes, "the server sent a "+m+" request the recording has no answer for; it was answered with an error")
	}
}

// conn is a transport to the live server.
type conn interface {
	// start begins reading the server's messages.
	start(ctx context.Context, d *driver)
	// send sends a client frame (data is f's payload, rewritten). f is nil
	// for an answer the recording does not hold.
	send(ctx context.Context, f *store.Frame, data []byte) error
	// open opens a recorded stream that carried no client frame; key
	// names its exchange for exchangeDone.
	open(ctx context.Context, st *store.Stream, key string) error
	// finish ends the conversation and waits for the reading to end.
	finish(ctx context.Context)
}

// driver runs a plan over a conn.
type driver struct {
	v       *Verifier
	p       *plan
	c       conn
	clock   clock.Clock
	timeout time.Duration
	log     *slog.Logger
	answers sync.WaitGroup // answers to server requests being sent
	polling sync.WaitGroup // polls of verify's own (see tasks.go)

	mu         sync.Mutex    // guards the fields below
	changed    chan struct{} // closed and replaced when anything below changes
	sent       map[string]time.Time
	cancelled  map[string]time.Time
	answered   map[string]time.Time // when each answer came
	ended      map[string]bool      // the transport says no answer will come
	timedOut   map[string]bool
	done       map[string]bool   // exchanges (by exchangeKey) whose response came
	refusals   map[string]string // request id -> how HTTP refused it
	liveTools  map[string]toolAnnotations
	picked     map[*srvReq]bool // recorded server requests whose answers were sent
	skipped    []SkippedCall
	counts     map[string]int
	tokens     map[string]string // recorded raw token -> live raw token
	gone       error
	finishing  bool
	abort      error
	unrecorded []string
	created    map[string]bool   // ids of the requests whose live answer created a task
	repolling  map[string]bool   // ids of the requests whose task verify polls on its own
	statuses   map[string]string // id of a poll of verify's own -> the status its answer gave ("" for none)
	extra      int               // polls of verify's own sent
}

// Check reports, before any server is started, whether the recording can
// be verified: it returns ErrNoClientFrames for a session without client
// requests, and an error wrapping ErrUnsupported for a transport Verifier
// cannot drive yet.
func (v *Verifier) Check() error {
	_, err := v.check()
	return err
}

// check returns the plan of v.Recording, or why it cannot be verified
// (see Check). The plan is the one prepare kept, if it was built from
// this Recording, else a new one.
func (v *Verifier) check() (*plan, error) {
	if v.Recording == nil {
		return nil, errors.New("verifier has no recording")
	}
	if t := v.Recording.Session.Transport; t != store.Stdio && t != store.StreamableHTTP && t != store.LegacySSE {
		return nil, fmt.Errorf("verify over transport %s: %w", t, ErrUnsupported)
	}
	p := v.plan
	if p == nil || p.rec != v.Recording {
		p = buildPlan(v.Recording)
	}
	if p.firstRequest < 0 {
		return nil, ErrNoClientFrames
	}
	return p, nil
}

// prepare checks v as Check does and keeps the plan for the runs to
// come, so that verifying a session (one run, two with --learn) builds it
// once. It is called before any run, not concurrently with one.
func (v *Verifier) prepare() error {
	p, err := v.check()
	if err == nil {
		v.plan = p
	}
	return err
}

func (v *Verifier) run(ctx context.Context, c conn) (*Run, error) {
	p, err := v.check()
	if err != nil {
		return nil, err
	}
	d := &driver{v: v, p: p, c: c, clock: v.Clock, timeout: v.Timeout, log: v.Logger,
		changed: make(chan struct{}), sent: map[string]time.Time{}, cancelled: map[string]time.Time{},
		answered: map[string]time.Time{}, ended: map[string]bool{}, timedOut: map[string]bool{}, done: map[string]bool{}, refusals: map[string]string{}, liveTools: map[string]toolAnnotations{}, picked: map[*srvReq]bool{},
		counts: map[string]int{}, tokens: map[string]string{},
		created: map[string]bool{}, repolling: map[string]bool{}, statuses: map[string]string{}}
	if d.clock == nil {
		d.clock = clock.Real{}
	}
	if d.timeout <= 0 {
		d.timeout = DefaultTimeout
	}
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	return d.run(ctx)
}

func (d *driver) run(ctx context.Context) (*Run, error) {
	d.c.start(ctx, d)
	vr := &Run{NoAnswer: map[int64]string{}}
	sent := make([]bool, len(d.p.steps))
	var runErr error
	firstDone := false
	for i := range d.p.steps {
		st := &d.p.steps[i]
		if err := d.await(ctx, st.waits); err != nil {
			runErr = err
			break
		}
		if d.stopped() {
			break
		}
		d.mu.Lock()
		tool, why := d.guarded(st)
		if why != "" {
			d.skipped = append(d.skipped, SkippedCall{Seq: st.f.Seq, Tool: tool, Why: why})
		}
		d.mu.Unlock()
		if why != "" {
			continue
		}
		if err := d.send(ctx, st); err != nil {
			d.serverGone(err)
			break
		}
		sent[i] = true
		vr.Sent++
		if i == d.p.firstRequest {
			if runErr = d.first(ctx, st); runErr != nil {
				break
			}
			firstDone = true
		}
	}
	if runErr == nil && !firstDone {
		d.mu.Lock()
		if d.abort == nil {
			runErr = fmt.Errorf("%w: %w", ErrNoAnswer, cmp.Or(d.gone, errors.New("it was not sent")))
		}
		d.mu.Unlock()
	}
	if runErr == nil && !d.stopped() {
		runErr = d.await(ctx, d.p.final)
	}
	d.mu.Lock()
	d.finishing = true
	gone, abort := d.gone, d.abort
	d.mu.Unlock()
	// The answers to server requests that came before the end go out
	// before it (over HTTP on exchanges of their own, which finish lets
	// complete), for at most lateGrace: a stdio write may block on a
	// server that reads no more, until finish closes its input.
	answered := make(chan struct{})
	go func() {
		d.answers.Wait()
		close(answered)
	}()
	select {
	case <-answered:
	case <-d.clock.After(lateGrace):
	case <-ctx.Done():
	}
	d.c.finish(ctx)
	<-answered
	d.polling.Wait()
	if abort != nil {
		return nil, abort
	}
	if runErr != nil {
		return nil, runErr
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	vr.Unrecorded = d.unrecorded
	vr.Skipped = d.skipped
	for i, st := range d.p.steps {
		for _, m := range st.msgs {
			if m.Kind != jsonrpc.KindRequest {
				continue
			}
			if _, recorded := d.p.responses[string(m.ID)]; !recorded {
				continue
			}
			if why := d.whyUnanswered(string(m.ID), sent[i], gone); why != "" {
				vr.NoAnswer[st.f.Seq] = why
			}
		}
	}
	if len(vr.NoAnswer) > 0 {
		vr.ServerGone = gone // a server that exits after its last answer is fine
	}
	return vr, nil
}

func (d *driver) whyUnanswered(id string, sent bool, gone error) string {
	switch {
	case !sent && gone != nil:
		return "not sent: the server had gone away"
	case !sent:
		return "not sent"
	case d.isAnswered(id):
		return ""
	case d.timedOut[id]:
		return fmt.Sprintf("no answer within %v", d.timeout)
	case gone != nil:
		return "no answer: the server went away first"
	case d.ended[id]:
		return "no answer: the server ended the exchange without one"
	}
	return "no answer"
}

func (d *driver) stopped() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.gone != nil || d.abort != nil
}

// signal wakes waiters. The caller holds d.mu.
func (d *driver) signal() {
	close(d.changed)
	d.changed = make(chan struct{})
}

// echoPaths are where clients echo values the server minted.
var echoPaths = [][]string{{"params", "cursor"}, {"params", "requestState"}, {"params", "taskId"}}

// mintPaths are where servers mint them, in results.
var mintPaths = [][]string{{"nextCursor"}, {"requestState"}, {"task", "taskId"}}

func (d *driver) send(ctx context.Context, st *step) error {
	d.mu.Lock()
	now := d.clock.Now()
	d.sent[exchangeKey(st)] = now
	if st.open != nil {
		d.mu.Unlock()
		return d.c.open(ctx, st.open, exchangeKey(st))
	}
	data := st.f.Data
	for _, m := range st.msgs {
		switch {
		case m.Kind == jsonrpc.KindRequest:
			id := string(m.ID)
			d.sent[id] = now
			delete(d.answered, id) // ids may be reused once answered
			delete(d.ended, id)
			delete(d.timedOut, id)
		case m.Method == "notifications/cancelled":
			d.cancelled[string(mcpwire.CancelledRequestID(m.Params))] = now
		}
	}
	if len(st.msgs) == 1 {
		data = d.rewrite(data)
	}
	d.mu.Unlock()
	return d.c.send(ctx, st.f, data)
}

// rewrite replaces echoed values with the live server's. The caller
// holds d.mu.
func (d *driver) rewrite(data []byte) []byte {
	for _, path := range echoPaths {
		s, e, err := jsonrpc.Find(data, path...)
		if err != nil {
			continue
		}
		if live, ok := d.tokens[string(data[s:e])]; ok {
			if out, err := jsonrpc.Splice(data, []byte(live), path...); err == nil {
				data = out
			}
		}
	}
	return data
}

// deliver handles one message from the live server. It is safe for
// concurrent use.
func (d *driver) deliver(ctx context.Context, m jsonrpc.Message) {
	if m.Kind == jsonrpc.KindBatch {
		for _, mem := range m.Members {
			d.deliver(ctx, mem)
		}
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	switch m.Kind {
	case jsonrpc.KindResult, jsonrpc.KindError:
		id := string(m.ID)
		d.answered[id] = d.clock.Now()
		if d.p.methods[id] == "tools/list" && m.Kind == jsonrpc.KindResult {
			toolsOf(m.Result, d.liveTools)
		}
		d.learn(id, m)
		d.learnTask(ctx, id, m)
	case jsonrpc.KindRequest:
		d.counts[countKey(m)]++
		d.answer(ctx, m)
	case jsonrpc.KindNotification:
		d.counts[countKey(m)]++
	default:
		return
	}
	d.signal()
}

// learn maps the values the live answer minted to the recorded ones, and
// checks the revision on the first answer. The caller holds d.mu.
func (d *driver) learn(id string, live jsonrpc.Message) {
	rec, ok := d.p.responses[id]
	if !ok {
		return
	}
	for _, path := range mintPaths {
		rs, re, err1 := jsonrpc.Find(rec.Result, path...)
		ls, le, err2 := jsonrpc.Find(live.Result, path...)
		if err1 == nil && err2 == nil {
			d.tokens[string(rec.Result[rs:re])] = string(live.Result[ls:le])
		}
	}
	if req, ok := d.p.handshake[id]; ok && d.abort == nil {
		d.abort = checkRevision(d.v.Recording.Session, req, rec, live, d.refusals[id])
	}
}

// answer sends the client's recorded answer to a live server request, in
// the background. The caller holds d.mu.
func (d *driver) answer(ctx context.Context, m jsonrpc.Message) {
	if d.finishing {
		return
	}
	var f *store.Frame
	var data []byte
	switch sr := d.p.pick(m, d.picked); {
	case sr != nil:
		f = sr.frame
		out, err := jsonrpc.Splice(sr.answer, m.ID, "id")
		if err != nil {
			out = sr.answer
		}
		data = out
	case m.Method == "ping":
		data = fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"result":{}}`, m.ID)
	default:
		d.unrecorded = append(d.unrecorded, m.Method)
		msg, _ := json.Marshal("mcpvcr verify: the recording holds no answer to " + m.Method)
		data = fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":%s}}`, m.ID, msg)
	}
	d.answers.Go(func() {
		if err := d.c.send(ctx, f, data); err != nil {
			d.log.Warn("answering a server request failed", "method", m.Method, "err", err)
		}
	})
}

// serverGone records that the server went away. It is safe for concurrent
// use.
func (d *driver) serverGone(err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.gone == nil && !d.finishing {
		d.gone = err
		d.signal()
	}
}

// allAnswered reports whether every request in ids has its answer. It is
// safe for concurrent use.
func (d *driver) allAnswered(ids []string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, id := range ids {
		if !d.isAnswered(id) {
			return false
		}
	}
	return true
}

// refused records how the server refused request id over HTTP. It is safe
// for concurrent use.
func (d *driver) refused(id, how string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.refusals[id] = how
}

// exchangeDone records that the response of the exchange named key (see
// exchangeKey) came: its status and, unless it is an event stream, its
// body. It is safe for concurrent use.
func (d *driver) exchangeDone(key string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.done[key] {
		d.done[key] = true
		d.signal()
	}
}

// exchangeEnded records that the transport will bring no answer to ids.
// It is safe for concurrent use.
func (d *driver) exchangeEnded(ids []string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, id := range ids {
		if !d.isAnswered(id) {
			d.ended[id] = true
		}
	}
	d.signal()
}
