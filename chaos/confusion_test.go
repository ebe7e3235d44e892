package chaos

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/internal/sse"
	"github.com/mcpvcr/mcpvcr/replayer"
	"github.com/mcpvcr/mcpvcr/store"
)

// The confusion matrix: the judge is tested like the client. For every
// fault kind chaos injects over Streamable HTTP, a raw client that keeps
// the rule must pass in every seed that draws the kind, and one per way
// of breaking it must fail (or, where the rule asks nothing, be not
// observed); each seed is run twice and once with every CPU busy, and
// must draw the same fault and give the same verdict each time. The
// recording is made fresh by the test (recordFresh), with no recorded
// resumption: every resumption served is chaos's own.

// confusionSeeds are the seeds each kind is run with.
var confusionSeeds = []uint64{1, 2, 3}

// behaviour is one way a raw client reacts to a fault: keeping the rule
// or breaking it one way, and the verdict the judge owes it.
type behaviour struct {
	name string
	want Verdict
	// react handles the faulted POST (or the GET stream, for
	// refuse-get): it is called instead of sending the POST, and
	// returns false when the client leaves (sends nothing more).
	react func(d *driver) bool
	// timing marks a client that breaks the rule by doing something
	// too soon: the judge measures on replay's clock, so under CPU load
	// the client may take long enough to keep it (the run under load is
	// then not held to want).
	timing bool
	// newSession marks a client that starts a new session: that live
	// session draws the recorded session's plan again, and leaves it
	// not reached.
	newSession bool
	// longDelay runs the seed's plan with its delay made a minute long,
	// so that a client leaving during the delay surely leaves before it
	// ends (delay only).
	longDelay bool
}

// driver is a raw client that sends the recorded client's POSTs in order
// and hands the faulted one to a behaviour.
type driver struct {
	t       *testing.T
	c       *rawClient
	rec     *store.Recording
	f       Fault
	post    int           // the POST being sent (from 1)
	reached chan struct{} // closed once replay reached the fault's frame or a resumption
	bg      sync.WaitGroup
}

// faultPost returns the number of the POST (from 1) fault f hits: its
// Request, or the POST whose stream it is on; 0 for the GET stream.
func faultPost(rec *store.Recording, f Fault) int {
	if f.Request > 0 {
		return f.Request
	}
	n := 0
	for i := range rec.Streams[:f.Stream] {
		if rec.Streams[i].Kind == store.PostStream {
			n++
		}
	}
	if rec.Streams[f.Stream-1].Kind != store.PostStream {
		return 0
	}
	return n
}

// unanswered reports whether POST n of rec (from 1) is a request the
// recording never answers on its stream (the cancelled slow call): the
// client sends it and goes on without waiting.
func unanswered(rec *store.Recording, n int) bool {
	k := 0
	for i := range rec.Streams {
		st := &rec.Streams[i]
		if st.Kind != store.PostStream {
			continue
		}
		if k++; k != n {
			continue
		}
		answered := false
		for _, f := range framesOfStream(rec, st.ID) {
			answered = answered || f.Kind.IsResponse()
		}
		return !answered && st.Status == http.StatusOK
	}
	return false
}

// send sends POST n as the recorded client did: an unanswered one in
// the background, once its first event came, any other read whole.
func (d *driver) send(n int) rawAnswer {
	d.t.Helper()
	if !unanswered(d.rec, n) {
		return d.c.again(n, true)
	}
	started := make(chan struct{})
	d.bg.Add(1)
	go func() {
		defer d.bg.Done()
		d.c.doStarted(d.c.ctx, d.c.posts[n-1], started)
	}()
	<-started
	return rawAnswer{status: http.StatusOK}
}

// cancellation returns the number of the POST that carries the
// recorded client's notifications/cancelled (the Go SDK client sends it
// beside its next call, so it may come before or after that call).
func (d *driver) cancellation() int {
	for i, b := range d.c.posts {
		if bytes.Contains(b, []byte(`"notifications/cancelled"`)) {
			return i + 1
		}
	}
	d.t.Fatal("the recording has no notifications/cancelled")
	return 0
}

// hit sends the faulted POST, answered at once (404, 503, a reset, an
// empty stream) whatever the recording holds: read whole, never in the
// background.
func (d *driver) hit() rawAnswer {
	return d.c.again(d.post, true)
}

