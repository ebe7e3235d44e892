package matrix

import (
	"encoding/json"
	"fmt"
)

// A step is one thing a client does in a scenario. Every client of the
// matrix reads the same steps (the node client gets them as JSON).
type step struct {
	// Op is "list" (tools/list) or "call" (tools/call Tool).
	Op   string         `json:"op"`
	Tool string         `json:"tool,omitempty"`
	Args map[string]any `json:"args,omitempty"`
	// Progress attaches a progress token to the call.
	Progress bool `json:"progress,omitempty"`
	// CancelAt cancels the call once a progress notification with this
	// progress value arrived for it (0: never).
	CancelAt float64 `json:"cancelAt,omitempty"`
	// WaitFor waits, once the call ended, until a progress notification
	// with this value arrived for it (or waitLimit passed: the transcript
	// says so).
	WaitFor float64 `json:"waitFor,omitempty"`
	// Script, for the Go SDK client against the Go SDK test server only,
	// runs mcptest.Script (every feature of the test server) as one step.
	Script bool `json:"script,omitempty"`
	// Task, Every and ClientTasks are the task scenarios' (tasks_test.go).
	Task        string `json:"task,omitempty"`
	Every       int    `json:"every,omitempty"`
	ClientTasks bool   `json:"clientTasks,omitempty"`
}

// name names s in a transcript.
func (s step) name() string {
	switch {
	case s.Script:
		return "mcptest.Script"
	case s.Op == "list":
		return "tools/list"
	default:
		return "tools/call " + s.Tool
	}
}

// plain reports whether s is a list or a call without progress or
// cancellation: all a one-shot client (Inspector's CLI) can do.
func (s step) plain() bool {
	return !s.Script && !s.Progress && s.CancelAt == 0 && s.WaitFor == 0
}

// A Transcript is what a client saw in a scenario, normalised: JSON values
// only, no ids, session ids or timings. P1 compares a live and a replayed
// transcript of the same client with cmp.Diff.
type Transcript struct {
	// Negotiated is the protocol revision the session settled on, where
	// the client tells.
	Negotiated string  `json:"negotiated,omitempty"`
	Steps      []Entry `json:"steps"`
	// Notes are the notifications not tied to a step's progress token
	// (logging, list changes), in arrival order.
	Notes []any `json:"notes,omitempty"`
}

// An Entry is one step as the client saw it.
type Entry struct {
	Step   string `json:"step"`
	Result any    `json:"result,omitempty"`
	Error  string `json:"error,omitempty"`
	// Progress holds the step's progress notifications ({progress, total,
	// message}) in arrival order, with the string "cancel" where the
	// client cancelled the call.
	Progress []any `json:"progress,omitempty"`
	// Wait says that a progress notification the step waited for never came.
	Wait string `json:"wait,omitempty"`
}

// jsonValue returns v as generic JSON values.
func jsonValue(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("!json: %v", err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return fmt.Sprintf("!json: %v", err)
	}
	return out
}

func itoa(n int) string { return fmt.Sprint(n) }
