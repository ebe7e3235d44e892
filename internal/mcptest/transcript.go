package mcptest

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// A Transcript is what a client saw during one [Script] run. It holds only
// values the server returns deterministically (no session ids, request ids
// or timings), decoded from JSON, so two runs against the same server, live
// or replayed, give transcripts that cmp.Diff reports as equal.
type Transcript struct {
	// Requested is the protocol version the client asked for, as [Run]
	// records it; [Script] leaves it empty.
	Requested string `json:"requested"`
	// Negotiated is the version the session runs at: the initialize
	// result's, or for 2026-07-28 the one discover settled on.
	Negotiated string `json:"negotiated"`
	// Steps are the script's steps, in order.
	Steps []Step `json:"steps"`
}

// A Step is one exchange of a [Script].
type Step struct {
	// Name names the step, e.g. "tools/list" or "tools/call progress".
	Name string `json:"name"`
	// Skipped, if not empty, says why the step was not run at this version.
	Skipped string `json:"skipped,omitempty"`
	// Result is the JSON-decoded result, if the request succeeded.
	Result any `json:"result,omitempty"`
	// Error is the request's error, if it failed.
	Error *StepError `json:"error,omitempty"`
	// Notifications are the progress and logging notifications received
	// during the step, in arrival order.
	Notifications []Notification `json:"notifications,omitempty"`
}

// A StepError is a failed request as a [Step] records it.
type StepError struct {
	// Code is the JSON-RPC error code, or 0 if the error did not come
	// from the peer.
	Code int64 `json:"code,omitempty"`
	// Message is the JSON-RPC error message, or the local error's text.
	Message string `json:"message"`
	// Cancelled is set when the call was cancelled by its context.
	Cancelled bool `json:"cancelled,omitempty"`
}

// A Notification is a server notification as a [Step] records it.
type Notification struct {
	// Method is the notification method, e.g. "notifications/progress".
	Method string `json:"method"`
	// Params are the JSON-decoded params.
	Params any `json:"params,omitempty"`
}

// Step returns the first step named name, and whether there is one.
func (t Transcript) Step(name string) (Step, bool) {
	for _, s := range t.Steps {
		if s.Name == name {
			return s, true
		}
	}
	return Step{}, false
}

// stepError converts err into a StepError.
func stepError(err error, cancelled bool) *StepError {
	var werr *jsonrpc.Error
	if errors.As(err, &werr) {
		return &StepError{Code: werr.Code, Message: werr.Message, Cancelled: cancelled}
	}
	return &StepError{Message: err.Error(), Cancelled: cancelled}
}

// jsonValue returns v as generic JSON (maps, slices, strings, float64s,
// bools and nils), so that transcripts compare by value. A value that
// cannot be encoded is recorded as a string saying so.
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
