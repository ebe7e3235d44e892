package replayer

import (
	"bufio"
	"context"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpvcr/mcpvcr/clock"
	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/store"
)

// TestServeStdio_ClientTaskPollTime: the server's polls of a task the
// client runs go at their recorded time since the task's creation, not
// only at the recorded gap from the frame before them. The recorded
// client answered the first poll half a second late; a live client that
// answers at once must not get the second poll half a second early,
// when its task may not have reached the recorded state yet (replayed
// over HTTP, an event stream cut before the server's request delays the
// creation in the same way). The clock is fake: nothing depends on the
// machine's speed.
func TestServeStdio_ClientTaskPollTime(t *testing.T) {
	rep, second := replayClientTask(t, "working")
	if second < 2*time.Second {
		t.Errorf("the second poll came %v after the task's creation; want its recorded 2 s (the recorded gap from the first poll's answer was 500 ms)", second)
	}
	if rep == nil || !rep.OK() || rep.Matched != 4 {
		t.Errorf("report = %+v; want the client's four frames matched", rep)
	}
}

// TestServeStdio_ClientTaskPollState: a client whose task is done when
// the server's first poll comes, where the recorded one was still
// working, answers "completed" for "working": the state a poll finds is
// timing, not the conversation, so it matches (the task's result is
// compared in the answer to tasks/result). Before, it was unmatched and
// replay exited 1 (found by the matrix's task-client cell, P3, where a
// cut event stream delayed the poll).
func TestServeStdio_ClientTaskPollState(t *testing.T) {
	rep, _ := replayClientTask(t, "completed")
	if rep == nil || !rep.OK() || rep.Matched != 4 {
		t.Errorf("report = %+v; want the client's four frames matched", rep)
	}
}

