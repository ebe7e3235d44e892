package main

import (
	"encoding/json"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
)

// TestTasks_Show is issue #51's "show and the HTML report group a task's
// frames under it": the TypeScript SDK client runs server-everything's
// simulate-research-query as a task, polling every 500 ms, recorded
// through mcpvcr record over stdio and Streamable HTTP (where the status
// notifications come on the standalone GET stream). show prints a line
// where the task begins, before the request that created it, and one
// where it ends, after its last frame, and flags every frame of the task
// with its role: every poll and its answer, every status notification
// the client saw, the result. --task 1 keeps the task alone; --format
// json and the HTML report's data say the same.
func TestTasks_Show(t *testing.T) {
	everything := mcptest.Everything(t)
	node := everything[0]
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			db := filepath.Join(t.TempDir(), "c.db")
			dumpSessionsOnFailure(t, db, 1)
			var live map[string]any
			if transport == "stdio" {
				live = recordTasksStdio(t, node, db, everything)
			} else {
				live = recordTasksHTTP(t, node, db, mcptest.EverythingHTTP(t, mcptest.StreamableHTTP))
			}
			polls := int(live["polls"].(float64))
			notified := len(live["notified"].([]any))
			res := mcpvcr(t, "", "show", "1", "--cassette", db)
			if res.code != 0 {
				t.Fatalf("show exited %d: %s", res.code, res.stderr)
			}
			lines := strings.Split(res.stdout, "\n")
			begin, end := -1, -1
			roles := map[string]int{}
			for i, l := range lines {
				switch {
				case strings.Contains(l, "┌ task#1"):
					begin = i
				case strings.Contains(l, "└ task#1"):
					end = i
				}
				if m := regexp.MustCompile(`task#1:(\w+)`).FindStringSubmatch(l); m != nil {
					roles[m[1]]++
					if begin < 0 || end >= 0 {
						t.Errorf("a frame of the task outside its lines: %q", l)
					}
				}
			}
			if begin < 0 || end < 0 {
				t.Fatalf("show has no line where the task begins or ends:\n%s", res.stdout)
			}
			for _, want := range []string{"tools/call simulate-research-query", "server runs it", "id="} {
				if !strings.Contains(lines[begin], want) {
					t.Errorf("the task's first line lacks %q: %q", want, lines[begin])
				}
			}
			summary := fmt.Sprintf("%d polls,%d status,result #", polls, notified)
			if !strings.Contains(lines[end], "working → completed") || !strings.Contains(lines[end], summary) {
				t.Errorf("the task's last line %q; want working → completed and %q", lines[end], summary)
			}
			want := map[string]int{"create": 1, "created": 1, "poll": 2 * polls, "status": notified, "result": 2}
			if fmt.Sprint(roles) != fmt.Sprint(want) {
				t.Errorf("frames by role %v; want %v (the client polled %d times, saw %d notifications)\n%s", roles, want, polls, notified, res.stdout)
			}
			only := mcpvcr(t, "", "show", "1", "--cassette", db, "--task", "1")
			if n := strings.Count(only.stdout, "task#1"); only.code != 0 || n != strings.Count(only.stdout, "\n")-2 || n != 2*polls+notified+6 {
				t.Errorf("show --task 1 exited %d, %d lines of the task; want only the task's %d:\n%s", only.code, n, 2*polls+notified+6, only.stdout)
			}

			var tl struct {
				Tasks []struct {
					Label, Runner string
					States        []string
					Polls         int
					Notified      int `json:"status_notifications"`
				}
			}
			js := mcpvcr(t, "", "show", "1", "--cassette", db, "--format", "json")
			if err := json.Unmarshal([]byte(js.stdout), &tl); err != nil || len(tl.Tasks) != 1 {
				t.Fatalf("show --format json: %v, tasks %+v", err, tl.Tasks)
			}
			if k := tl.Tasks[0]; k.Label != "task#1" || k.Runner != "server" || fmt.Sprint(k.States) != "[working completed]" || k.Polls != polls || k.Notified != notified {
				t.Errorf("show --format json: task %+v", k)
			}

			out := filepath.Join(t.TempDir(), "report.html")
			if res := mcpvcr(t, "", "export", "1", "--cassette", db, "--format", "html", "-o", out); res.code != 0 {
				t.Fatalf("export --format html exited %d: %s", res.code, res.stderr)
			}
			page, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			m := regexp.MustCompile(`(?s)<script id="data" type="application/json">(.*?)</script>`).FindSubmatch(page)
			var data struct {
				Sessions []struct {
					Tasks []struct {
						Label    string
						Polls    int
						Notified int
					}
					Frames []struct {
						Task int    `json:"tk"`
						Role string `json:"tr"`
					}
				}
			}
			if m == nil || json.Unmarshal([]byte(html.UnescapeString(string(m[1]))), &data) != nil || len(data.Sessions) != 1 || len(data.Sessions[0].Tasks) != 1 {
				t.Fatalf("the HTML report's data has no task")
			}
			members := 0
			for _, f := range data.Sessions[0].Frames {
				if f.Task == 1 {
					members++
				}
			}
			if k := data.Sessions[0].Tasks[0]; k.Polls != polls || k.Notified != notified || members != 2*polls+notified+4 {
				t.Errorf("the HTML report: task %+v, %d frames of it; want %d polls, %d status, %d frames", k, members, polls, notified, 2*polls+notified+4)
			}
		})
	}
}
