package verify

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
)

// Tasks (revision 2025-11-25). A client that ran a task polled it
// (tasks/get) on its own clock, and what each poll saw depends on when it
// went: sent one after the other, the recorded polls would all find the
// live task working. So a recorded tasks/get or tasks/result of a task
// the recorded client created (a request with params.task whose answer
// carried the task) goes no earlier than its recorded time since the
// task's creation, counted from when the live task was created (its
// CreateTaskResult came). A tasks/get whose live answer shows another
// state than the recorded one, not a terminal one, is followed by more
// polls of verify's own, at the recorded interval, until the live task
// reaches the recorded state, ends, or taskBound passes; other polls and
// the task's tasks/result wait for them. package diff compares a task's
// polls as the sequence of states they saw, not poll by poll.

// recTask is a task the recorded client created.
type recTask struct {
	creator string        // the id of the request that created it
	created time.Duration // the recorded offset of its CreateTaskResult
	last    time.Duration // the recorded offset of its latest poll so far (while planning)
}

// taskStep is a recorded poll (tasks/get) or tasks/result of a task the
// recorded client created.
type taskStep struct {
	creator  string        // the id of the request that created the task
	after    time.Duration // the recorded time since the task's creation
	want     string        // tasks/get: the status the recorded answer gave
	interval time.Duration // the recorded time since the task's previous poll (or creation)
	poll     bool          // tasks/get
}

// Bounds of a task's polls of verify's own.
const (
	taskSlack       = 5 * time.Second        // see taskBound
	minPollInterval = 50 * time.Millisecond  // polls of verify's own go at least this far apart
	maxPollInterval = 5 * time.Second        // and at most this far
	defaultPoll     = 500 * time.Millisecond // when the recording shows no interval
)

// ownPoll starts the ids (JSON strings) of the polls of verify's own.
const ownPoll = `"mcpvcr-verify-poll-`

// taskBound is how long after the live task's creation verify still polls
// for the state a poll recorded after after: twice that, plus taskSlack.
func taskBound(after time.Duration) time.Duration { return 2*after + taskSlack }

// terminal reports whether a task status is final.
func terminal(status string) bool {
	return status == "completed" || status == "failed" || status == "cancelled"
}

// taskStatus returns the status of the task object raw (a tasks/get
// result), "" if it has none.
func taskStatus(raw []byte) string {
	b, ok := jsonrpc.Lookup(raw, "status")
	if !ok {
		return ""
	}
	var s string
	if json.Unmarshal(b, &s) != nil {
		return ""
	}
	return s
}

// planTasks finds the tasks the recorded client created and makes their
// polls and tasks/result wait for their recorded time since the creation
// (see waitTask). answerAt holds the recorded offset of each client
// request's answer.
func (p *plan) planTasks(answerAt map[string]time.Duration) {
	tasks := map[string]*recTask{} // recorded raw taskId -> its task
	for i := range p.steps {
		st := &p.steps[i]
		if st.f == nil || len(st.msgs) != 1 || st.msgs[0].Kind != jsonrpc.KindRequest {
			continue
		}
		m := st.msgs[0]
		id := string(m.ID)
		if _, ok := jsonrpc.Lookup(m.Params, "task"); ok {
			if resp, ok := p.responses[id]; ok && resp.Kind == jsonrpc.KindResult {
				if tid, ok := jsonrpc.Lookup(resp.Result, "task", "taskId"); ok {
					at := answerAt[id]
					tasks[string(tid)] = &recTask{creator: id, created: at, last: at}
					p.creators[id] = true
				}
			}
			continue
		}
		if m.Method != "tasks/get" && m.Method != "tasks/result" {
			continue
		}
		tid, ok := jsonrpc.Lookup(m.Params, "taskId")
		if !ok {
			continue
		}
		t := tasks[string(tid)]
		if t == nil {
			continue
		}
		ts := &taskStep{creator: t.creator, after: max(0, st.f.Offset-t.created), poll: m.Method == "tasks/get"}
		if ts.poll {
			ts.interval = max(0, st.f.Offset-t.last)
			t.last = st.f.Offset
			if resp, ok := p.responses[id]; ok && resp.Kind == jsonrpc.KindResult {
				ts.want = taskStatus(resp.Result)
			}
		}
		st.task = ts
		st.waits = append(st.waits, wait{kind: waitAnswer, id: t.creator}, wait{kind: waitTask, id: t.creator, after: ts.after})
		p.polls[id] = st
	}
	for _, t := range tasks {
		p.final = append(p.final, wait{kind: waitTask, id: t.creator})
	}
}

