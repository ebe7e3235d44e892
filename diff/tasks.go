package diff

import (
	"encoding/json"
	"slices"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
)

// Tasks (revision 2025-11-25). A client polls a task it created
// (tasks/get) on its own clock: two sessions of the same task poll it a
// different number of times, and each poll sees what the task was doing
// at that moment. So the polls of a task the client created (a request
// with params.task whose answer carried the task) are not paired one by
// one: per task, the sequence of distinct states they saw, from the
// creation's (working, input_required, working, ..., completed), is
// compared, and the last poll of each session with all its answer. More
// or fewer polls that saw the same state are no difference; another
// state, another terminal state, or a last answer that differs is. The
// task's tasks/result is paired and compared like any request.

// task is a task the client of a session created.
type task struct {
	creator int    // the index of the exchange that created it
	status  string // the status the creation gave
	polls   []int  // the indexes of its tasks/get exchanges, in order
}

// tasksOf finds the tasks c's client created and their polls: by the
// index of the creating exchange, and the set of poll indexes.
func tasksOf(c *conversation) (map[int]*task, map[int]bool) {
	byID := map[string]*task{}
	byCreator := map[int]*task{}
	polls := map[int]bool{}
	for i, x := range c.exchanges {
		if _, ok := jsonrpc.Lookup(x.req.Params, "task"); ok && x.resp.Kind == jsonrpc.KindResult {
			if tid, ok := jsonrpc.Lookup(x.resp.Result, "task", "taskId"); ok {
				st, _ := jsonrpc.Lookup(x.resp.Result, "task", "status")
				t := &task{creator: i, status: stringOf(st)}
				byID[string(tid)], byCreator[i] = t, t
			}
			continue
		}
		if x.method != "tasks/get" {
			continue
		}
		if tid, ok := jsonrpc.Lookup(x.req.Params, "taskId"); ok {
			if t := byID[string(tid)]; t != nil {
				t.polls = append(t.polls, i)
				polls[i] = true
			}
		}
	}
	return byCreator, polls
}

func stringOf(raw []byte) string {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// pollState is the state a poll saw: the task's status, or "error CODE"
// for an error answer; "" for none.
func pollState(x *exchange) string {
	switch x.resp.Kind {
	case jsonrpc.KindResult:
		st, _ := jsonrpc.Lookup(x.resp.Result, "status")
		return stringOf(st)
	case jsonrpc.KindError:
		code, _ := jsonrpc.Lookup(x.resp.Error, "code")
		return "error " + string(code)
	}
	return ""
}

// states returns the distinct states t went through, as its creation
// and polls saw them, and for each poll the index in that sequence of
// the state it saw (-1 for a poll without an answer).
func (t *task) states(c *conversation) ([]string, []int) {
	seq := []string{}
	if t.status != "" {
		seq = append(seq, t.status)
	}
	at := make([]int, len(t.polls))
	for k, i := range t.polls {
		s := pollState(c.exchanges[i])
		if s == "" {
			at[k] = -1
			continue
		}
		if len(seq) == 0 || seq[len(seq)-1] != s {
			seq = append(seq, s)
		}
		at[k] = len(seq) - 1
	}
	return seq, at
}

// statusPath is where a poll's answer holds the task's state.
var statusPath = []pathSeg{{Kind: segKey, Key: "result"}, {Kind: segKey, Key: "status"}}

// compareTask compares the polls of task x of old with those of task y
// of new, and returns a RequestDiff for each poll of x, by exchange
// index. See the top of this file.
func compareTask(a, b *conversation, x, y *task, noise Noise) map[int]RequestDiff {
	out := map[int]RequestDiff{}
	if len(x.polls) == 0 {
		return out
	}
	xs, xat := x.states(a)
	ys, yat := y.states(b)
	newAt := func(k int) int64 { // the seq of the first new poll that saw state k
		for p, i := range y.polls {
			if yat[p] == k {
				return b.exchanges[i].seq
			}
		}
		return 0
	}
	blame := -1 // the old poll the states' difference is reported on
	if !slices.Equal(xs, ys) && len(y.polls) > 0 {
		d := 0
		for d < len(xs) && d < len(ys) && xs[d] == ys[d] {
			d++
		}
		blame = len(x.polls) - 1
		for p := range x.polls {
			if xat[p] >= d {
				blame = p
				break
			}
		}
		if noise.covers(a.exchanges[x.polls[blame]].scope(), statusPath) {
			blame = -1
		}
	}
	for p, i := range x.polls {
		e := a.exchanges[i]
		rd := RequestDiff{Seq: e.seq, Method: e.method, Name: e.name, Status: StatusSame}
		if xat[p] >= 0 {
			rd.NewSeq = newAt(xat[p])
		}
		switch {
		case noise.covers(e.scope(), nil):
		case p == blame:
			rd.Status = StatusChanged
			rd.Changes = []Change{{Path: "result.status", Kind: Changed, Old: statesJSON(xs), New: statesJSON(ys)}}
		case blame < 0 && p == len(x.polls)-1 && len(y.polls) > 0:
			// The states agree: the last answers are compared whole.
			last := b.exchanges[y.polls[len(y.polls)-1]]
			rd.NewSeq = last.seq
			rd.Status, rd.Reason, rd.Changes = compareExchange(e, last, noise)
		case blame < 0 && p == len(x.polls)-1:
			rd.Status, rd.Reason = StatusMissing, "the new session did not poll this task"
		}
		out[i] = rd
	}
	return out
}

// statesJSON renders a task's states for a Change: a JSON list.
func statesJSON(states []string) json.RawMessage {
	b, _ := json.Marshal(states)
	return b
}
