package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpvcr/mcpvcr/diff"
	"github.com/mcpvcr/mcpvcr/internal/mcptest"
)

// tsTaskServer is the small TypeScript SDK task server of the verify
// task tests (see its doc): $TASK_END ends its task otherwise, $TASK_NOTIFY=0
// keeps its status notifications back, $TASK_STAGE_MS slows it down.
var tsTaskServer = filepath.Join("..", "..", "internal", "mcptest", "testdata", "tsserver", "tasks.mjs")

// taskServer returns the command that runs the task server with env
// (through env(1): the TypeScript SDK client passes a stdio server only
// a few variables of its own).
func taskServer(t *testing.T, node string, env ...string) []string {
	t.Helper()
	script, err := filepath.Abs(tsTaskServer)
	if err != nil {
		t.Fatal(err)
	}
	return append(append([]string{"env"}, env...), node, script)
}

// compact returns raw without insignificant space.
func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// jsonText renders v for a failure message.
func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// verifyTimes runs mcpvcr verify of session 1 n times with args (the
// target) and fails t unless each run exits 0 with no differences.
func verifyTimes(t *testing.T, n int, db string, args ...string) {
	t.Helper()
	for i := range n {
		r := verifyJSON(t, exitOK, append([]string{"verify", "1", "--cassette", db}, args...)...)
		if d := differences(r); len(d) > 0 {
			t.Errorf("run %d: differences %v; want none", i+1, d)
		}
	}
}

// TestTasks_Verify is issue #51's item 4: a TypeScript SDK client runs
// simulate-research-query as a task, polling tasks/get every 500 ms,
// recorded through mcpvcr record; mcpvcr verify of the recording against
// the server that made it reports no differences, five times in a row,
// over stdio and Streamable HTTP against server-everything, and against
// a task server that sends no status notifications (there the polls are
// paced by nothing but their recorded time since the task's creation).
// Before the fix verify sent the polls one after the other and the last
// found the task still working: "7 of 11 requests differ" against the
// server without notifications, every run. A live task slower than the
// recorded one is polled until it reaches the recorded state (no
// difference); one that ends failed where the recorded one completed is
// a difference, on the task's states and its result.
func TestTasks_Verify(t *testing.T) {
	everything := mcptest.Everything(t)
	node := everything[0]
	t.Run("stdio/everything", func(t *testing.T) {
		t.Parallel()
		db := filepath.Join(t.TempDir(), "c.db")
		dumpSessionsOnFailure(t, db, 1)
		recordTasksStdio(t, node, db, everything)
		verifyTimes(t, 5, db, append([]string{"--"}, everything...)...)
	})
	t.Run("http/everything", func(t *testing.T) {
		t.Parallel()
		db := filepath.Join(t.TempDir(), "c.db")
		dumpSessionsOnFailure(t, db, 1)
		upstream := mcptest.EverythingHTTP(t, mcptest.StreamableHTTP)
		recordTasksHTTP(t, node, db, upstream)
		verifyTimes(t, 5, db, "--upstream", upstream)
	})
	t.Run("stdio/no-notifications", func(t *testing.T) {
		t.Parallel()
		db := filepath.Join(t.TempDir(), "c.db")
		dumpSessionsOnFailure(t, db, 1)
		recordTasksStdio(t, node, db, taskServer(t, node, "TASK_NOTIFY=0"))
		verifyTimes(t, 5, db, append([]string{"--"}, taskServer(t, node, "TASK_NOTIFY=0")...)...)

		// A slower live task: the recorded last poll (at about 4.3 s)
		// finds it working; verify polls on until it completes.
		verifyTimes(t, 1, db, append([]string{"--"}, taskServer(t, node, "TASK_NOTIFY=0", "TASK_STAGE_MS=1400")...)...)

		// A task that ends failed.
		r := verifyJSON(t, exitDiffer, append([]string{"verify", "1", "--cassette", db, "--"}, taskServer(t, node, "TASK_NOTIFY=0", "TASK_END=failed")...)...)
		var states *diff.Change
		var got []string
		for _, rd := range r.Requests {
			if !rd.Differs() {
				continue
			}
			got = append(got, rd.Label())
			for i, c := range rd.Changes {
				if rd.Method == "tasks/get" && c.Path == "result.status" {
					states = &rd.Changes[i]
				}
			}
		}
		if states == nil || compact(states.Old) != `["working","completed"]` || compact(states.New) != `["working","failed"]` {
			t.Errorf("task states change = %s; want [working completed] -> [working failed]", jsonText(states))
		}
		if len(got) != 2 || !strings.HasPrefix(got[0], "tasks/get") || !slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, "tasks/result") }) {
			t.Errorf("differing requests %v; want one tasks/get (the states) and tasks/result", got)
		}
	})
}
