package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
)

// tsTasksScript is the TypeScript SDK client of the task tests.
var tsTasksScript = filepath.Join("..", "..", "internal", "mcptest", "testdata", "tsclient", "tasks.mjs")

// tsTasksRun runs the task client script with env and args (a transport
// and its target) and returns what it printed and its stderr (over stdio,
// the replay's too).
func tsTasksRun(t *testing.T, node string, env []string, args ...string) (map[string]any, string) {
	t.Helper()
	cmd := exec.CommandContext(testCtx(t), node, append([]string{tsTasksScript}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr syncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("TypeScript task client %v %v: %v\n%s%s", env, args, err, stdout.String(), stderr.String())
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(stdout.String()), &out); err != nil {
		t.Fatalf("TypeScript task client printed %q: %v\n%s", stdout.String(), err, stderr.String())
	}
	return out, stderr.String()
}

// taskClients are the live clients a recorded task session is replayed
// to: polling at 0.5×, 1× and 2× the recorded interval (500 ms), polling
// twice more after the terminal state, and not polling at all (it waits
// for notifications/tasks/status).
var taskClients = []struct{ name, env string }{
	{"poll-250ms", "POLL_MS=250"},
	{"poll-500ms", "POLL_MS=500"},
	{"poll-1000ms", "POLL_MS=1000"},
	{"poll-after-completed", "POLL_MS=500 EXTRA_POLLS=2"},
	{"notifications-only", "MODE=notify"},
}

// TestTasks_ServerTask is issue #51's items 1 and 2: a TypeScript SDK
// client runs server-everything's simulate-research-query as a task
// (params.task), polling tasks/get every 500 ms, recorded through
// mcpvcr record over stdio and Streamable HTTP. Replayed, as fast as
// possible and under --pace real, to clients that poll more often, less
// often, after the task completed, or never (waiting for the status
// notifications), every client ends with the task completed and the
// recorded result, the notifications up to completed, nothing unmatched
// and no recorded client frame left unsent. Before the fix a poll after
// completed was unmatched (-32019, exit 1) and the client that only
// listens got one notification and gave up after 20 s. The task's
// createdAt and lastUpdatedAt are the replay's clock at the recorded
// offsets (item 5); before, they were the recording's.
func TestTasks_ServerTask(t *testing.T) {
	everything := mcptest.Everything(t)
	node := everything[0]
	check := func(t *testing.T, name string, live, got map[string]any, stderr string, code int, start time.Time) {
		t.Helper()
		// Item 5: the task's times are the replay's, at the recorded
		// offsets (the live run ended seconds before this one started).
		created, err1 := time.Parse(time.RFC3339Nano, fmt.Sprint(got["created"]))
		recCreated, err2 := time.Parse(time.RFC3339Nano, fmt.Sprint(live["created"]))
		if err1 != nil || err2 != nil || created.Before(start.Add(-time.Second)) || created.After(time.Now()) {
			t.Errorf("%s: createdAt %v (recorded %v); want the replay's time, between %v and now", name, got["created"], live["created"], start)
		}
		if u, ok := got["updated"]; ok {
			updated, err1 := time.Parse(time.RFC3339Nano, fmt.Sprint(u))
			recUpdated, err2 := time.Parse(time.RFC3339Nano, fmt.Sprint(live["updated"]))
			if err1 != nil || err2 != nil || updated.Sub(created) != recUpdated.Sub(recCreated) {
				t.Errorf("%s: lastUpdatedAt %v, createdAt %v; want them %v apart, as recorded", name, u, got["created"], recUpdated.Sub(recCreated))
			}
		}
		if got["result"] != live["result"] || got["result"] == nil {
			t.Errorf("%s: result %q; want the recorded %q", name, got["result"], live["result"])
		}
		if st, _ := got["statuses"].([]any); len(st) == 0 || st[len(st)-1] != "completed" {
			t.Errorf("%s: statuses %v; want them to end with completed", name, got["statuses"])
		}
		if n, _ := got["notified"].([]any); len(n) == 0 || n[len(n)-1] != "completed" {
			t.Errorf("%s: notified %v; want the status notifications up to completed", name, got["notified"])
		}
		if x, ok := got["extra"]; ok && x != "completed" {
			t.Errorf("%s: a poll after completed saw %v; want completed again", name, x)
		}
		if code != 0 || !strings.Contains(stderr, " 0 unmatched") || strings.Contains(stderr, "recorded client frame") || strings.Contains(stderr, "a request waits") {
			t.Errorf("%s: replay exited %d; want 0, nothing unmatched or unsent, no stall:\n%s", name, code, stderr)
		}
	}
	paces := []struct {
		name string
		args []string
	}{{"fast", nil}, {"paced", []string{"--pace", "real"}}}
	t.Run("stdio", func(t *testing.T) {
		t.Parallel()
		db := filepath.Join(t.TempDir(), "c.db")
		dumpSessionsOnFailure(t, db, 1)
		live := recordTasksStdio(t, node, db, everything)
		for _, p := range paces {
			for _, c := range taskClients {
				if p.name == "paced" && c.name == "poll-500ms" {
					continue
				}
				args := append([]string{"stdio", mcpvcrBin, "replay", "--stdio", "--cassette", db}, p.args...)
				start := time.Now()
				got, stderr := tsTasksRun(t, node, append([]string{"CLIENT_NAME=upgraded"}, strings.Fields(c.env)...), args...)
				check(t, p.name+"/"+c.name, live, got, stderr, 0, start)
			}
		}
	})
	t.Run("http", func(t *testing.T) {
		t.Parallel()
		db := filepath.Join(t.TempDir(), "c.db")
		dumpSessionsOnFailure(t, db, 1)
		upstream := mcptest.EverythingHTTP(t, mcptest.StreamableHTTP)
		live := recordTasksHTTP(t, node, db, upstream)
		for _, p := range paces {
			for _, c := range taskClients {
				if p.name == "paced" && c.name == "poll-500ms" {
					continue
				}
				start := time.Now()
				rep := startServing(t, append([]string{"replay", "--cassette", db, "--listen", "127.0.0.1:0"}, p.args...)...)
				got, _ := tsTasksRun(t, node, append([]string{"CLIENT_NAME=upgraded"}, strings.Fields(c.env)...), "http", rep.URL+"/mcp")
				code := rep.Stop()
				check(t, p.name+"/"+c.name, live, got, rep.stderr.String(), code, start)
			}
		}
	})
}

// TestTasks_ClientTask is issue #51's item 3: server-everything's
// trigger-elicitation-request-async and trigger-sampling-request-async
// ask the TypeScript SDK client to run the elicitation or sampling as a
// task of its own, then poll it (tasks/get) and fetch its result
// (tasks/result). Recorded over stdio and Streamable HTTP and replayed to
// a client that mints other task ids, the server's polls carry the live
// client's id, and the client's answers match: the same result, nothing
// unmatched. A client that answers with a task it does not keep (its
// tasks/get and tasks/result answers are errors where the recording had
// results) is reported: three unmatched answers and exit 1. Before the
// fix the polls carried the recorded id and every client got "Task not
// found".
func TestTasks_ClientTask(t *testing.T) {
	everything := mcptest.Everything(t)
	node := everything[0]
	tools := []string{"trigger-elicitation-request-async", "trigger-sampling-request-async"}
	check := func(t *testing.T, tool string, live map[string]any, replay func(env ...string) (map[string]any, string, int)) {
		t.Helper()
		got, stderr, code := replay()
		if fmt.Sprint(got["result"]) != fmt.Sprint(live["result"]) {
			t.Errorf("%s: replayed result %v; want the live %v", tool, got["result"], live["result"])
		}
		if code != 0 || !strings.Contains(stderr, " 0 unmatched") || strings.Contains(stderr, "recorded client frame") {
			t.Errorf("%s: replay exited %d; want 0 and every client frame matched:\n%s", tool, code, stderr)
		}
		_, stderr, code = replay("FORGET=1")
		if code != 1 || !strings.Contains(stderr, " 3 unmatched") || !strings.Contains(stderr, "answer to tasks/get differs at error") {
			t.Errorf("%s: replay to a client whose task is not found exited %d; want 1 and its three error answers unmatched:\n%s", tool, code, stderr)
		}
	}
	for _, tool := range tools {
		t.Run("stdio/"+tool, func(t *testing.T) {
			t.Parallel()
			db := filepath.Join(t.TempDir(), "c.db")
			dumpSessionsOnFailure(t, db, 1)
			env := []string{"MODE=client", "TOOL=" + tool}
			live, _ := tsTasksRun(t, node, append(env, "CLIENT_NAME=recorded"),
				append([]string{"stdio", mcpvcrBin, "record", "--cassette", db, "--"}, everything...)...)
			if r := fmt.Sprint(live["result"]); !strings.Contains(r, "[COMPLETED]") {
				t.Fatalf("live run = %v; want the client's task completed", live)
			}
			check(t, tool, live, func(more ...string) (map[string]any, string, int) {
				got, stderr := tsTasksRun(t, node, append(append(env, "CLIENT_NAME=upgraded"), more...), "stdio", mcpvcrBin, "replay", "--stdio", "--cassette", db)
				code := 0
				if !strings.Contains(stderr, " 0 unmatched") {
					code = 1 // the replay's exit code goes to the client, which does not pass it on
				}
				return got, stderr, code
			})
		})
		t.Run("http/"+tool, func(t *testing.T) {
			t.Parallel()
			db := filepath.Join(t.TempDir(), "c.db")
			dumpSessionsOnFailure(t, db, 1)
			upstream := mcptest.EverythingHTTP(t, mcptest.StreamableHTTP)
			env := []string{"MODE=client", "TOOL=" + tool}
			rec := startServing(t, "record", "--cassette", db, "--upstream", upstream, "--listen", "127.0.0.1:0")
			live, _ := tsTasksRun(t, node, append(env, "CLIENT_NAME=recorded"), "http", rec.URL)
			if code := rec.Stop(); code != 0 {
				t.Fatalf("record exited %d:\n%s", code, rec.stderr)
			}
			if r := fmt.Sprint(live["result"]); !strings.Contains(r, "[COMPLETED]") {
				t.Fatalf("live run = %v; want the client's task completed", live)
			}
			check(t, tool, live, func(more ...string) (map[string]any, string, int) {
				rep := startServing(t, "replay", "--cassette", db, "--listen", "127.0.0.1:0")
				got, _ := tsTasksRun(t, node, append(append(env, "CLIENT_NAME=upgraded"), more...), "http", rep.URL+"/mcp")
				code := rep.Stop()
				return got, rep.stderr.String(), code
			})
		})
	}
}

// recordTasksStdio records the TypeScript SDK client polling a task of
// server every 500 ms over stdio into db, and returns what it saw: the
// task working, then completed, and its result.
func recordTasksStdio(t *testing.T, node, db string, server []string) map[string]any {
	t.Helper()
	live, _ := tsTasksRun(t, node, []string{"CLIENT_NAME=recorded", "POLL_MS=500"},
		append([]string{"stdio", mcpvcrBin, "record", "--cassette", db, "--"}, server...)...)
	wantTaskCompleted(t, live)
	return live
}

// recordTasksHTTP is recordTasksStdio through mcpvcr record in front of
// the Streamable HTTP server at upstream.
func recordTasksHTTP(t *testing.T, node, db, upstream string) map[string]any {
	t.Helper()
	rec := startServing(t, "record", "--cassette", db, "--upstream", upstream, "--listen", "127.0.0.1:0")
	live, _ := tsTasksRun(t, node, []string{"CLIENT_NAME=recorded", "POLL_MS=500"}, "http", rec.URL)
	if code := rec.Stop(); code != 0 {
		t.Fatalf("record exited %d:\n%s", code, rec.stderr)
	}
	wantTaskCompleted(t, live)
	return live
}

// wantTaskCompleted fails t unless the live run saw the task working,
// then completed, and its result.
func wantTaskCompleted(t *testing.T, live map[string]any) {
	t.Helper()
	if live["result"] == nil || fmt.Sprint(live["statuses"]) != "[working completed]" {
		t.Fatalf("live run = %v; want the task working, then completed, and its result", live)
	}
}
