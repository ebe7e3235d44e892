package causal

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpvcr/mcpvcr/store"
)

// TestLink_Tasks checks task membership: a server's task (created by a
// tools/call with params.task, polled, its status notified, its result
// fetched; its first status notification comes before its
// CreateTaskResult, as server-everything sends it) and a client's task
// (an elicitation/create with params.task, which the server polls), with
// the same id minted by each side, and messages that are not the task's:
// a poll of the id before the task was created, a request with
// params.task answered with an error, and tasks/list.
func TestLink_Tasks(t *testing.T) {
	c, s := store.ClientToServer, store.ServerToClient
	fr := func(seq int64, dir store.Direction, raw string) store.Frame {
		f := store.Frame{Seq: seq, Direction: dir, Raw: []byte(raw)}
		f.Derive(store.StdinStream)
		return f
	}
	frames := []store.Frame{
		fr(1, c, `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"t1"}}`),
		fr(2, s, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"no task"}}`),
		fr(3, c, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","task":{"ttl":1000}}}`),
		fr(4, s, `{"jsonrpc":"2.0","method":"notifications/tasks/status","params":{"taskId":"t1","status":"working"}}`),
		fr(5, s, `{"jsonrpc":"2.0","id":2,"result":{"task":{"taskId":"t1","status":"working"}}}`),
		fr(6, c, `{"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"taskId":"t1"}}`),
		fr(7, s, `{"jsonrpc":"2.0","id":3,"result":{"taskId":"t1","status":"working"}}`),
		fr(8, s, `{"jsonrpc":"2.0","method":"notifications/tasks/status","params":{"taskId":"t1","status":"input_required"}}`),
		fr(9, s, `{"jsonrpc":"2.0","id":0,"method":"elicitation/create","params":{"message":"?","task":{},"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t1"}}}}`),
		fr(10, c, `{"jsonrpc":"2.0","id":0,"result":{"task":{"taskId":"t1","status":"working"}}}`),
		fr(11, s, `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"t1"}}`),
		fr(12, c, `{"jsonrpc":"2.0","id":1,"result":{"taskId":"t1","status":"completed"}}`),
		fr(13, c, `{"jsonrpc":"2.0","id":4,"method":"tasks/result","params":{"taskId":"t1"}}`),
		fr(14, s, `{"jsonrpc":"2.0","id":4,"result":{"content":[],"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t1"}}}}`),
		fr(15, c, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"x","task":{}}}`),
		fr(16, s, `{"jsonrpc":"2.0","id":5,"error":{"code":-32601,"message":"no tasks"}}`),
		fr(17, c, `{"jsonrpc":"2.0","id":6,"method":"tasks/list"}`),
		fr(18, s, `{"jsonrpc":"2.0","id":6,"result":{"tasks":[{"taskId":"t1","status":"completed"}]}}`),
		fr(19, c, `{"jsonrpc":"2.0","id":7,"method":"tasks/cancel","params":{"taskId":"t1"}}`),
		fr(20, s, `{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"done"}}`),
	}
	l := Link(&store.Recording{Frames: frames})
	wantTasks := []TaskLink{{ID: "t1", Runner: s, Create: 3, Created: 5}, {ID: "t1", Runner: c, Create: 9, Created: 10}}
	if diff := cmp.Diff(wantTasks, l.Tasks); diff != "" {
		t.Errorf("Tasks (-want +got):\n%s", diff)
	}
	want := map[int64]TaskOf{
		3: {0, TaskCreate}, 4: {0, TaskStatus}, 5: {0, TaskCreated}, 6: {0, TaskPoll}, 7: {0, TaskPoll}, 8: {0, TaskStatus},
		9: {1, TaskCreate}, 10: {1, TaskCreated}, 11: {1, TaskPoll}, 12: {1, TaskPoll},
		13: {0, TaskResult}, 14: {0, TaskResult}, 19: {0, TaskCancel}, 20: {0, TaskCancel},
	}
	if diff := cmp.Diff(want, l.Task); diff != "" {
		t.Errorf("Task (-want +got):\n%s", diff)
	}
	if l := Link(&store.Recording{Frames: frames[:2]}); l.Tasks != nil || l.Task != nil {
		t.Errorf("a session without tasks: Tasks %v, Task %v; want both nil", l.Tasks, l.Task)
	}
}