// sendRest sends the POSTs after the current one, to the end.
func (d *driver) sendRest() {
	for n := d.post + 1; n <= len(d.c.posts); n++ {
		d.send(n)
	}
}

// resume opens a resumption with Last-Event-ID id and reads it whole.
func (d *driver) resume(id string) rawAnswer {
	status, read, closeGET := d.c.open("Last-Event-ID", id)
	defer closeGET()
	a := read()
	a.status = status
	return a
}

// run plays the session: initialize, its GET stream, each POST (the
// faulted one handed to b), and the DELETE when it got to the end.
func (d *driver) run(b behaviour) {
	at := faultPost(d.rec, d.f)
	if d.f.Kind == FaultReorder {
		at = min(at, d.otherPost()) // the pair goes out at once
	}
	for d.post = 1; d.post <= len(d.c.posts); d.post++ {
		if d.post == 3 { // after notifications/initialized: its GET stream
			if d.f.Kind == FaultRefuseGet {
				if !b.react(d) {
					return
				}
			} else {
				status, read, closeGET := d.c.open()
				switch {
				case status == http.StatusNotFound && at < d.post && (d.f.Kind == FaultExpire || d.f.Kind == FaultResume404):
					// The fault ended the session before its GET stream:
					// the GET is one more use of the old id.
				case status != http.StatusOK:
					d.t.Fatalf("GET stream: %d", status)
				}
				go read()
				defer closeGET()
			}
		}
		if d.post == at {
			if !b.react(d) {
				return
			}
			continue
		}
		if a := d.send(d.post); a.status/100 != 2 && d.f.Kind != FaultExpire && d.f.Kind != FaultResume404 {
			d.t.Errorf("POST %d: %d, %v", d.post, a.status, a.err)
		}
	}
	if d.f.Kind == FaultLateResult {
		d.bg.Wait() // the cancelled call's stream, to its late result
	}
	d.c.do(d.c.ctx, http.MethodDelete, nil, true)
}

// otherPost returns the number of the POST whose stream carries a
// reorder's other message.
func (d *driver) otherPost() int {
	return faultPost(d.rec, Fault{Stream: d.f.Other})
}

// sendPair sends the POSTs of a reorder's two responses at once, as
// the recorded client did (neither is answered before both came), reads
// both whole, and moves d past them.
func (d *driver) sendPair() {
	held, other := faultPost(d.rec, d.f), d.otherPost()
	var got [2]rawAnswer
	waitGroup(func() { got[0] = d.c.again(held, true) }, func() { got[1] = d.c.again(other, true) })
	for i, a := range got {
		if a.status != http.StatusOK || !slices.ContainsFunc(a.events, func(e sse.Event) bool { return isResponse(e.Data) }) {
			d.t.Errorf("pair POST %d: %d, %v, no response in %d events", []int{held, other}[i], a.status, a.err, len(a.events))
		}
	}
	d.post = max(held, other)
}

