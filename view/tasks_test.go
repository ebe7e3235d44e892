package view_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpvcr/mcpvcr/store"
	"github.com/mcpvcr/mcpvcr/view"
)

// taskSessions imports testdata/tasks/everything-stdio.jsonl, recorded
// through mcpvcr record over stdio with the TypeScript SDK client
// (internal/mcptest/testdata/tsclient/tasks.mjs) and server-everything:
// session 1 runs simulate-research-query as a task of the server's,
// polled every 500 ms; session 2 calls trigger-elicitation-request-async,
// whose server asks the client to run the elicitation as a task and
// polls it.
func taskSessions(t testing.TB) (server, client *store.Recording) {
	t.Helper()
	in, err := os.ReadFile(filepath.Join("testdata", "tasks", "everything-stdio.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "tasks.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ids, err := db.Import(ctx, bytes.NewReader(in))
	if err != nil || len(ids) != 2 {
		t.Fatalf("import: %v, %v", ids, err)
	}
	if server, err = db.Recording(ctx, ids[0]); err != nil {
		t.Fatal(err)
	}
	if client, err = db.Recording(ctx, ids[1]); err != nil {
		t.Fatal(err)
	}
	return server, client
}

// TestWriteText_Tasks: show groups a task's frames under it. A line
// where the task begins comes right before the request that created it
// (what created it, which side runs it, its id), one where it ends
// right after its last frame (the states it went through, its polls,
// status notifications and result), and each of its frames, and no
// other, is flagged task#1 with its role. --task keeps the task alone.
func TestWriteText_Tasks(t *testing.T) {
	server, client := taskSessions(t)
	for _, c := range []struct {
		name      string
		r         *store.Recording
		begin     []string // what the line where the task begins says
		end       []string
		roles     map[string]int // task#1:ROLE -> how many frames
		notMember []string       // methods of frames between the lines that are not the task's
	}{
		{"server", server,
			[]string{"┌ task#1", "task", "tools/call simulate-research-query", "server runs it", "id="},
			[]string{"└ task#1", "end", "working → completed", "8 polls,5 status,result #30,"},
			map[string]int{"create": 1, "created": 1, "poll": 16, "status": 5, "result": 2},
			[]string{"notifications/tools/list_changed", "stderr"}},
		{"client", client,
			[]string{"┌ task#1", "task", "elicitation/create", "client runs it", "id="},
			[]string{"└ task#1", "end", "working → completed", "2 polls,1 status,result #19,"},
			map[string]int{"create": 1, "created": 1, "poll": 4, "status": 1, "result": 2},
			nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := text(t, c.r, view.Options{})
			lines := strings.Split(out, "\n")
			begin, end := -1, -1
			roles := map[string]int{}
			for i, l := range lines {
				switch {
				case strings.Contains(l, "┌ task#1"):
					begin = i
				case strings.Contains(l, "└ task#1"):
					end = i
				}
				if k := strings.Index(l, "task#1:"); k >= 0 {
					roles[strings.Fields(l[k+len("task#1:"):])[0]]++
					if begin < 0 || end >= 0 {
						t.Errorf("a frame of the task outside its lines: %q", l)
					}
				} else if begin >= 0 && end < 0 && i > begin {
					ok := false
					for _, m := range c.notMember {
						ok = ok || strings.Contains(l, m)
					}
					if !ok {
						t.Errorf("a frame between the task's lines is not flagged as the task's: %q", l)
					}
				}
			}
			if begin < 0 || end < 0 {
				t.Fatalf("no line where the task begins (%d) or ends (%d):\n%s", begin, end, out)
			}
			for _, w := range c.begin {
				if !strings.Contains(lines[begin], w) {
					t.Errorf("the task's first line lacks %q: %q", w, lines[begin])
				}
			}
			for _, w := range c.end {
				if !strings.Contains(lines[end], w) {
					t.Errorf("the task's last line lacks %q: %q", w, lines[end])
				}
			}
			if !strings.Contains(lines[begin+1], "task#1:create") || !strings.Contains(lines[end-1], "task#1:result") {
				t.Errorf("the task's lines do not enclose its creation and its result:\n%s\n%s", lines[begin+1], lines[end-1])
			}
			if !cmpRoles(roles, c.roles) {
				t.Errorf("frames by role %v; want %v\n%s", roles, c.roles, out)
			}
			// --task keeps the task's lines and frames, nothing else.
			for _, name := range []string{"1", "task#1"} {
				only := strings.Split(strings.TrimSpace(text(t, c.r, view.Options{Task: name})), "\n")[2:]
				want := 2
				for _, n := range c.roles {
					want += n
				}
				if len(only) != want {
					t.Errorf("--task %s: %d lines; want the task's %d:\n%s", name, len(only), want, strings.Join(only, "\n"))
				}
				for _, l := range only {
					if !strings.Contains(l, "task#1") {
						t.Errorf("--task %s keeps %q", name, l)
					}
				}
			}
			if err := view.WriteText(io.Discard, c.r, view.Options{Task: "2"}); err == nil {
				t.Error("--task 2 of a session with one task: no error")
			}
		})
	}
}

func cmpRoles(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestWriteJSON_Tasks: show --format json lists the tasks and names
// each frame's task and role.
func TestWriteJSON_Tasks(t *testing.T) {
	server, _ := taskSessions(t)
	var b bytes.Buffer
	if err := view.WriteJSON(&b, server, view.Options{}); err != nil {
		t.Fatal(err)
	}
	var got view.TimelineJSON
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Tasks) != 1 {
		t.Fatalf("tasks = %+v; want one", got.Tasks)
	}
	k := got.Tasks[0]
	if k.Label != "task#1" || k.Runner != "server" || k.What != "tools/call simulate-research-query" || k.CreateSeq != 5 || k.CreatedSeq != 8 ||
		k.ResultSeq != 30 || k.LastSeq != 30 || strings.Join(k.States, ",") != "working,completed" || k.Polls != 8 || k.Notified != 5 || len(k.ID) != 32 {
		t.Errorf("task = %+v", k)
	}
	roles := map[int64]string{}
	for _, f := range got.Frames {
		if f.Task != "" {
			roles[f.Seq] = f.Task + ":" + f.TaskRole
		}
	}
	for seq, want := range map[int64]string{5: "task#1:create", 7: "task#1:status", 8: "task#1:created", 9: "task#1:poll", 30: "task#1:result"} {
		if roles[seq] != want {
			t.Errorf("frame %d: %q; want %q", seq, roles[seq], want)
		}
	}
	if _, ok := roles[6]; ok || len(roles) != 25 {
		t.Errorf("%d frames named a task (%v); want 25, not #6 (tools/list_changed)", len(roles), roles)
	}
}

// TestWrite_NoSuchTask: --task naming no task of the session is an error
// that lists the tasks it has, in text and JSON alike.
func TestWrite_NoSuchTask(t *testing.T) {
	server, _ := taskSessions(t)
	for name, write := range map[string]func(io.Writer, *store.Recording, view.Options) error{"text": view.WriteText, "json": view.WriteJSON} {
		err := write(io.Discard, server, view.Options{Task: "5"})
		var nt *view.NoTaskError
		if !errors.As(err, &nt) || !strings.Contains(err.Error(), "it has task#1") {
			t.Errorf("%s: --task 5 = %v; want a NoTaskError naming task#1", name, err)
		}
		if err := write(io.Discard, server, view.Options{Task: "task#1"}); err != nil {
			t.Errorf("%s: --task task#1 = %v", name, err)
		}
	}
}
