package replayer

import (
	"bytes"
	"fmt"
	"net/http"
	"time"

	"github.com/mcpvcr/mcpvcr/internal/causal"
	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/internal/script"
)

// Tasks (2025-11-25): a request with params.task is answered at once
// with a CreateTaskResult, and the work goes on on the server's own
// timeline, which the client follows by polling tasks/get, by listening
// to notifications/tasks/status, or both, and ends with tasks/result.
// Polling is timing: a live client polls as often as its clock says, not
// as often as the recorded one did. So a recorded server task is replayed
// by state, not by count:
//
//   - once the creating request has matched, the recorded client's polls
//     and the server's answers to them leave the conversation (absorbed):
//     nothing waits for them, and they are never unsent or unmatched;
//   - a live tasks/get for the task is answered with one of the recorded
//     answers to a poll (its id made the live one's, every other byte as
//     recorded): under --pace, the last one the recorded server gave at
//     the same time since the task's creation (scaled by the pace), the
//     first before that; otherwise the next one each time. Once the last
//     (the terminal state) is reached it is repeated;
//   - the status notifications that waited for polls go out when the
//     task is created, each at its recorded time since the creation when
//     paced (taskTime), as soon as possible otherwise.

// liveTask is what one replay knows of a task the recording created: when
// the live one was created (the creating request arrived, for a
// server's task; the client's answer creating it, for the client's), and
// how many live tasks/get replay answered for it.
type liveTask struct {
	born  time.Time
	polls int
}

// absorbTask is called when the client frame at index i has been
// received. If it created a recorded server task, the recorded polls of
// that task and their answers leave the conversation (see above), and
// what waited for them becomes ready. If it is the client's answer
// creating a task of its own, replay notes when (pollTime).
func (e *engine) absorbTask(i int, now time.Time) {
	fr := &e.frames[i]
	t := fr.Task
	switch {
	case t == nil:
		return
	case !t.Server && fr.Role == causal.TaskCreated && !now.IsZero():
		e.noteTask(t, now)
		return
	case !t.Server || fr.Role != causal.TaskCreate:
		return
	}
	e.noteTask(t, now)
	for _, j := range t.Polls {
		if !e.done.has(j) {
			e.done.set(j)
			if !e.frames[j].C2S {
				e.unsentS2C--
			}
			e.ready = append(e.ready, e.dependents[j]...)
		}
	}
}

// noteTask notes that the live task of t was created at now.
func (e *engine) noteTask(t *script.Task, now time.Time) {
	if e.live == nil {
		e.live = map[*script.Task]*liveTask{}
	}
	e.live[t] = &liveTask{born: now}
}

// taskPoll answers live, a client's tasks/get, from the recorded task it
// names, if this replay created it: see above. pace is the replay's pace
// factor (0: as fast as possible). It reports false when live is no poll
// of such a task.
func (e *engine) taskPoll(live jsonrpc.Message, now time.Time, pace float64) (outFrame, bool) {
	if e.byTaskID == nil || live.Kind != jsonrpc.KindRequest || live.Method != "tasks/get" {
		return outFrame{}, false
	}
	id, ok := jsonrpc.Lookup(live.Params, "taskId")
	if !ok {
		return outFrame{}, false
	}
	t := e.byTaskID[script.TaskKey(id)]
	lt := e.live[t]
	if t == nil || lt == nil || len(t.Answers) == 0 {
		return outFrame{}, false
	}
	k := min(lt.polls, len(t.Answers)-1)
	if pace > 0 {
		at := e.frames[t.Create].F.Offset + time.Duration(float64(now.Sub(lt.born))/pace)
		k = 0
		for n, j := range t.Answers {
			if e.frames[j].F.Offset <= at {
				k = n
			}
		}
	}
	lt.polls++
	fr := &e.frames[t.Answers[k]]
	data, err := jsonrpc.Splice(fr.F.Data, live.ID, "id")
	if err != nil {
		return outFrame{}, false
	}
	data, shifted := e.shiftTaskTimes(t.Answers[k], data)
	return outFrame{Frame: fr.F, Data: data, Rewritten: shifted || string(live.ID) != string(fr.Msg.ID)}, true
}

// taskPoll answers live from the leader's recorded task, if it is a poll
// of a task this replay created (see engine.taskPoll), and keeps the
// candidates that created it. It counts the client's request as
// outstanding no longer: the answer is returned, not queued.
func (c *cursor) taskPoll(live jsonrpc.Message, now time.Time, pace float64) (outFrame, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.cands {
		if o, ok := e.taskPoll(live, now, pace); ok {
			if len(c.cands) > 1 {
				c.only(e)
			}
			return o, true
		}
	}
	return outFrame{}, false
}

