package diff

import (
	"fmt"
	"slices"
	"testing"
)

// taskSession is a session whose client creates a task (task id tid),
// polls it once per status in polls, and fetches its result text.
func taskSession(tid string, polls []string, result string) []string {
	lines := []string{initReq, initResp, inited,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"research","arguments":{},"task":{"ttl":60000}}}`,
		fmt.Sprintf(`< {"jsonrpc":"2.0","id":2,"result":{"task":{"taskId":%q,"status":"working","createdAt":"2026-01-01T00:00:00Z","ttl":60000}}}`, tid),
	}
	id := 3
	for _, st := range polls {
		msg := "busy"
		if st != "working" {
			msg = "done"
		}
		lines = append(lines,
			fmt.Sprintf(`> {"jsonrpc":"2.0","id":%d,"method":"tasks/get","params":{"taskId":%q}}`, id, tid),
			fmt.Sprintf(`< {"jsonrpc":"2.0","id":%d,"result":{"taskId":%q,"status":%q,"statusMessage":%q,"ttl":60000}}`, id, tid, st, msg))
		id++
	}
	return append(lines,
		fmt.Sprintf(`> {"jsonrpc":"2.0","id":%d,"method":"tasks/result","params":{"taskId":%q}}`, id, tid),
		fmt.Sprintf(`< {"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":%q}]}}`, id, result))
}

// TestCompare_TaskPolls: a task's polls are compared as the sequence of
// states they saw, and the last answer: more or fewer polls of the same
// state are no difference, nor are the task ids; another state or
// terminal state, a last answer or a result that differs is.
func TestCompare_TaskPolls(t *testing.T) {
	old := lineRecording(t, 1, taskSession("t-1", []string{"working", "working", "working", "completed"}, "report")...)
	tests := []struct {
		name  string
		polls []string
		tid   string
		text  string
		want  []string
	}{
		{"same", []string{"working", "working", "working", "completed"}, "t-2", "report", nil},
		{"fewer polls", []string{"working", "completed"}, "t-2", "report", nil},
		{"more polls", []string{"working", "working", "working", "working", "working", "working", "completed", "completed"}, "t-9", "report", nil},
		{"no working poll", []string{"completed"}, "t-2", "report", nil},
		{"failed", []string{"working", "failed"}, "t-2", "report",
			[]string{"tasks/get (seq 12) result.status changed"}},
		{"input_required", []string{"working", "input_required", "working", "completed"}, "t-2", "report",
			[]string{"tasks/get (seq 12) result.status changed"}},
		{"result", []string{"working", "completed"}, "t-2", "other",
			[]string{"tasks/result (seq 14) result.content[0].text changed"}},
		{"never polled", nil, "t-2", "report",
			[]string{"tasks/get (seq 12) missing"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Compare(old, lineRecording(t, 2, taskSession(tt.tid, tt.polls, tt.text)...), Noise{})
			if got := changesOf(r); !slices.Equal(got, tt.want) {
				t.Errorf("changes = %q; want %q", got, tt.want)
			}
			if len(r.Requests) != 7 {
				t.Errorf("%d requests reported; want the 7 of the old session", len(r.Requests))
			}
		})
	}
}
