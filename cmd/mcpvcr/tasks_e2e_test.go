package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

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
// listens got one notification and gave up after 20 s.
func TestTasks_ServerTask(t *testing.T) {
	everything := mcptest.Everything(t)
	node := everything[0]
	check := func(t *testing.T, name string, live, got map[string]any, stderr string, code int) {
		t.Helper()
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
		if code != 0 || !strings.Contains(stderr, " 0 unmatched") || strings.Contains(stderr, "not sent") || strings.Contains(stderr, "a request waits") {
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
		live, _ := tsTasksRun(t, node, []string{"CLIENT_NAME=recorded", "POLL_MS=500"},
			append([]string{"stdio", mcpvcrBin, "record", "--cassette", db, "--"}, everything...)...)
		if live["result"] == nil || fmt.Sprint(live["statuses"]) != "[working completed]" {
			t.Fatalf("live run = %v; want the task working, then completed, and its result", live)
		}
		for _, p := range paces {
			for _, c := range taskClients {
				if p.name == "paced" && c.name == "poll-500ms" {
					continue
				}
				args := append([]string{"stdio", mcpvcrBin, "replay", "--stdio", "--cassette", db}, p.args...)
				got, stderr := tsTasksRun(t, node, append([]string{"CLIENT_NAME=upgraded"}, strings.Fields(c.env)...), args...)
				check(t, p.name+"/"+c.name, live, got, stderr, 0)
			}
		}
	})
	t.Run("http", func(t *testing.T) {
		t.Parallel()
		db := filepath.Join(t.TempDir(), "c.db")
		dumpSessionsOnFailure(t, db, 1)
		upstream := mcptest.EverythingHTTP(t, mcptest.StreamableHTTP)
		rec := startServing(t, "record", "--cassette", db, "--upstream", upstream, "--listen", "127.0.0.1:0")
		live, _ := tsTasksRun(t, node, []string{"CLIENT_NAME=recorded", "POLL_MS=500"}, "http", rec.URL)
		if code := rec.Stop(); code != 0 {
			t.Fatalf("record exited %d:\n%s", code, rec.stderr)
		}
		if live["result"] == nil || fmt.Sprint(live["statuses"]) != "[working completed]" {
			t.Fatalf("live run = %v; want the task working, then completed, and its result", live)
		}
		for _, p := range paces {
			for _, c := range taskClients {
				if p.name == "paced" && c.name == "poll-500ms" {
					continue
				}
				rep := startServing(t, append([]string{"replay", "--cassette", db, "--listen", "127.0.0.1:0"}, p.args...)...)
				got, _ := tsTasksRun(t, node, append([]string{"CLIENT_NAME=upgraded"}, strings.Fields(c.env)...), "http", rep.URL+"/mcp")
				code := rep.Stop()
				check(t, p.name+"/"+c.name, live, got, rep.stderr.String(), code)
			}
		}
	})
}