// taskStarted is when the live task created by request creator was
// created: when the answer came. It reports false if none came, or an
// error did. The caller holds d.mu.
func (d *driver) taskStarted(creator string) (time.Time, bool) {
	at, ok := d.answered[creator]
	return at, ok && d.created[creator]
}

// taskWake is when a task wait (see waitTask) may be satisfied, and
// whether it is now. The caller holds d.mu.
func (d *driver) taskWake(w wait) (time.Time, bool) {
	now := d.clock.Now()
	if d.repolling[w.id] {
		return now.Add(d.timeout), false // until the polls end (signal)
	}
	born, ok := d.taskStarted(w.id)
	if !ok {
		return time.Time{}, true
	}
	t := born.Add(min(w.after, d.timeout))
	return t, !now.Before(t)
}

// checkPoll starts polls of verify's own when the live answer m to a
// recorded tasks/get shows another state than the recorded one (see the
// package's tasks). The caller holds d.mu.
func (d *driver) checkPoll(ctx context.Context, id string, m jsonrpc.Message) {
	st, ok := d.p.polls[id]
	if !ok {
		return
	}
	ts := st.task
	if !ts.poll || m.Kind != jsonrpc.KindResult || ts.want == "" || d.finishing || d.repolling[ts.creator] {
		return
	}
	if live := taskStatus(m.Result); live == ts.want || live == "" || terminal(live) {
		return
	}
	born, ok := d.taskStarted(ts.creator)
	if !ok {
		return
	}
	deadline := born.Add(taskBound(ts.after))
	if limit := d.sent[id].Add(d.timeout); limit.Before(deadline) {
		deadline = limit
	}
	if !d.clock.Now().Before(deadline) {
		return
	}
	d.repolling[ts.creator] = true
	d.polling.Go(func() { d.repoll(ctx, st, deadline) })
}

// repoll polls the task of st again, at the recorded interval, until the
// live task is in the recorded state, ends, or deadline passes. Each
// poll is st's frame with an id of verify's own.
func (d *driver) repoll(ctx context.Context, st *step, deadline time.Time) {
	ts := st.task
	defer func() {
		d.mu.Lock()
		delete(d.repolling, ts.creator)
		d.signal()
		d.mu.Unlock()
	}()
	interval := ts.interval
	if interval <= 0 {
		interval = defaultPoll
	}
	interval = min(max(interval, minPollInterval), maxPollInterval)
	for {
		select {
		case <-d.clock.After(interval):
		case <-ctx.Done():
			return
		}
		d.mu.Lock()
		if d.gone != nil || d.abort != nil || d.finishing || !d.clock.Now().Before(deadline) {
			d.mu.Unlock()
			return
		}
		d.extra++
		id := fmt.Sprintf(`%s%d"`, ownPoll, d.extra)
		data, err := jsonrpc.Splice(d.rewrite(st.f.Data), []byte(id), "id")
		if err != nil {
			d.mu.Unlock()
			return
		}
		d.sent[id] = d.clock.Now()
		d.mu.Unlock()
		if err := d.c.send(ctx, st.f, data); err != nil {
			d.serverGone(err)
			return
		}
		status, ok := d.awaitStatus(ctx, id, deadline)
		if !ok || status == ts.want || terminal(status) {
			return
		}
	}
}

// awaitStatus waits until the answer to poll id of verify's own came and
// returns the status it gave; false if no result came before deadline.
func (d *driver) awaitStatus(ctx context.Context, id string, deadline time.Time) (string, bool) {
	for {
		d.mu.Lock()
		if s, ok := d.statuses[id]; ok {
			d.mu.Unlock()
			return s, s != ""
		}
		if d.gone != nil || d.abort != nil || d.ended[id] || !d.clock.Now().Before(deadline) {
			d.mu.Unlock()
			return "", false
		}
		changed := d.changed
		d.mu.Unlock()
		select {
		case <-changed:
		case <-d.clock.At(deadline):
		case <-ctx.Done():
			return "", false
		}
	}
}

// learnTask notes what the live answer m to request id says of a task:
// that it created one, or the status a poll of verify's own saw; and
// checks the answer to a recorded poll (checkPoll). The caller holds
// d.mu.
func (d *driver) learnTask(ctx context.Context, id string, m jsonrpc.Message) {
	switch {
	case d.p.creators[id]:
		_, ok := jsonrpc.Lookup(m.Result, "task", "taskId")
		d.created[id] = ok && m.Kind == jsonrpc.KindResult
	case strings.HasPrefix(id, ownPoll):
		s := ""
		if m.Kind == jsonrpc.KindResult {
			s = taskStatus(m.Result)
		}
		d.statuses[id] = s
	default:
		d.checkPoll(ctx, id, m)
	}
}
