package replayer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
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

// recTask is one task a recorded server created.
type recTask struct {
	id string // the taskId, as a JSON string value
	// create is the index of the client request that created it, polls
	// those of the recorded client's tasks/get for it, answers the
	// server's answers to them that were recorded (in order).
	create  int
	polls   []int
	answers []int
	// createdAt is the task's recorded createdAt, from its
	// CreateTaskResult; zero when it has none that parses.
	createdAt time.Time
	// frames are the server frames that show the task: its
	// CreateTaskResult, the answers to polls and its status notifications.
	frames map[int]bool
}

// taskBook is what the template knows of a recording's server tasks.
type taskBook struct {
	byCreate map[int]*recTask    // creating request -> task
	byID     map[string]*recTask // taskId -> task
	// status maps a notifications/tasks/status frame to its task.
	status map[int]*recTask
}

// taskRef is the part of a task a frame names: params.taskId or
// result.task.taskId.
type taskRef struct {
	TaskID string `json:"taskId"`
	Task   *struct {
		TaskID string `json:"taskId"`
	} `json:"task"`
}

func taskIDIn(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 {
		return "", false
	}
	var r taskRef
	if json.Unmarshal(raw, &r) != nil {
		return "", false
	}
	if r.Task != nil && r.Task.TaskID != "" {
		return r.Task.TaskID, true
	}
	return r.TaskID, r.TaskID != ""
}

// buildTasks finds the server tasks of e's frames: a server result
// carrying result.task.taskId that answers a client request with
// params.task, then the client's tasks/get for that id and their answers.
func buildTasks(e *engine) *taskBook {
	b := &taskBook{byCreate: map[int]*recTask{}, byID: map[string]*recTask{}, status: map[int]*recTask{}}
	reqAt := map[string]int{} // client request id -> its latest index
	for i := range e.frames {
		fr := &e.frames[i]
		m := fr.msg
		switch {
		case fr.c2s && m.Kind == jsonrpc.KindRequest:
			reqAt[string(m.ID)] = i
			if m.Method == "tasks/get" {
				if id, ok := taskIDIn(m.Params); ok && b.byID[id] != nil {
					b.byID[id].polls = append(b.byID[id].polls, i)
				}
			}
		case !fr.c2s && m.Kind == jsonrpc.KindResult:
			j, ok := reqAt[string(m.ID)]
			if !ok {
				continue
			}
			req := e.frames[j].msg
			if req.Method == "tasks/get" {
				if id, ok := taskIDIn(req.Params); ok && b.byID[id] != nil {
					b.byID[id].answers = append(b.byID[id].answers, i)
					b.byID[id].frames[i] = true
				}
				continue
			}
			if !hasMember(req.Params, "task") {
				continue
			}
			if id, ok := taskIDIn(m.Result); ok && b.byID[id] == nil {
				t := &recTask{id: id, create: j, frames: map[int]bool{i: true}}
				if a, z, err := jsonrpc.Find(m.Raw, "result", "task", "createdAt"); err == nil {
					t.createdAt, _ = parseTaskTime(m.Raw[a:z])
				}
				b.byID[id], b.byCreate[j] = t, t
			}
		case !fr.c2s && m.Kind == jsonrpc.KindNotification && m.Method == "notifications/tasks/status":
			if id, ok := taskIDIn(m.Params); ok && b.byID[id] != nil {
				b.status[i] = b.byID[id]
				b.byID[id].frames[i] = true
			}
		}
	}
	if len(b.byID) == 0 {
		return nil
	}
	return b
}

// hasMember reports whether the JSON object raw has member name.
func hasMember(raw json.RawMessage, name string) bool {
	// Scanned in place: a huge call's params are not copied to learn it.
	_, _, err := jsonrpc.Find(raw, name)
	return err == nil
}

// liveTask is what one replay knows of a task it has created.
type liveTask struct {
	born  time.Time // when the creating request arrived
	polls int       // live tasks/get answered so far
}

// absorbTask is called when the client request at index i has been
// received: if it created a recorded task, the recorded polls of that
// task and their answers leave the conversation (see above), and what
// waited for them becomes ready. It reports the task, or nil.
func (e *engine) absorbTask(i int, now time.Time) *recTask {
	e.noteClientTask(i, now)
	if e.tasks == nil {
		return nil
	}
	t := e.tasks.byCreate[i]
	if t == nil {
		return nil
	}
	if e.live == nil {
		e.live = map[string]*liveTask{}
	}
	e.live[t.id] = &liveTask{born: now}
	for _, j := range t.polls {
		if !e.done.has(j) {
			e.done.set(j)
			e.ready = append(e.ready, e.dependents[j]...)
		}
	}
	for _, j := range t.answers {
		if !e.done.has(j) {
			e.done.set(j)
			e.unsentS2C--
			e.ready = append(e.ready, e.dependents[j]...)
		}
	}
	return t
}

