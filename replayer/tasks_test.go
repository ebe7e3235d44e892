package replayer

import (
	"bufio"
	"context"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcpvcr/mcpvcr/clock"
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
	srv := &Server{Recordings: []*store.Recording{rec.Recording}, Clock: fake}
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
