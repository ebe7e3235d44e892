package matrix

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
)

// Tasks (revision 2025-11-25, issue #51): a request with params.task is
// answered at once with a CreateTaskResult, and the requester follows the
// task by polling tasks/get, by listening to notifications/tasks/status,
// or both, then fetches tasks/result. Two scenarios, of server-everything
// (the one server of the matrix with tasks) and the TypeScript SDK client
// (the one client that runs them):
//
//   - task-server: the client calls simulate-research-query as a task and
//     polls it every 500 ms until it ends, then fetches its result;
//   - task-client: the client calls trigger-elicitation-request-async,
//     whose server asks the client to run the elicitation as a task of
//     its own, then polls it and fetches its result (P5 applies: a client
//     whose task answers otherwise is reported).
//
// A task step's transcript entry is the distinct states the client saw
// the task in (from its CreateTaskResult on) and its result.
//
// P7 (task-server): polling is the client's clock, not the recording's.
// The recording is replayed to the same client polling twice as often,
// half as often, and not at all (it waits for the status notifications),
// as fast as replay can and under --pace real: each sees the live states
// and result, and replay matches every frame.
//
// P2 (task-server): replay answers a task's polls by state and sends its
// status notifications on the task's own timeline, not behind the polls
// they followed (docs/tasks.md): those frames are not in recorded order,
// by design. The other server frames are, and every status notification
// of the task reaches the client.

// The steps of the task scenarios.
const (
	taskPoll   = "poll"   // call the tool as a task, poll it every Every ms
	taskNotify = "notify" // call the tool as a task, wait for its status notifications
	pollEvery  = 500      // the recorded client's poll interval, in ms
)

// taskClients are the clients that run tasks.
var taskClients = []string{"tssdk"}

// taskTransports are the transports of the task scenarios.
var taskTransports = []string{"stdio", "http"}

func init() {
	scenarios = append(scenarios,
		scenario{name: "task-server", since: mcptest.V20251125, plans: map[string][]step{
			"everything": {{Op: "call", Tool: "simulate-research-query", Args: map[string]any{"topic": "matrix"}, Task: taskPoll, Every: pollEvery}},
		}},
		scenario{name: "task-client", since: mcptest.V20251125, serverRequests: true, plans: map[string][]step{
			"everything": {{Op: "call", Tool: "trigger-elicitation-request-async", ClientTasks: true}},
		}},
	)
}

// isTask reports whether sc is a task scenario.
func isTask(sc scenario) bool { return sc.name == "task-server" || sc.name == "task-client" }

// taskCannot says why c, a cell of a task scenario, is not formed, or "".
func taskCannot(c cell) string {
	switch {
	case !isTask(c.scenario):
		return ""
	case !slices.Contains(taskClients, c.client.name):
		return c.client.name + " does not run tasks"
	case !slices.Contains(taskTransports, c.transport.name):
		return "the task scenarios run over stdio and Streamable HTTP"
	}
	return ""
}

// checkTasks is P7 on a task-server cell: see the top of this file.
func checkTasks(t *testing.T, c cell, r recording) {
	if c.scenario.name != "task-server" {
		return
	}
	t.Run("P7", func(t *testing.T) {
		for _, v := range []struct {
			name  string
			task  string
			every int
			extra []string
		}{
			{"poll-2x", taskPoll, pollEvery / 2, nil},
			{"poll-0.5x", taskPoll, pollEvery * 2, nil},
			{"notify", taskNotify, 0, nil},
			{"poll-2x-paced", taskPoll, pollEvery / 2, []string{"--pace", "real"}},
			{"notify-paced", taskNotify, 0, []string{"--pace", "real"}},
		} {
			t.Run(v.name, func(t *testing.T) {
				plan := slices.Clone(c.plan)
				for i := range plan {
					if plan[i].Task != "" {
						plan[i].Task, plan[i].Every = v.task, v.every
					}
				}
				got, report, code := replay(t, c, r, v.extra, call{rev: c.rev, plan: plan, info: "matrix-" + v.name, notes: len(r.live.t.Notes)})
				got.t = lateNotes(t, r, got.t)
				if diff := cmp.Diff(r.live.t, got.t); diff != "" {
					t.Errorf("a client that polls otherwise (%s) saw otherwise (-live +replay):\n%s\nreplay stderr:\n%s", v.name, diff, report)
				}
				checkClean(t, code, report)
			})
		}
	})
}