// taskPoll answers live, a client's tasks/get, from the recorded task it
// names, if this replay created it: see above. pace is the replay's pace
// factor (0: as fast as possible). It reports false when live is no poll
// of such a task.
func (e *engine) taskPoll(live jsonrpc.Message, now time.Time, pace float64) (outFrame, bool) {
	if e.tasks == nil || live.Kind != jsonrpc.KindRequest || live.Method != "tasks/get" {
		return outFrame{}, false
	}
	id, ok := taskIDIn(live.Params)
	if !ok {
		return outFrame{}, false
	}
	t, lt := e.tasks.byID[id], e.live[id]
	if t == nil || lt == nil || len(t.answers) == 0 {
		return outFrame{}, false
	}
	k := min(lt.polls, len(t.answers)-1)
	if pace > 0 {
		at := e.frames[t.create].f.Offset + time.Duration(float64(now.Sub(lt.born))/pace)
		k = 0
		for n, j := range t.answers {
			if e.frames[j].f.Offset <= at {
				k = n
			}
		}
	}
	lt.polls++
	fr := &e.frames[t.answers[k]]
	data, err := jsonrpc.Splice(fr.f.Data, live.ID, "id")
	if err != nil {
		return outFrame{}, false
	}
	data, shifted := e.shiftTaskTimes(t.answers[k], data)
	return outFrame{Frame: fr.f, Data: data, Rewritten: shifted || string(live.ID) != string(fr.msg.ID)}, true
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
	if e.tasks == nil {
		return time.Time{}, 0, 0, false
	}
	t := e.tasks.status[i]
	if t == nil || e.live[t.id] == nil {
		return time.Time{}, 0, 0, false
	}
	trigger = e.frames[t.create].f.Offset
	for j := range e.tasks.status {
		if e.tasks.status[j] == t && j < i && e.frames[j].f.Offset > trigger {
			trigger = e.frames[j].f.Offset
		}
	}
	return e.live[t.id].born, max(e.frames[i].f.Offset-e.frames[t.create].f.Offset, 0), trigger, true
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
// (learnTask, liveTaskID), and the server's polls keep their recorded
// pace even when replay is not paced (polls): the server polled on its
// clock, and the client's task takes the time it takes.

// waitClientTasks makes each server request about a task the client
// runs (polls) wait for the client's answer that created the task, when
// nothing else makes it wait for that answer: the request carries the
// live client's task id, which replay learns from that answer. Its
// causal group may not hold the answer (the recorded client answered
// another server request, a roots/list on the standalone GET stream, after
// the task's creation, and the poll followed that); a live client that
// answers those in the other order got the poll with the recorded id, a
// task it does not know.
func (e *engine) waitClientTasks() {
	created := map[string]int{} // recorded taskId -> the client's answer creating it
	for i := range e.frames {
		fr := &e.frames[i]
		switch {
		case fr.c2s && fr.msg.Kind == jsonrpc.KindResult:
			if id, ok := createdTaskID(fr.msg.Result); ok {
				created[id] = i
			}
		case !fr.c2s && polls(fr.msg) && fr.extra < 0:
			if id, ok := taskIDIn(fr.msg.Params); ok {
				if j, ok := created[id]; ok {
					fr.extra = j
				}
			}
		}
	}
}

// clientTask is what one replay knows of a task the live client runs.
type clientTask struct {
	born    time.Time     // when the live client's answer creating it arrived
	created time.Duration // the recorded offset of the recorded client's answer
}

// noteClientTask notes, when the client frame at index i is an answer
// creating a task of the client's, when the live task was created.
func (e *engine) noteClientTask(i int, now time.Time) {
	fr := &e.frames[i]
	if !fr.c2s || fr.msg.Kind != jsonrpc.KindResult || now.IsZero() {
		return
	}
	rec, ok := createdTaskID(fr.msg.Result)
	if !ok {
		return
	}
	if e.clientTasks == nil {
		e.clientTasks = map[string]clientTask{}
	}
	e.clientTasks[rec] = clientTask{born: now, created: fr.f.Offset}
}

// pollTime returns, for the server's request at index i about a task the
// live client runs (polls), when the live task was created and the
// request's recorded time since the recorded task's creation. The request
// goes no earlier than that: the server polled on its clock from the
// task's creation, and the gap from the frame that released the poll is
// not enough when the creation came late (an event stream cut before the
// server's request, resumed a second later, say).
func (e *engine) pollTime(i int) (time.Time, time.Duration, bool) {
	fr := &e.frames[i]
	if !polls(fr.msg) {
		return time.Time{}, 0, false
	}
	rec, ok := taskIDIn(fr.msg.Params)
	if !ok {
		return time.Time{}, 0, false
	}
	ct, ok := e.clientTasks[rec]
	if !ok {
		return time.Time{}, 0, false
	}
	return ct.born, max(fr.f.Offset-ct.created, 0), true
}

// maskPollState leaves out of v, a client's answer to a server request of
// method, the state of the task when the request was a poll (tasks/get):
// its status and statusMessage. What a poll finds is timing, the live
// client's task and the server's clock, not the conversation: a poll that
// finds the live task done where the recorded one was still working (or
// the other way round) is no difference. What the task ends with is
// compared, in the client's answer to tasks/result.
func maskPollState(method string, v any) any {
	if m, ok := v.(map[string]any); ok && method == "tasks/get" {
		delete(m, "status")
		delete(m, "statusMessage")
	}
	return v
}

// polls reports whether m is a server's request about a client's task.
func polls(m jsonrpc.Message) bool {
	switch m.Method {
	case "tasks/get", "tasks/result", "tasks/cancel":
		return m.Kind == jsonrpc.KindRequest
	}
	return false
}

// learnTask learns, when recorded client frame i is an answer creating a
// task (result.task.taskId) and live is the live client's, the live id.
func (e *engine) learnTask(i int, live jsonrpc.Message) {
	fr := &e.frames[i]
	if !fr.msg.Kind.IsResponse() || !live.Kind.IsResponse() {
		return
	}
	rec, ok1 := createdTaskID(fr.msg.Result)
	got, ok2 := createdTaskID(live.Result)
	if !ok1 || !ok2 {
		return
	}
	if e.taskIDs == nil {
		e.taskIDs = map[string]string{}
	}
	e.taskIDs[rec] = got
}

// createdTaskID returns result.task.taskId.
func createdTaskID(raw json.RawMessage) (string, bool) {
	var r taskRef
	if len(raw) == 0 || json.Unmarshal(raw, &r) != nil || r.Task == nil || r.Task.TaskID == "" {
		return "", false
	}
	return r.Task.TaskID, true
}

// liveTaskID returns, for a recorded server request about a client's
// task, the live client's id for it as a JSON string.
func (e *engine) liveTaskID(m jsonrpc.Message) (string, bool) {
	rec, ok := taskIDIn(m.Params)
	if !ok {
		return "", false
	}
	live, ok := e.taskIDs[rec]
	if !ok || live == rec {
		return "", false
	}
	b, err := json.Marshal(live)
	return string(b), err == nil
}

// maskTasks leaves out of v, which matching compares, what a task's
// creator mints: in a task (an object with taskId and status) its
// taskId, createdAt and lastUpdatedAt, and the taskId of a related-task
// _meta. A live client's task ids are mapped, not compared, as request
// ids are; its tasks' times are the replay's.
func maskTasks(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if _, id := x["taskId"]; id {
			if _, st := x["status"]; st {
				delete(x, "taskId")
				delete(x, "createdAt")
				delete(x, "lastUpdatedAt")
			}
		}
		for k, c := range x {
			if k == "io.modelcontextprotocol/related-task" {
				if m, ok := c.(map[string]any); ok {
					delete(m, "taskId")
				}
			}
			x[k] = maskTasks(c)
		}
	case []any:
		for i := range x {
			x[i] = maskTasks(x[i])
		}
	}
	return v
}