// confusionCases are the behaviours for each kind; a kind missing here
// must be in confusionElsewhere.
var confusionCases = map[FaultKind][]behaviour{
	FaultReorder: {
		{name: "takes both and carries on", want: VerdictPass, react: func(d *driver) bool { d.sendPair(); return true }},
		{name: "sends the held request again", want: VerdictFail, react: func(d *driver) bool {
			d.sendPair()
			d.send(faultPost(d.rec, d.f))
			return true
		}},
		{name: "exits", want: VerdictFail, react: func(d *driver) bool { d.sendPair(); return false }},
	},
	FaultCutResumable: {
		{name: "resumes", want: VerdictPass, react: func(d *driver) bool {
			a := d.send(d.post)
			if r := d.resume(a.lastID()); r.status != http.StatusOK || len(r.events) == 0 {
				d.t.Errorf("resumption: %d, %d events", r.status, len(r.events))
			}
			return true
		}},
		{name: "never resumes", want: VerdictFail, react: func(d *driver) bool { d.send(d.post); return true }},
		{name: "resumes from another id", want: VerdictFail, react: func(d *driver) bool {
			d.send(d.post)
			d.resume("another-id_0")
			return true
		}},
	},
	FaultCut: {
		{name: "carries on", want: VerdictPass, react: func(d *driver) bool { d.send(d.post); return true }},
		{name: "hangs", want: VerdictFail, react: func(d *driver) bool { d.send(d.post); return false }},
		{name: "resumes a stream without ids", want: VerdictFail, react: func(d *driver) bool {
			d.send(d.post)
			d.resume("0")
			return true
		}},
	},
	FaultResume404: {
		{name: "new session", want: VerdictPass, newSession: true, react: func(d *driver) bool {
			a := d.send(d.post)
			if r := d.resume(a.lastID()); r.status != http.StatusNotFound {
				d.t.Errorf("resumption: %d; want 404", r.status)
			}
			if a := d.c.initialize(); a.status != http.StatusOK {
				d.t.Errorf("new initialize: %d, %v", a.status, a.err)
			}
			return false
		}},
		{name: "old id again", want: VerdictFail, react: func(d *driver) bool {
			a := d.send(d.post)
			d.resume(a.lastID())
			return true
		}},
	},
	FaultResumeLate: {
		{name: "waits", want: VerdictPass, react: func(d *driver) bool {
			a := d.send(d.post)
			if r := d.resume(a.lastID()); r.status != http.StatusOK || len(r.events) == 0 {
				d.t.Errorf("late resumption: %d, %d events", r.status, len(r.events))
			}
			return true
		}},
		{name: "leaves while it waits", want: VerdictFail, react: func(d *driver) bool {
			a := d.send(d.post)
			done := make(chan struct{})
			go func() { defer close(done); d.c.open("Last-Event-ID", a.lastID()) }()
			d.awaitReached()
			d.c.cancel()
			<-done
			return false
		}},
	},
	FaultExpire: {
		{name: "new session", want: VerdictPass, newSession: true, react: func(d *driver) bool {
			if a := d.hit(); a.status != http.StatusNotFound {
				d.t.Errorf("POST %d: %d; want 404", d.post, a.status)
			}
			if a := d.c.initialize(); a.status != http.StatusOK {
				d.t.Errorf("new initialize: %d, %v", a.status, a.err)
			}
			return false
		}},
		{name: "old id again", want: VerdictFail, react: func(d *driver) bool { d.hit(); return true }},
		{name: "exits", want: VerdictFail, react: func(d *driver) bool { d.hit(); return false }},
	},
	FaultRefuseGet: {
		{name: "carries on without it", want: VerdictPass, react: func(d *driver) bool {
			if status, _, _ := d.c.open(); status != http.StatusMethodNotAllowed {
				d.t.Errorf("GET stream: %d; want 405", status)
			}
			return true
		}},
		{name: "asks again and again", want: VerdictFail, react: func(d *driver) bool {
			for range 4 {
				d.c.open()
			}
			return true
		}},
	},
	FaultLateResult: {
		{name: "drops it", want: VerdictPass, react: func(d *driver) bool { d.send(d.post); return true }},
		{name: "cancels twice", want: VerdictFail, react: func(d *driver) bool {
			d.send(d.post)
			d.sendRest()
			d.bg.Wait()
			d.send(d.cancellation()) // the cancellation again
			return false
		}},
	},
	FaultDelay: {
		{name: "waits", want: VerdictPass, react: func(d *driver) bool { d.send(d.post); return true }},
		{name: "leaves during it", want: VerdictFail, longDelay: true, react: func(d *driver) bool {
			done := make(chan struct{})
			go func() { defer close(done); d.send(d.post) }()
			d.awaitReached()
			d.c.cancel()
			<-done
			return false
		}},
	},
	FaultDropPriming: {
		{name: "takes the stream", want: VerdictPass, react: func(d *driver) bool { d.send(d.post); return true }},
		{name: "sends it again", want: VerdictFail, react: func(d *driver) bool {
			d.send(d.post)
			d.send(d.post)
			return true
		}},
	},
	Fault503: {
		{name: "retries after Retry-After", want: VerdictPass, react: func(d *driver) bool {
			if a := d.hit(); a.status != http.StatusServiceUnavailable {
				d.t.Errorf("POST %d: %d; want 503", d.post, a.status)
			}
			// Not synchronisation: waiting out Retry-After on the wall
			// clock is the behaviour under test, and the judge measures
			// it on replay's clock, which a fake clock here cannot move.
			time.Sleep(time.Second)
			d.send(d.post)
			return true
		}},
		{name: "retries at once", want: VerdictFail, timing: true, react: func(d *driver) bool {
			d.hit()
			d.send(d.post)
			return true
		}},
		{name: "gives the call up", want: VerdictNotObserved, react: func(d *driver) bool { d.hit(); return true }},
	},
	FaultRetry: {
		{name: "waits the retry", want: VerdictPass, react: func(d *driver) bool {
			a := d.send(d.post)
			// Not synchronisation: honouring the SSE retry on the wall
			// clock is the behaviour under test (see Fault503 above).
			time.Sleep(d.f.Delay)
			d.resume(a.lastID())
			return true
		}},
		{name: "resumes at once", want: VerdictFail, timing: true, react: func(d *driver) bool {
			a := d.send(d.post)
			d.resume(a.lastID())
			return true
		}},
		{name: "never resumes", want: VerdictFail, react: func(d *driver) bool { d.send(d.post); return true }},
	},
	FaultTimeout: giveUpCases,
	FaultStall:   giveUpCases,
	FaultMalformed: {
		{name: "skips it", want: VerdictPass, react: func(d *driver) bool {
			if a := d.send(d.post); a.status != http.StatusOK || !slices.ContainsFunc(a.events, func(e sse.Event) bool { return isResponse(e.Data) }) {
				d.t.Errorf("POST %d: %d, %d events, no response after the garbage", d.post, a.status, len(a.events))
			}
			return true
		}},
		{name: "sends it again", want: VerdictFail, react: func(d *driver) bool {
			d.send(d.post)
			d.send(d.post)
			return true
		}},
		{name: "ends the session", want: VerdictFail, react: func(d *driver) bool {
			d.send(d.post)
			d.c.do(d.c.ctx, http.MethodDelete, nil, true)
			return false
		}},
	},
	FaultErrorResult: {
		{name: "goes on", want: VerdictPass, react: func(d *driver) bool {
			a := d.send(d.post)
			if len(a.events) == 0 || !bytes.Contains(a.events[len(a.events)-1].Data, []byte(`"error"`)) {
				d.t.Errorf("POST %d: the last event is no error: %v", d.post, a.events)
			}
			return true
		}},
		{name: "exits", want: VerdictFail, react: func(d *driver) bool { d.send(d.post); return false }},
	},
	FaultLimitData: {
		{name: "resumes from the last whole event", want: VerdictPass, react: func(d *driver) bool {
			a := d.send(d.post)
			if r := d.resume(a.lastID()); r.status != http.StatusOK || len(r.events) == 0 {
				d.t.Errorf("resumption: %d, %d events", r.status, len(r.events))
			}
			return true
		}},
		{name: "resumes from the half event's id", want: VerdictFail, react: func(d *driver) bool {
			d.send(d.post)
			d.resume(d.eventID(d.f.Seq))
			return true
		}},
		{name: "never resumes", want: VerdictFail, react: func(d *driver) bool { d.send(d.post); return true }},
	},
	FaultRedeliver: {
		{name: "answers once", want: VerdictPass, react: func(d *driver) bool {
			d.resumeAsked()
			return true
		}},
		{name: "answers twice", want: VerdictFail, react: func(d *driver) bool {
			if r := d.resumeAsked(); !slices.ContainsFunc(r.events, func(e sse.Event) bool { return jsonrpc.Parse(e.Data).Kind == jsonrpc.KindRequest }) {
				d.t.Errorf("the resumption sent no request again: %v", r.events)
			}
			d.send(d.post) // the answer again
			return true
		}},
		{name: "never resumes", want: VerdictFail, react: func(d *driver) bool {
			d.send(d.post)
			d.post++
			d.send(d.post) // the answer
			return true
		}},
	},
	FaultEarlyPing: {
		{name: "answers it", want: VerdictPass, react: func(d *driver) bool {
			a := d.send(d.post)
			if !slices.ContainsFunc(a.events, func(e sse.Event) bool { return jsonrpc.Parse(e.Data).Method == "ping" }) {
				d.t.Errorf("initialize's stream held no ping: %v", a.events)
			}
			if r := d.c.do(d.c.ctx, http.MethodPost, []byte(`{"jsonrpc":"2.0","id":`+earlyPingID+`,"result":{}}`), true); r.status != http.StatusAccepted {
				d.t.Errorf("the ping's answer: %d; want 202", r.status)
			}
			return true
		}},
		{name: "ignores it", want: VerdictFail, react: func(d *driver) bool { d.send(d.post); return true }},
		{name: "exits", want: VerdictFail, react: func(d *driver) bool { d.send(d.post); return false }},
	},
	FaultListChanged: {
		{name: "takes the response", want: VerdictPass, react: func(d *driver) bool {
			a := d.send(d.post)
			if !slices.ContainsFunc(a.events, func(e sse.Event) bool { return bytes.Contains(e.Data, []byte("list_changed")) }) || !slices.ContainsFunc(a.events, func(e sse.Event) bool { return isResponse(e.Data) }) {
				d.t.Errorf("the call's stream: %v; want the list_changed, then the response", a.events)
			}
			return true
		}},
		{name: "calls again", want: VerdictFail, react: func(d *driver) bool {
			d.send(d.post)
			d.send(d.post)
			return true
		}},
		{name: "exits", want: VerdictFail, react: func(d *driver) bool { d.send(d.post); return false }},
	},
	FaultReframe: {
		{name: "reads it", want: VerdictPass, react: func(d *driver) bool {
			if a := d.send(d.post); a.err != nil || a.status != http.StatusOK || !slices.ContainsFunc(a.events, func(e sse.Event) bool { return isResponse(e.Data) }) {
				d.t.Errorf("reframed POST %d: %d, %v, %d events", d.post, a.status, a.err, len(a.events))
			}
			return true
		}},
		{name: "sends it again", want: VerdictFail, react: func(d *driver) bool {
			d.send(d.post)
			d.send(d.post)
			return true
		}},
	},
	FaultResetPeer:     noAnswerCases,
	FaultEmptyResponse: noAnswerCases,
	FaultSlicer: {
		{name: "puts it together", want: VerdictPass, react: func(d *driver) bool {
			if a := d.send(d.post); a.err != nil || a.status != http.StatusOK {
				d.t.Errorf("sliced POST %d: %d, %v", d.post, a.status, a.err)
			}
			return true
		}},
		{name: "sends it again", want: VerdictFail, react: func(d *driver) bool {
			d.send(d.post)
			d.send(d.post)
			return true
		}},
	},
}