// orderCheck is P2 for cell c: checkOrder, or for a task-server cell
// checkTaskOrder.
func orderCheck(c cell) func(*testing.T, cell, recording) {
	if c.scenario.name == "task-server" {
		return checkTaskOrder
	}
	return checkOrder
}

// A taskFrame is a frame of mcpvcr show --format json, with its task.
type taskFrame struct {
	timelineFrame
	TaskRole string `json:"task_role"`
}

// taskTimeline returns the server frames of session 1 of db that are not
// on stderr: the task's polls and status notifications (by the role show
// gives them) in polls and notes, the others in rest.
func taskTimeline(t *testing.T, db string) (rest, polls, notes []taskFrame) {
	t.Helper()
	res := mcpvcr(t, "show", "1", "--cassette", db, "--format", "json")
	var v struct {
		Frames []taskFrame `json:"frames"`
	}
	if res.code != 0 || json.Unmarshal([]byte(res.stdout), &v) != nil {
		t.Fatalf("mcpvcr show --format json exited %d: %s", res.code, res.stderr)
	}
	for _, f := range v.Frames {
		switch {
		case f.Dir == "c2s" || f.Kind == "stderr":
		case f.TaskRole == "poll":
			polls = append(polls, f)
		case f.TaskRole == "status":
			notes = append(notes, f)
		default:
			rest = append(rest, f)
		}
	}
	return rest, polls, notes
}

// checkTaskOrder is P2 for a task-server cell over stdio (see the top of
// this file): the client runs against mcpvcr replay with mcpvcr record in
// front of it, so that a second recording holds what replay sent.
func checkTaskOrder(t *testing.T, c cell, r recording) {
	db2 := filepath.Join(t.TempDir(), "replayed.db")
	argv := []string{mcpvcrBin, "record", "--cassette", db2, "--", mcpvcrBin, "replay", "1", "--stdio", "--cassette", r.db}
	got := c.client.run(t, endpoint{transport: "stdio", argv: argv}, call{rev: c.rev, plan: c.plan, info: "matrix-replayer", notes: len(r.live.t.Notes)})
	got.t = lateNotes(t, r, got.t)
	if diff := diffTranscripts(r.live.t, got.t); diff != "" {
		t.Errorf("through record in front of replay, the client saw otherwise (-live +replay):\n%s", diff)
	}
	orig, origPolls, origNotes := taskTimeline(t, r.db)
	seen, seenPolls, seenNotes := taskTimeline(t, db2)
	keys := func(fs []taskFrame) string {
		var out []string
		for _, f := range fs {
			out = append(out, f.key())
		}
		return fmt.Sprint(out)
	}
	if keys(orig) != keys(seen) {
		t.Errorf("the server frames other than the task's polls and status notifications, in order:\n recorded %s\n replayed %s", keys(orig), keys(seen))
	}
	if len(seenNotes) != len(origNotes) {
		t.Errorf("the client got %d of the task's %d status notifications", len(seenNotes), len(origNotes))
	}
	if len(origNotes) == 0 || len(origPolls) == 0 || len(seenPolls) == 0 {
		t.Errorf("the recording has %d polls, %d status notifications of the task, the replay's %d polls: a task-server cell has both", len(origPolls), len(origNotes), len(seenPolls))
	}
	if t.Failed() {
		t.Logf("the replay as recorded:\n%s", mcpvcr(t, "show", "1", "--cassette", db2).stdout)
	}
}