// A server task's createdAt and lastUpdatedAt are the recording's wall
// clock: served as they are, a replay hours later shows a client a task
// whose ttl ran out long ago. So, in the frames that show a task this
// replay created, they are shifted to the replay's clock: the live
// task's creation plus the recorded time since the recorded createdAt.
// They are the only bytes of those frames, besides the ids, that replay
// changes.

// taskTimeLayout is how task times are written: RFC 3339 in UTC with
// milliseconds, as the TypeScript SDK writes them.
const taskTimeLayout = "2006-01-02T15:04:05.000Z07:00"

// parseTaskTime parses a JSON string holding an RFC 3339 time.
func parseTaskTime(raw []byte) (time.Time, bool) {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	return t, err == nil
}

// shiftTaskTimes returns data, the payload of recorded frame i, with the
// task times shifted (see above) when i shows a task this replay created
// on a clock (cursor.now), and whether it changed anything.
func (e *engine) shiftTaskTimes(i int, data []byte) ([]byte, bool) {
	if e.tasks == nil {
		return data, false
	}
	var t *recTask
	for _, c := range e.tasks.byID {
		if c.frames[i] {
			t = c
			break
		}
	}
	if t == nil || t.createdAt.IsZero() || e.live[t.id] == nil || e.live[t.id].born.IsZero() {
		return data, false
	}
	born := e.live[t.id].born
	changed := false
	for _, path := range [][]string{
		{"result", "task", "createdAt"}, {"result", "task", "lastUpdatedAt"},
		{"result", "createdAt"}, {"result", "lastUpdatedAt"},
		{"params", "createdAt"}, {"params", "lastUpdatedAt"},
	} {
		a, z, err := jsonrpc.Find(data, path...)
		if err != nil {
			continue
		}
		rec, ok := parseTaskTime(data[a:z])
		if !ok {
			continue
		}
		v, _ := json.Marshal(born.Add(rec.Sub(t.createdAt)).UTC().Format(taskTimeLayout))
		if out, err := jsonrpc.Splice(data, v, path...); err == nil {
			data, changed = out, true
		}
	}
	return data, changed
}
