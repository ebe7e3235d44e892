package view

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/mcpvcr/mcpvcr/internal/causal"
	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/store"
)

// Tasks (revision 2025-11-25): show, its JSON and the HTML report group
// the frames of a task under it, as they do a stream's. A task begins
// with the request that created it (a line before that request: what
// created it, its id, which side runs it) and ends after its last frame
// (a line with the states it went through, the polls and status
// notifications, and its result). Every frame of a task names it and
// what it does for it: create, created, poll, status, result, cancel,
// related. causal.Links says which frames those are.

// taskInfo is what the views say of one task.
type taskInfo struct {
	Label  string // "task#1"
	ID     string
	Runner string // "server" or "client"
	// Create and Created are the seqs of the creating request and of its
	// CreateTaskResult, Last that of the task's last frame and Result
	// that of the answer to its (last) tasks/result, 0 if none.
	Create, Created, Last, Result int64
	// Opened and Closed are the offsets of the creating request and the
	// task's last frame.
	Opened, Closed time.Duration
	// What is the method that created it and the tool, prompt or
	// resource it names.
	What string
	// States are the distinct statuses the task was seen in, in order:
	// its CreateTaskResult's, its polls' answers', its status
	// notifications'.
	States []string
	// Polls and Notified count the task's tasks/get requests and status
	// notifications.
	Polls, Notified int
	// Members are the seqs of the task's frames, in time order.
	Members []int64
}

// taskLabel names task i (an index into Links.Tasks) as the views do.
func taskLabel(i int) string { return "task#" + strconv.Itoa(i+1) }

// tasksOf returns what the views say of r's tasks, in the order links
// lists them.
func tasksOf(r *store.Recording, links causal.Links, named map[int64]string) []taskInfo {
	if len(links.Tasks) == 0 {
		return nil
	}
	out := make([]taskInfo, len(links.Tasks))
	for i, t := range links.Tasks {
		out[i] = taskInfo{Label: taskLabel(i), ID: t.ID, Runner: "server", Create: t.Create, Created: t.Created}
		if t.Runner == store.ClientToServer {
			out[i].Runner = "client"
		}
	}
	for k := range r.Frames {
		f := &r.Frames[k]
		of, ok := links.Task[f.Seq]
		if !ok {
			continue
		}
		t := &out[of.Task]
		t.Members = append(t.Members, f.Seq)
		t.Last, t.Closed = f.Seq, f.Offset
		m := jsonrpc.Parse(f.Data)
		switch {
		case f.Seq == t.Create:
			t.Opened, t.What = f.Offset, m.Method
			if n := named[f.Seq]; n != "" {
				t.What += " " + n
			}
		case f.Seq == t.Created:
			t.state(m.Result, "task", "status")
		case of.Role == causal.TaskPoll && m.Kind == jsonrpc.KindRequest:
			t.Polls++
		case of.Role == causal.TaskPoll && m.Kind == jsonrpc.KindResult:
			t.state(m.Result, "status")
		case of.Role == causal.TaskStatus:
			t.Notified++
			t.state(m.Params, "status")
		case of.Role == causal.TaskResult && m.Kind.IsResponse():
			t.Result = f.Seq
		}
	}
	return out
}

// state notes the status at path in raw, if it is another than the last.
func (t *taskInfo) state(raw []byte, path ...string) {
	v, ok := jsonrpc.Lookup(raw, path...)
	var s string
	if !ok || json.Unmarshal(v, &s) != nil || s == "" {
		return
	}
	if n := len(t.States); n == 0 || t.States[n-1] != s {
		t.States = append(t.States, s)
	}
}

// status is the last status the task was seen in, "" if none.
func (t *taskInfo) status() string {
	if len(t.States) == 0 {
		return ""
	}
	return t.States[len(t.States)-1]
}

// summary says in a few words what became of the task: its polls and
// status notifications, its result, how long it lasted.
func (t *taskInfo) summary() []string {
	out := []string{strconv.Itoa(t.Polls) + " polls", strconv.Itoa(t.Notified) + " status"}
	if t.Result != 0 {
		out = append(out, "result #"+strconv.FormatInt(t.Result, 10))
	}
	return append(out, fmtDur(t.Closed-t.Opened))
}

// taskMember is the flag a frame of a task shows: "task#1:poll".
func taskMember(links causal.Links, seq int64) string {
	of, ok := links.Task[seq]
	if !ok {
		return ""
	}
	return taskLabel(of.Task) + ":" + of.Role.String()
}

// taskLine is the line where task t begins (before the request that
// created it: what created it, which side runs it, its id) or, with end,
// where it ends (after its last frame: the states it went through, its
// polls, status notifications and result, how long it lasted).
func taskLine(t *taskInfo, end bool, c painter) string {
	if !end {
		return pad("", wSeq, true) + " " + pad(fmtOffset(t.Opened), wOffset, true) + " " + c.dim("┌") + " " + pad(t.Label, wStream, false) + " " +
			c.dim(pad("task", wKind, false)) + " " + pad(t.What, wMethod, false) + " " + pad("", wID, false) + " " + pad("", wSize, true) + " " +
			pad(t.Runner+" runs it", wPair, false) + " " + flagsText([]string{"id=" + t.ID})
	}
	color := c.yellow
	switch t.status() {
	case "completed":
		color = c.green
	case "failed", "cancelled":
		color = c.red
	}
	return pad("", wSeq, true) + " " + pad(fmtOffset(t.Closed), wOffset, true) + " " + c.dim("└") + " " + pad(t.Label, wStream, false) + " " +
		c.dim(pad("end", wKind, false)) + " " + color(pad(strings.Join(t.States, " → "), wMethod, false)) + " " + pad("", wID, false) + " " +
		pad("", wSize, true) + " " + pad("", wPair, false) + " " + flagsText(t.summary())
}