// taskTime returns, for a notifications/tasks/status frame at index i of
// a task this replay created, when the live task was created and the
// frame's recorded time since then, and the recorded offset paced replay
// waits from: the task's previous status notification, or its creation.
// ok is false for any other frame.
func (e *engine) taskTime(i int) (born time.Time, since, trigger time.Duration, ok bool) {
	t := e.frames[i].Task
	if t == nil || !t.Server || e.frames[i].Role != causal.TaskStatus || e.live[t] == nil {
		return time.Time{}, 0, 0, false
	}
	trigger = e.frames[t.Create].F.Offset
	for _, j := range t.Status {
		if j < i {
			trigger = max(trigger, e.frames[j].F.Offset)
		}
	}
	return e.live[t].born, max(e.frames[i].F.Offset-e.frames[t.Create].F.Offset, 0), trigger, true
}

// clockNow is the cursor's time now. The caller holds c.mu.
func (c *cursor) clockNow() time.Time {
	if c.now == nil {
		return time.Time{}
	}
	return c.now()
}

// taskPoll answers live over HTTP if it polls a task this replay created
// (see engine.taskPoll), and reports whether it did: as the recorded
// answer came, a JSON body or one SSE event (without the recorded
// priming event and event id: a poll is not resumed).
func (ls *liveSession) taskPoll(w http.ResponseWriter, live jsonrpc.Message) bool {
	o, ok := ls.cur.taskPoll(live, ls.srv.clock().Now(), ls.srv.Pace)
	if !ok {
		return false
	}
	ls.mu.Lock()
	ls.rep.Matched++
	ls.mu.Unlock()
	if !o.Frame.SSE {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(o.Data)
		return true
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	ev := o.Frame.Event
	if ev == "" {
		ev = "message"
	}
	_, _ = fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev, bytes.TrimSpace(o.Data))
	return true
}

// Tasks the client runs: a server request with params.task (an
// elicitation or a sampling) is answered by the client with a task of its
// own, whose id the live client mints. The recorded server's tasks/get,
// tasks/result and tasks/cancel for it go out with the live id
// (learnTask, liveTaskID) once the client's answer creating it came
// (the script links it), and the server's polls keep their recorded pace even when
// replay is not paced (pollTime): the server polled on its clock, and the
// client's task takes the time it takes.

// pollTime returns, for the server's request at index i about a task the
// live client runs (polls), when the live task was created and the
// request's recorded time since the recorded task's creation. The request
// goes no earlier than that: the server polled on its clock from the
// task's creation, and the gap from the frame that released the poll is
// not enough when the creation came late (an event stream cut before the
// server's request, resumed a second later, say).
func (e *engine) pollTime(i int) (time.Time, time.Duration, bool) {
	fr := &e.frames[i]
	if !fr.ClientPoll() || e.live[fr.Task] == nil {
		return time.Time{}, 0, false
	}
	return e.live[fr.Task].born, max(fr.F.Offset-e.frames[fr.Task.Created].F.Offset, 0), true
}

// polls reports whether m is a server's request about a client's task.
func polls(m jsonrpc.Message) bool {
	switch m.Method {
	case "tasks/get", "tasks/result", "tasks/cancel":
		return m.Kind == jsonrpc.KindRequest
	}
	return false
}

// learnTask learns, when recorded client frame i is the client's answer
// creating a task of its own and live is the live client's, the live id.
func (e *engine) learnTask(i int, live jsonrpc.Message) {
	fr := &e.frames[i]
	if fr.Task == nil || fr.Task.Server || fr.Role != causal.TaskCreated || !live.Kind.IsResponse() {
		return
	}
	got, ok := jsonrpc.Lookup(live.Result, "task", "taskId")
	if !ok {
		return
	}
	if e.taskIDs == nil {
		e.taskIDs = map[string]string{}
	}
	e.taskIDs[fr.Task.ID] = string(got)
}

// liveTaskID returns, for a recorded server request about a client's
// task, the live client's id for it, as the JSON value the client sent.
func (e *engine) liveTaskID(m jsonrpc.Message) (string, bool) {
	rec, ok := jsonrpc.Lookup(m.Params, "taskId")
	if !ok {
		return "", false
	}
	live, ok := e.taskIDs[string(rec)]
	return live, ok && live != string(rec)
}

// A server task's createdAt and lastUpdatedAt are the recording's wall
// clock: served as they are, a replay hours later shows a client a task
// whose ttl ran out long ago. So, in the frames that show a task this
// replay created, they are shifted to the replay's clock: the live
// task's creation plus the recorded time since the recorded createdAt.
// They are the only bytes of those frames, besides the ids, that replay
// changes.

// shiftTaskTimes returns data, the payload of recorded frame i, with the
// task times shifted (see above) when i shows a task this replay created
// on a clock (cursor.now), and whether it changed anything.
func (e *engine) shiftTaskTimes(i int, data []byte) ([]byte, bool) {
	fr := &e.frames[i]
	t := fr.Task
	if t == nil || !t.Server || fr.C2S || fr.Role == causal.TaskCreate || fr.Role > causal.TaskStatus {
		return data, false
	}
	if t.CreatedAt.IsZero() || e.live[t] == nil || e.live[t].born.IsZero() {
		return data, false
	}
	return script.ShiftTimes(data, t.CreatedAt, e.live[t].born)
}