// replayClientTask replays a recorded task the client ran, which the
// server polled twice, to a client that answers the first poll with
// status first, and returns the report and when the second poll came
// since the task's creation (on a fake clock).
func replayClientTask(t *testing.T, first string) (*Report, time.Duration) {
	t.Helper()
	rec := stdioRecording(t, 1,
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"async"}}`,
		`< {"jsonrpc":"2.0","id":0,"method":"elicitation/create","params":{"message":"name?","task":{"ttl":60000}}}`,
		`> {"jsonrpc":"2.0","id":0,"result":{"task":{"taskId":"rec-t","status":"working"}}}`,
		`< {"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"rec-t"}}`,
		`> {"jsonrpc":"2.0","id":1,"result":{"taskId":"rec-t","status":"working"}}`,
		`< {"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"taskId":"rec-t"}}`,
		`> {"jsonrpc":"2.0","id":2,"result":{"taskId":"rec-t","status":"completed"}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"content":[]}}`,
	)
	for i, ms := range []int{0, 10, 20, 1020, 1520, 2020, 2025, 2030} {
		rec.Frames[i].Offset = time.Duration(ms) * time.Millisecond
	}
	fake := clock.NewFake(time.Unix(0, 0))
	srv := &Server{Recordings: []*store.Recording{rec.Recording}, Clock: fake, Wait: -1} // no stall warning: the test moves the clock on
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan *Report, 1)
	go func() {
		rep, _ := srv.ServeStdio(context.Background(), pipeClient{inR, outW})
		outW.Close()
		done <- rep
	}()
	lines := make(chan string, 8)
	go func() {
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	send := func(s string) {
		if _, err := io.WriteString(inW, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	// next moves the fake clock on in steps of 10 ms, letting the replay
	// run between them, until a line comes, and returns it with the fake
	// time then. A timer the replay asks for late only makes a line come
	// later, never earlier.
	next := func() (string, time.Duration) {
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatal("the replay closed its output")
				}
				return l, fake.Now().Sub(time.Unix(0, 0))
			default:
			}
			for range 100 {
				runtime.Gosched()
			}
			select {
			case l := <-lines:
				return l, fake.Now().Sub(time.Unix(0, 0))
			default:
				fake.Advance(10 * time.Millisecond)
			}
		}
	}
	send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"async"}}`)
	if l, _ := next(); !strings.Contains(l, "elicitation/create") {
		t.Fatalf("first line %q; want the elicitation", l)
	}
	created := fake.Now().Sub(time.Unix(0, 0))
	send(`{"jsonrpc":"2.0","id":0,"result":{"task":{"taskId":"live-t","status":"working"}}}`)
	l, at := next()
	if !strings.Contains(l, `"tasks/get"`) || !strings.Contains(l, `"live-t"`) || at-created < time.Second {
		t.Fatalf("%v after the task's creation: %q; want the first poll, of the live task, after 1 s", at-created, l)
	}
	send(`{"jsonrpc":"2.0","id":1,"result":{"taskId":"live-t","status":"` + first + `"}}`) // at once
	l, at = next()
	if !strings.Contains(l, `"tasks/get"`) || !strings.Contains(l, `"id":2`) {
		t.Fatalf("%q; want the second poll", l)
	}
	send(`{"jsonrpc":"2.0","id":2,"result":{"taskId":"live-t","status":"completed"}}`)
	if l, _ = next(); !strings.Contains(l, `"id":7`) {
		t.Fatalf("%q; want the answer to the call", l)
	}
	inW.Close()
	return <-done, at - created
}

// TestServeStdio_ClientTaskPollWaitsForTheTask: the server's poll of a
// task the client runs waits for the client's answer that created the
// task, whatever the recorded client answered last before the poll. The
// recorded client answered the elicitation (creating its task) and then
// a roots/list, and the server polled after that; a live client that
// answers the roots/list first and the elicitation a while later gets
// the poll after its task exists, with its id. Before, the poll went out
// once the roots/list was answered, with the recorded id, and the client
// answered "Task not found" (found by the matrix's task-client cell, P3,
// where a cut event stream delayed the elicitation).
func TestServeStdio_ClientTaskPollWaitsForTheTask(t *testing.T) {
	rec := stdioRecording(t, 1,
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"async"}}`,
		`< {"jsonrpc":"2.0","id":0,"method":"elicitation/create","params":{"message":"name?","task":{"ttl":60000}}}`,
		`< {"jsonrpc":"2.0","id":1,"method":"roots/list"}`,
		`> {"jsonrpc":"2.0","id":0,"result":{"task":{"taskId":"rec-t","status":"working"}}}`,
		`> {"jsonrpc":"2.0","id":1,"result":{"roots":[]}}`,
		`< {"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"taskId":"rec-t"}}`,
		`> {"jsonrpc":"2.0","id":2,"result":{"taskId":"rec-t","status":"completed"}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"content":[]}}`,
	)
	for i, ms := range []int{0, 10, 20, 30, 40, 1040, 1045, 1050} {
		rec.Frames[i].Offset = time.Duration(ms) * time.Millisecond
	}
	h := startClientTask(t, rec)
	h.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"async"}}`)
	for range 2 {
		if l, _ := h.next(); !strings.Contains(l, "elicitation/create") && !strings.Contains(l, "roots/list") {
			t.Fatalf("%q; want the elicitation and the roots/list", l)
		}
	}
	h.send(`{"jsonrpc":"2.0","id":1,"result":{"roots":[]}}`)
	if l, at := h.quiet(3 * time.Second); l != "" {
		t.Fatalf("%v after the roots/list's answer, before the client created its task: %q; want nothing", at, l)
	}
	created := h.now()
	h.send(`{"jsonrpc":"2.0","id":0,"result":{"task":{"taskId":"live-t","status":"working"}}}`)
	l, at := h.next()
	if !strings.Contains(l, `"tasks/get"`) || !strings.Contains(l, `"live-t"`) || at-created < time.Second {
		t.Fatalf("%v after the task's creation: %q; want the poll, of the live task, after its recorded 1 s", at-created, l)
	}
	h.send(`{"jsonrpc":"2.0","id":2,"result":{"taskId":"live-t","status":"completed"}}`)
	if l, _ = h.next(); !strings.Contains(l, `"id":7`) {
		t.Fatalf("%q; want the answer to the call", l)
	}
	if rep := h.close(); rep == nil || !rep.OK() || rep.Matched != 4 {
		t.Errorf("report = %+v; want the client's four frames matched", rep)
	}
}

// clientTaskHarness is a stdio replay on a fake clock, with the lines it
// writes on a channel.
type clientTaskHarness struct {
	t     *testing.T
	fake  *clock.Fake
	in    *io.PipeWriter
	lines chan string
	done  chan *Report
}

func startClientTask(t *testing.T, rec *recording) *clientTaskHarness {
	h := &clientTaskHarness{t: t, fake: clock.NewFake(time.Unix(0, 0)), lines: make(chan string, 8), done: make(chan *Report, 1)}
	srv := &Server{Recordings: []*store.Recording{rec.Recording}, Clock: h.fake, Wait: -1} // no stall warning: the test moves the clock on
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	h.in = inW
	go func() {
		rep, _ := srv.ServeStdio(context.Background(), pipeClient{inR, outW})
		outW.Close()
		h.done <- rep
	}()
	go func() {
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			h.lines <- sc.Text()
		}
		close(h.lines)
	}()
	return h
}

func (h *clientTaskHarness) send(s string) {
	if _, err := io.WriteString(h.in, s+"\n"); err != nil {
		h.t.Fatal(err)
	}
}

func (h *clientTaskHarness) now() time.Duration { return h.fake.Now().Sub(time.Unix(0, 0)) }

// step lets the replay run, then returns a line if one came, or moves
// the fake clock 10 ms on.
func (h *clientTaskHarness) step() (string, bool) {
	for range 100 {
		runtime.Gosched()
	}
	select {
	case l, ok := <-h.lines:
		if !ok {
			h.t.Fatal("the replay closed its output")
		}
		return l, true
	default:
		h.fake.Advance(10 * time.Millisecond)
		return "", false
	}
}

// next moves the clock on until a line comes (see step), and returns it
// with the fake time then.
func (h *clientTaskHarness) next() (string, time.Duration) {
	for {
		if l, ok := h.step(); ok {
			return l, h.now()
		}
	}
}

// quiet moves the clock d on, and returns the first line that came
// meanwhile, if any, with the fake time then.
func (h *clientTaskHarness) quiet(d time.Duration) (string, time.Duration) {
	for end := h.now() + d; h.now() < end; {
		if l, ok := h.step(); ok {
			return l, h.now()
		}
	}
	return "", 0
}

func (h *clientTaskHarness) close() *Report {
	h.in.Close()
	return <-h.done
}

// TestCursor_ServerTaskByState: once the request creating a server's task
// has matched, the recorded client's polls and every recorded answer to
// them (an error too) leave the conversation: a live client that never
// polls gets none of those answers, and its own poll is answered from the
// recorded ones, its id made its own. Which frames poll which task is
// the causal model's pairing (internal/causal).
func TestCursor_ServerTaskByState(t *testing.T) {
	rec := stdioRecording(t, 1,
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","task":{"ttl":60000}}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"task":{"taskId":"t1","status":"working","ttl":60000}}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"taskId":"t1"}}`,
		`< {"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"busy"}}`,
		`> {"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"taskId":"t1"}}`,
		`< {"jsonrpc":"2.0","id":3,"result":{"taskId":"t1","status":"completed","ttl":60000}}`,
		`> {"jsonrpc":"2.0","id":4,"method":"tasks/result","params":{"taskId":"t1"}}`,
		`< {"jsonrpc":"2.0","id":4,"result":{"content":[]}}`,
	)
	c := newCursor([]*recording{rec}, Match{}, true)
	got := recv(t, c, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow","task":{"ttl":60000}}}`)
	if want := []string{`{"jsonrpc":"2.0","id":7,"result":{"task":{"taskId":"t1","status":"working","ttl":60000}}}`}; !cmp.Equal(got, want) {
		t.Errorf("after the call: %q; want only the CreateTaskResult", got)
	}
	o, ok := c.taskPoll(jsonrpc.Parse([]byte(`{"jsonrpc":"2.0","id":8,"method":"tasks/get","params":{"taskId":"t1"}}`)), time.Time{}, 0)
	if want := `{"jsonrpc":"2.0","id":8,"result":{"taskId":"t1","status":"completed","ttl":60000}}`; !ok || strings.TrimSpace(string(o.Data)) != want {
		t.Errorf("taskPoll = %q, %v; want %s", o.Data, ok, want)
	}
	got = recv(t, c, `{"jsonrpc":"2.0","id":9,"method":"tasks/result","params":{"taskId":"t1"}}`)
	if want := []string{`{"jsonrpc":"2.0","id":9,"result":{"content":[]}}`}; !cmp.Equal(got, want) {
		t.Errorf("after tasks/result: %q; want only its answer (no answer to a recorded poll)", got)
	}
	if unsent := c.leader().unsent(); len(unsent) != 0 {
		t.Errorf("unsent = %d frames; want none (the recorded polls are absorbed)", len(unsent))
	}
}
