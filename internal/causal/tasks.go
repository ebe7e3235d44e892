package causal

import (
	"encoding/json"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/store"
)

// Tasks (revision 2025-11-25). A request with params.task is answered at
// once with a CreateTaskResult (result.task.taskId), and the requester
// then follows the task by its id: tasks/get (polls), tasks/result,
// tasks/cancel, and the runner's notifications/tasks/status. Either side
// runs tasks: the server a client's tools/call, the client a server's
// elicitation/create or sampling/createMessage. Messages about a task
// that are none of these (a server's elicitation while its task is
// input_required, say) carry its id in
// _meta["io.modelcontextprotocol/related-task"].taskId.

// metaRelatedTask is the _meta key that names the task a message is
// about.
const metaRelatedTask = "io.modelcontextprotocol/related-task"

// TaskRole is what a message does for its task.
type TaskRole uint8

// The roles of a task's messages. A response has its request's role.
const (
	TaskNone    TaskRole = iota
	TaskCreate           // the request with params.task that created it
	TaskCreated          // the CreateTaskResult that answered it
	TaskPoll             // tasks/get
	TaskStatus           // notifications/tasks/status
	TaskResult           // tasks/result
	TaskCancel           // tasks/cancel
	TaskRelated          // any other message naming it in its related-task _meta
)

// String names the role as the views print it.
func (r TaskRole) String() string {
	return [...]string{"", "create", "created", "poll", "status", "result", "cancel", "related"}[r]
}

// Task is one task of the session.
type Task struct {
	// ID is the taskId, as its JSON value.
	ID string
	// Runner is the side that runs the task: the sender of its
	// CreateTaskResult (store.ServerToClient for a server's task).
	Runner store.Direction
	// Create is the request (an index into Model.Msgs) that created the
	// task, Created the CreateTaskResult that answered it.
	Create, Created int
}

// taskKey names a task: its runner mints its id.
type taskKey struct {
	runner store.Direction
	id     string
}

// tasks fills m.Tasks and each message's Task and TaskRole. A task is
// known by its CreateTaskResult, but its runner may send a status
// notification before that answer: a message belongs to a task when it
// names its id and comes after the request that created it.
func (m *Model) tasks() {
	byID := map[taskKey]int{}
	for i := range m.Msgs {
		x := &m.Msgs[i]
		if x.Answers == None {
			continue
		}
		if k, ok := created(x, &m.Msgs[x.Answers], byID); ok {
			byID[k] = len(m.Tasks)
			m.Tasks = append(m.Tasks, Task{ID: k.id, Runner: k.runner, Create: x.Answers, Created: i})
			m.Msgs[x.Answers].Task, m.Msgs[x.Answers].TaskRole = byID[k], TaskCreate
			x.Task, x.TaskRole = byID[k], TaskCreated
		}
	}
	if len(m.Tasks) == 0 {
		return
	}
	for i := range m.Msgs {
		x := &m.Msgs[i]
		switch {
		case x.TaskRole == TaskCreate || x.TaskRole == TaskCreated:
		case x.M.Kind.IsResponse():
			if x.Answers != None {
				x.Task, x.TaskRole = m.Msgs[x.Answers].Task, m.Msgs[x.Answers].TaskRole // a request's answer is its task's, if any
			}
		case x.M.Kind == jsonrpc.KindRequest || x.M.Kind == jsonrpc.KindNotification:
			if t, role := m.taskOf(x, byID); t != None && i > m.Tasks[t].Create {
				x.Task, x.TaskRole = t, role
			}
		}
	}
}

// taskOf returns the task (an index into m.Tasks) the request or
// notification x names, and what x does for it; None if it names none.
func (m *Model) taskOf(x *Msg, byID map[taskKey]int) (int, TaskRole) {
	role, runner := TaskRelated, other(x.Frame.Direction) // a request about a task goes to its runner
	switch x.M.Method {
	case "tasks/get":
		role = TaskPoll
	case "tasks/result":
		role = TaskResult
	case "tasks/cancel":
		role = TaskCancel
	case "notifications/tasks/status":
		role, runner = TaskStatus, x.Frame.Direction
	}
	id, ok := jsonrpc.Lookup(x.M.Params, "taskId")
	if role == TaskRelated || !ok {
		role = TaskRelated
		if id, ok = jsonrpc.Lookup(x.M.Params, "_meta", metaRelatedTask, "taskId"); !ok {
			return None, TaskNone
		}
	}
	t, ok := byID[taskKey{runner, string(id)}]
	if !ok && role == TaskRelated {
		t, ok = byID[taskKey{other(runner), string(id)}] // related to a task of either side
	}
	if !ok {
		return None, TaskNone
	}
	return t, role
}

// created reports whether x is a CreateTaskResult that answers req, a
// request with params.task, and creates a task not known before (not in
// known), and
// returns the task's key. Such a request may name another task in its
// related-task _meta: the task it creates is the one it belongs to.
func created(x, req *Msg, known map[taskKey]int) (taskKey, bool) {
	if x.M.Kind != jsonrpc.KindResult {
		return taskKey{}, false
	}
	if _, ok := jsonrpc.Lookup(req.M.Params, "task"); !ok {
		return taskKey{}, false
	}
	id, ok := jsonrpc.Lookup(x.M.Result, "task", "taskId")
	if !ok {
		return taskKey{}, false
	}
	k := taskKey{x.Frame.Direction, string(id)}
	_, dup := known[k] // a second creation of a task id already known is not a new task
	return k, !dup
}

// TaskLink is a task as the views show it.
type TaskLink struct {
	// ID is the taskId, decoded when it is a JSON string.
	ID string
	// Runner is the side that runs the task.
	Runner store.Direction
	// Create is the seq of the request that created it, Created that of
	// the CreateTaskResult.
	Create, Created int64
}

// taskLinks returns m's tasks for Links.
func (m *Model) taskLinks() []TaskLink {
	out := make([]TaskLink, 0, len(m.Tasks))
	for _, t := range m.Tasks {
		id := t.ID
		var s string
		if json.Unmarshal([]byte(id), &s) == nil {
			id = s
		}
		out = append(out, TaskLink{ID: id, Runner: t.Runner, Create: m.Msgs[t.Create].Frame.Seq, Created: m.Msgs[t.Created].Frame.Seq})
	}
	return out
}