// giveUpCases are the clients of a request nothing answers: they give up
// once replay holds it (its own timeout, on the wall clock, would say
// nothing more), and say so, or carry on, or wait for good.
var giveUpCases = []behaviour{
	{name: "cancels it", want: VerdictPass, react: func(d *driver) bool {
		d.held()
		id := jsonrpc.Parse(d.c.posts[d.post-1]).ID
		d.c.do(d.c.ctx, http.MethodPost, fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%s,"reason":"timed out"}}`, id), true)
		return true
	}},
	{name: "gives up and carries on", want: VerdictPass, react: func(d *driver) bool { d.held(); return true }},
	{name: "waits for good", want: VerdictFail, react: func(d *driver) bool {
		d.bg.Add(1)
		go func() { defer d.bg.Done(); d.c.again(d.post, true) }()
		d.awaitReached()
		return false
	}},
}

// awaitReached waits until replay reached the fault, or the client's
// time ran out (the run is then reported as hung).
func (d *driver) awaitReached() {
	select {
	case <-d.reached:
	case <-d.c.ctx.Done():
	}
}

// held sends the faulted POST, waits until replay holds it, and gives
// it up: closes its connection.
func (d *driver) held() {
	ctx, cancel := context.WithCancel(d.c.ctx)
	done := make(chan struct{})
	go func() { defer close(done); d.c.do(ctx, http.MethodPost, d.c.posts[d.post-1], true) }()
	d.awaitReached()
	cancel()
	<-done
}

// resumeAsked sends the faulted POST, whose stream carries a server
// request and is cut after it, answers that request (the recorded
// client's next POST, which the driver then skips), and resumes the
// stream; it returns what the resumption got.
func (d *driver) resumeAsked() rawAnswer {
	a := d.send(d.post)
	d.post++
	d.send(d.post)
	r := d.resume(a.lastID())
	if r.status != http.StatusOK || !slices.ContainsFunc(r.events, func(e sse.Event) bool { return isResponse(e.Data) }) {
		d.t.Errorf("resumption: %d, %d events, no response", r.status, len(r.events))
	}
	return r
}

// eventID returns the recorded event id of the event of seq.
func (d *driver) eventID(seq int64) string {
	for i := range d.rec.Frames {
		if f := &d.rec.Frames[i]; f.Seq == seq {
			return f.EventID
		}
	}
	d.t.Fatalf("no frame of seq %d", seq)
	return ""
}

var noAnswerCases = []behaviour{
	{name: "sends it again", want: VerdictPass, react: func(d *driver) bool {
		d.hit()
		d.send(d.post)
		return true
	}},
	{name: "carries on", want: VerdictPass, react: func(d *driver) bool { d.hit(); return true }},
	{name: "exits", want: VerdictFail, react: func(d *driver) bool { d.hit(); return false }},
}

// confusionElsewhere are the kinds this matrix does not run, and where
// their keeping and breaking clients are.
var confusionElsewhere = map[FaultKind]string{
	FaultCloseEarly:  "2026-07-28 exchanges only: TestChaos_Modern (cmd/mcpvcr)",
	FaultLateRequest: "stdio only: TestChaos_LateRequestStdio (laterequest_test.go) keeps and breaks it with raw clients and the Go SDK client",
	FaultExit:        "stdio only, and what a client does once its server is gone is not on the wire: TestChaos_StdioExit (cmd/mcpvcr) checks that the Go SDK client's call fails at once",
}

// freshRecordings are the recordings the matrix runs on, made fresh (see
// confusionRecording).
type freshRecordings struct{ ids, noIDs, asks, pair *store.Recording }

// recordConfusion records the matrix's recordings.
func recordConfusion(t *testing.T) freshRecordings {
	recs := freshRecordings{ids: recordFresh(t, true), noIDs: recordFresh(t, false),
		asks: recordScript(t, true, "asks", []string{"connected", "tools/list: ok", "roots: ok", "echo: ok", "close: ok"})}
	recs.pair = recordPair(t)
	if len(faultSites(FaultRedeliver, recs.asks)) == 0 {
		t.Fatalf("the recording of script asks has no place for redeliver (a server request on a call's SSE stream, with event ids):\n%s", layout(recs.asks))
	}
	return recs
}

// layout describes rec's streams and frames, for a failure message.
func layout(rec *store.Recording) string {
	var b strings.Builder
	for i, st := range rec.Streams {
		fmt.Fprintf(&b, "%s#%d %d end %v resumes %d:", st.Kind, i+1, st.Status, st.End, st.ResumesID)
		for _, f := range rec.Frames {
			if f.StreamID == st.ID {
				fmt.Fprintf(&b, " [%d %s %s %s id %q]", f.Seq, f.Direction, f.Kind, f.Method, f.EventID)
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// confusionRecording returns the fresh recording kind k is run on: one
// without event ids for cut; one of chaos script "asks" (a call whose
// stream carries a server request) for redeliver; for the others, script
// "confusion" with event ids.
func confusionRecording(t *testing.T, k FaultKind, recs freshRecordings) *store.Recording {
	switch k {
	case FaultCut:
		return recs.noIDs
	case FaultRedeliver:
		return recs.asks
	case FaultReorder:
		return recs.pair
	}
	return recs.ids
}

// confusionScript is the chaos script (internal/mcptest) recorded for
// kind k's recording.
func confusionScript(k FaultKind) string {
	switch k {
	case FaultRedeliver:
		return "asks"
	case FaultReorder:
		return "pair"
	}
	return "confusion"
}

// confusionRun replays rec to a raw client behaving as b under seed
// (kind k only, one fault), and returns the results and what was not
// reached.
func confusionRun(t *testing.T, rec *store.Recording, k FaultKind, seed uint64, b behaviour) ([]Result, []Result, string) {
	c := Config{Seed: seed, Kinds: []FaultKind{k}, Rate: 1}
	plan := c.Plan(rec)
	if len(plan) != 1 {
		t.Fatalf("seed %d draws %d faults of %s; want 1", seed, len(plan), k)
	}
	if b.longDelay {
		plan[0].Delay = time.Minute
	}
	f := plan[0]
	reached := make(chan struct{})
	var once sync.Once
	spy := func(p *replayer.Point) {
		if p.Where == replayer.AtResume {
			once.Do(func() { close(reached) })
		}
	}
	// A fault that holds its request or stream (delay, stall, timeout)
	// is reached once the Hook announced it: taken, before it waits. The
	// spy, called before the Hook, would let the client go on before the
	// Hook took the fault: a cancellation could then be counted as the
	// held POST.
	injected := func() {
		if f.Kind == FaultDelay || f.Kind == FaultStall || f.Kind == FaultTimeout {
			once.Do(func() { close(reached) })
		}
	}
	hung := false
	h, logs := rawReplayHook(t, []*store.Recording{rec}, c, plan, spy, injected, func(url string) {
		d := &driver{t: t, c: newRawClient(t, url, rec), rec: rec, f: f, reached: reached}
		d.c.untilResponse = true
		d.run(b)
		hung = errors.Is(d.c.ctx.Err(), context.DeadlineExceeded)
		d.c.cancel()
		d.bg.Wait()
	})
	if hung {
		t.Fatalf("the client was still waiting after %v: replay (or the driver) hung it; results %v, not reached %v\n%s", rawClientLimit, h.Results(), h.NotReached(), logs)
	}
	return h.Results(), h.NotReached(), logs
}

// TestChaos_ConfusionMatrix runs the matrix; see the top of this file.
func TestChaos_ConfusionMatrix(t *testing.T) {
	recs := recordConfusion(t)
	for _, k := range FaultKinds() {
		cases, ok := confusionCases[k]
		if !ok {
			if why, ok := confusionElsewhere[k]; ok {
				t.Logf("%s: not in this matrix: %s", k, why)
				continue
			}
			t.Errorf("%s: no raw clients keep or break it: add them to confusionCases", k)
			continue
		}
		if !slices.ContainsFunc(cases, func(b behaviour) bool { return b.want == VerdictPass }) ||
			!slices.ContainsFunc(cases, func(b behaviour) bool { return b.want == VerdictFail }) {
			t.Errorf("%s: want a client that passes and one that fails", k)
		}
		rec := confusionRecording(t, k, recs)
		for _, b := range cases {
			for _, seed := range confusionSeeds {
				t.Run(fmt.Sprintf("%s/%s/seed%d", k, b.name, seed), func(t *testing.T) {
					var first []Result
					for run, load := range []bool{false, false, true} {
						if load {
							stop := busy(t)
							defer stop()
						}
						res, nr, logs := confusionRun(t, rec, k, seed, b)
						if len(res) != 1 || len(nr) != 0 && !b.newSession {
							t.Fatalf("run %d: %d faults injected (%v), not reached %v; want 1\n%s", run+1, len(res), res, nr, logs)
						}
						r := res[0]
						if r.Verdict != b.want && !(load && b.timing) {
							t.Errorf("run %d (under load: %t): %s; the client %s: %s; want %s\n%s", run+1, load, r.Fault, r.Did, r.Verdict, b.want, logs)
						}
						if run == 0 {
							first = res
							t.Logf("%s; the client %s: %s", r.Fault, r.Did, r.Verdict)
						} else if first[0].Fault != r.Fault || first[0].Verdict != r.Verdict && !(load && b.timing) {
							t.Errorf("run %d (under load: %t) drew or judged another fault: %s: %s; first %s: %s", run+1, load, r.Fault, r.Verdict, first[0].Fault, first[0].Verdict)
						}
					}
				})
			}
		}
	}
}

// TestChaos_EndingFaultOnInitialize: a fault that ends its session
// (resume-404, expire) is taken once per recorded session. Placed on
// initialize's stream, the new session the client must begin after it
// follows the same recorded session and must not meet it again, or no
// client could ever get past it: the client that starts over passes and
// meets one fault, the one that uses the old id again fails.
func TestChaos_EndingFaultOnInitialize(t *testing.T) {
	rec := recordFresh(t, true)
	seed := uint64(0)
	for s := uint64(1); s <= 1000 && seed == 0; s++ {
		if p := (Config{Seed: s, Kinds: []FaultKind{FaultResume404}, Rate: 1}).Plan(rec); len(p) == 1 && p[0].Stream == 1 {
			seed = s
		}
	}
	if seed == 0 {
		t.Fatalf("no seed of 1–1000 places resume-404 on initialize's stream:\n%s", layout(rec))
	}
	for _, b := range confusionCases[FaultResume404] {
		t.Run(b.name, func(t *testing.T) {
			res, _, logs := confusionRun(t, rec, FaultResume404, seed, b)
			if len(res) != 1 {
				t.Fatalf("seed %d: %d faults injected (%v); want 1: the new session met it again\n%s", seed, len(res), res, logs)
			}
			if res[0].Verdict != b.want {
				t.Errorf("seed %d: %s; the client %s: %s; want %s\n%s", seed, res[0].Fault, res[0].Did, res[0].Verdict, b.want, logs)
			}
		})
	}
}
