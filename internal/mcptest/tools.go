package mcptest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Keys of the input requests the multi round-trip tools ask for.
const (
	sampleKey = "sample"
	elicitKey = "elicit"
	rootsKey  = "roots"
)

// LogLevels are the levels tool log emits, in order, one message each.
var LogLevels = []mcp.LoggingLevel{"debug", "info", "notice", "warning", "error"}

type echoArgs struct {
	Text string `json:"text" jsonschema:"the text to echo back"`
}

type addArgs struct {
	A float64 `json:"a" jsonschema:"the first addend"`
	B float64 `json:"b" jsonschema:"the second addend"`
}

type addArgsV2 struct {
	A float64 `json:"a" jsonschema:"the first addend"`
	B float64 `json:"b" jsonschema:"the second addend"`
	C float64 `json:"c,omitempty" jsonschema:"an optional third addend"`
}

type sumResult struct {
	Sum float64 `json:"sum"`
}

type multiplyArgs struct {
	A float64 `json:"a" jsonschema:"the first factor"`
	B float64 `json:"b" jsonschema:"the second factor"`
}

type productResult struct {
	Product float64 `json:"product"`
}

type infoResult struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

type progressArgs struct {
	Steps int `json:"steps,omitempty" jsonschema:"how many progress notifications to send (default 3, at most 100)"`
}

type sampleArgs struct {
	Prompt string `json:"prompt,omitempty" jsonschema:"what to ask the client's model"`
}

type sampleResult struct {
	Model string `json:"model"`
	Text  string `json:"text"`
}

type elicitResult struct {
	Action  string         `json:"action"`
	Content map[string]any `json:"content,omitempty"`
}

type rootsResult struct {
	URIs []string `json:"uris"`
}

type noArgs struct{}

func addTools(s *mcp.Server, variant string, slowLimit time.Duration, closeStreams bool) {
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes its text argument."}, echo)
	if variant == V2 {
		mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "Adds a and b."}, addV2)
		mcp.AddTool(s, &mcp.Tool{Name: "multiply", Description: "Multiplies a by b."}, multiply)
	} else {
		mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "Adds a and b."}, add)
	}
	mcp.AddTool(s, &mcp.Tool{Name: "info", Description: "Reports the server's name and version."}, info(variant))
	mcp.AddTool(s, &mcp.Tool{Name: "progress", Description: "Sends progress notifications for the request's progress token."}, progress)
	mcp.AddTool(s, &mcp.Tool{Name: "log", Description: "Sends one log message per level, then a progress notification \"logged\"."}, logTool)
	mcp.AddTool(s, &mcp.Tool{Name: "sample", Description: "Asks the client's model to complete a prompt."}, sample)
	mcp.AddTool(s, &mcp.Tool{Name: "elicit", Description: "Asks the user for a name."}, elicit)
	mcp.AddTool(s, &mcp.Tool{Name: "roots", Description: "Lists the client's roots."}, roots)
	mcp.AddTool(s, &mcp.Tool{Name: "slow", Description: "Sends progress \"started\", then blocks until cancelled."}, slow(slowLimit))
	mcp.AddTool(s, &mcp.Tool{Name: "fail", Description: "Always fails with an error result."}, fail)
	mcp.AddTool(s, &mcp.Tool{Name: "reconnect", Description: "Sends progress \"before\", may close its SSE stream asking the client to resume, then sends \"after\" and returns."}, reconnect(closeStreams))
}

// addStubborn adds the tools of the cancellation tests (ServerConfig.Stubborn).
func addStubborn(s *mcp.Server, slowLimit time.Duration) {
	mcp.AddTool(s, &mcp.Tool{Name: "stubborn", Description: "Sends progress \"started\", waits until cancelled, then sends progress \"after cancel\" and answers anyway."}, stubborn(slowLimit))
	mcp.AddTool(s, &mcp.Tool{Name: "abandon", Description: "Asks the user for a name, gives up after a moment (cancelling its request) and answers \"abandoned\"."}, abandon)
}

// addAnnotated replaces tool info with one annotated read-only and adds
// tool forget, annotated destructive, which does nothing and says so.
func addAnnotated(s *mcp.Server, variant string) {
	destructive := true
	mcp.AddTool(s, &mcp.Tool{Name: "info", Description: "Reports the server's name and version.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, info(variant))
	mcp.AddTool(s, &mcp.Tool{Name: "forget", Description: "Would forget everything: a destructive tool that does nothing.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: &destructive}}, forget)
}

// forget is the destructive tool of addAnnotated.
func forget(context.Context, *mcp.CallToolRequest, noArgs) (*mcp.CallToolResult, any, error) {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "forgot nothing"}}}, nil, nil
}

// reconnect sends progress "before", then (when closeStreams is set and
// the transport allows it) closes the request's SSE stream with a short
// retry interval, sends progress "after" and returns. The client sees the
// same notifications and result either way; over HTTP with an event store
// it gets "after" and the result by resuming with Last-Event-ID.
func reconnect(closeStreams bool) mcp.ToolHandlerFor[noArgs, any] {
	return func(ctx context.Context, req *mcp.CallToolRequest, _ noArgs) (*mcp.CallToolResult, any, error) {
		notify := func(n float64, msg string) error {
			token := req.Params.GetProgressToken()
			if token == nil {
				return nil
			}
			return req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: n, Total: 2, Message: msg})
		}
		if err := notify(1, "before"); err != nil {
			return nil, nil, fmt.Errorf("notify progress: %w", err)
		}
		if closeStreams && req.Extra != nil && req.Extra.CloseSSEStream != nil {
			req.Extra.CloseSSEStream(mcp.CloseSSEStreamArgs{RetryAfter: 10 * time.Millisecond})
		}
		if err := notify(2, "after"); err != nil {
			return nil, nil, fmt.Errorf("notify progress: %w", err)
		}
		return text("reconnected"), nil, nil
	}
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func echo(_ context.Context, _ *mcp.CallToolRequest, in echoArgs) (*mcp.CallToolResult, any, error) {
	return text(in.Text), nil, nil
}

func add(_ context.Context, _ *mcp.CallToolRequest, in addArgs) (*mcp.CallToolResult, sumResult, error) {
	return nil, sumResult{Sum: in.A + in.B}, nil
}

func addV2(_ context.Context, _ *mcp.CallToolRequest, in addArgsV2) (*mcp.CallToolResult, sumResult, error) {
	return nil, sumResult{Sum: in.A + in.B + in.C}, nil
}

func multiply(_ context.Context, _ *mcp.CallToolRequest, in multiplyArgs) (*mcp.CallToolResult, productResult, error) {
	return nil, productResult{Product: in.A * in.B}, nil
}

func info(variant string) mcp.ToolHandlerFor[noArgs, infoResult] {
	version := "1.0.0"
	if variant == V2 {
		version = "2.0.0"
	}
	return func(context.Context, *mcp.CallToolRequest, noArgs) (*mcp.CallToolResult, infoResult, error) {
		return nil, infoResult{Name: ServerName, Version: version}, nil
	}
}

func progress(ctx context.Context, req *mcp.CallToolRequest, in progressArgs) (*mcp.CallToolResult, any, error) {
	n := in.Steps
	if n <= 0 {
		n = 3
	}
	if n > 100 {
		return nil, nil, fmt.Errorf("steps = %d, want at most 100", n)
	}
	token := req.Params.GetProgressToken()
	if token == nil {
		return text(fmt.Sprintf("completed %d steps without a progress token", n)), nil, nil
	}
	for i := 1; i <= n; i++ {
		err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
			ProgressToken: token,
			Progress:      float64(i),
			Total:         float64(n),
			Message:       fmt.Sprintf("step %d of %d", i, n),
		})
		if err != nil {
			return nil, nil, fmt.Errorf("notify progress %d: %w", i, err)
		}
	}
	return text(fmt.Sprintf("completed %d steps", n)), nil, nil
}

// logTool sends one notifications/message per level; the session's (or, in
// 2026-07-28, the request's) log level filters them. A final progress
// notification "logged" tells a client that all of them were sent.
func logTool(ctx context.Context, req *mcp.CallToolRequest, _ noArgs) (*mcp.CallToolResult, any, error) {
	for i, level := range LogLevels {
		err := req.Session.Log(ctx, &mcp.LoggingMessageParams{
			Level:  level,
			Logger: ServerName,
			Data:   map[string]any{"seq": i + 1, "message": fmt.Sprintf("log message at level %s", level)},
		})
		if err != nil {
			return nil, nil, fmt.Errorf("log at %s: %w", level, err)
		}
	}
	if token := req.Params.GetProgressToken(); token != nil {
		err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
			ProgressToken: token, Progress: 1, Total: 1, Message: "logged",
		})
		if err != nil {
			return nil, nil, fmt.Errorf("notify progress: %w", err)
		}
	}
	return text(fmt.Sprintf("logged at %d levels", len(LogLevels))), nil, nil
}

// sample, elicit and roots are written as multi round-trip (MRTR) handlers:
// the first call returns input requests, the retry carries the responses.
// For a 2026-07-28 client the SDK puts the input requests on the wire
// (resultType "input_required"); for older clients its server middleware
// sends them as server-to-client requests and calls the handler again.

func sample(_ context.Context, req *mcp.CallToolRequest, in sampleArgs) (*mcp.CallToolResult, sampleResult, error) {
	prompt := in.Prompt
	if prompt == "" {
		prompt = "Say hello."
	}
	switch r := req.Params.InputResponses[sampleKey].(type) {
	case *mcp.CreateMessageWithToolsResult:
		return nil, sampleResult{Model: r.Model, Text: joinText(r.Content...)}, nil
	case *mcp.CreateMessageResult:
		return nil, sampleResult{Model: r.Model, Text: joinText(r.Content)}, nil
	}
	return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{
		sampleKey: &mcp.CreateMessageParams{
			Messages:  []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: prompt}}},
			MaxTokens: 64,
		},
	}}, sampleResult{}, nil
}

// ElicitSchema is the schema tool elicit requests: a flat object with a
// required string "name".
var ElicitSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"name": map[string]any{"type": "string", "description": "Your name."},
	},
	"required": []any{"name"},
}

func elicit(_ context.Context, req *mcp.CallToolRequest, _ noArgs) (*mcp.CallToolResult, elicitResult, error) {
	if r, ok := req.Params.InputResponses[elicitKey].(*mcp.ElicitResult); ok {
		return nil, elicitResult{Action: r.Action, Content: r.Content}, nil
	}
	return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{
		elicitKey: &mcp.ElicitParams{Message: "What is your name?", RequestedSchema: ElicitSchema},
	}}, elicitResult{}, nil
}

func roots(_ context.Context, req *mcp.CallToolRequest, _ noArgs) (*mcp.CallToolResult, rootsResult, error) {
	if r, ok := req.Params.InputResponses[rootsKey].(*mcp.ListRootsResult); ok {
		uris := []string{}
		for _, root := range r.Roots {
			uris = append(uris, root.URI)
		}
		return nil, rootsResult{URIs: uris}, nil
	}
	return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{
		rootsKey: &mcp.ListRootsParams{},
	}}, rootsResult{}, nil
}

// errSlowLimit is returned by tool slow when nothing cancelled it in time.
var errSlowLimit = errors.New("slow: not cancelled within its limit")

func slow(limit time.Duration) mcp.ToolHandlerFor[noArgs, any] {
	return func(ctx context.Context, req *mcp.CallToolRequest, _ noArgs) (*mcp.CallToolResult, any, error) {
		if token := req.Params.GetProgressToken(); token != nil {
			err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
				ProgressToken: token, Progress: 1, Message: "started",
			})
			if err != nil {
				return nil, nil, fmt.Errorf("notify progress: %w", err)
			}
		}
		t := time.NewTimer(limit)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return nil, nil, fmt.Errorf("slow: %w", context.Cause(ctx))
		case <-t.C:
			return nil, nil, errSlowLimit
		}
	}
}

// AbandonMessage is the message of tool abandon's elicitation, which
// the server cancels itself after [AbandonAfter].
const AbandonMessage = "What is your name? (this question will be withdrawn)"

// AbandonAfter is how long tool abandon waits for the client's answer.
const AbandonAfter = 100 * time.Millisecond

// abandon asks the client for a name (elicitation/create) and cancels
// that request when no answer came within [AbandonAfter]: the server
// sends notifications/cancelled for it, and the client's answer, if one
// comes, comes late. It answers "abandoned" (or "answered" when the client
// was in time).
func abandon(ctx context.Context, req *mcp.CallToolRequest, _ noArgs) (*mcp.CallToolResult, any, error) {
	ectx, cancel := context.WithTimeout(ctx, AbandonAfter)
	defer cancel()
	if _, err := req.Session.Elicit(ectx, &mcp.ElicitParams{Message: AbandonMessage, RequestedSchema: ElicitSchema}); err == nil {
		return text("answered"), nil, nil
	}
	return text("abandoned"), nil, nil
}

// StubbornResult is the text of tool stubborn's late answer.
const StubbornResult = "finished anyway"

type stubbornArgs struct {
	Fail bool `json:"fail,omitempty" jsonschema:"answer with an error instead of a result"`
}

// errStubborn is tool stubborn's late error, with argument fail.
var errStubborn = errors.New("stubborn: failed after its cancellation")

// stubborn ignores its cancellation as a server may: it sends progress 1
// "started", waits until the call is cancelled (at most limit), then sends
// progress 2 "after cancel" and answers with [StubbornResult] (or, with
// argument fail, an error), a late answer the client no longer waits for.
func stubborn(limit time.Duration) mcp.ToolHandlerFor[stubbornArgs, any] {
	return func(ctx context.Context, req *mcp.CallToolRequest, in stubbornArgs) (*mcp.CallToolResult, any, error) {
		token := req.Params.GetProgressToken()
		notify := func(ctx context.Context, n float64, msg string) error {
			if token == nil {
				return nil
			}
			return req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: n, Message: msg})
		}
		if err := notify(ctx, 1, "started"); err != nil {
			return nil, nil, fmt.Errorf("notify progress: %w", err)
		}
		t := time.NewTimer(limit)
		defer t.Stop()
		select {
		case <-ctx.Done():
		case <-t.C:
			return nil, nil, errSlowLimit
		}
		if err := notify(context.WithoutCancel(ctx), 2, "after cancel"); err != nil {
			return nil, nil, fmt.Errorf("notify progress: %w", err)
		}
		if in.Fail {
			return nil, nil, errStubborn
		}
		return text(StubbornResult), nil, nil
	}
}

func fail(context.Context, *mcp.CallToolRequest, noArgs) (*mcp.CallToolResult, any, error) {
	res := text("fail: this tool always fails")
	res.IsError = true
	return res, nil, nil
}

func joinText(cs ...mcp.Content) string {
	var s string
	for _, c := range cs {
		if t, ok := c.(*mcp.TextContent); ok {
			s += t.Text
		}
	}
	return s
}

type pairArgs struct {
	N int `json:"n" jsonschema:"which call of the pair this is"`
}

// pair is tool pair (ServerConfig.Paired): the first call waits for a
// second one (at most limit), the second answers at once and the first
// right after it, so two concurrent calls are answered side by side,
// nothing of the session between them.
func pair(limit time.Duration) mcp.ToolHandlerFor[pairArgs, any] {
	var mu sync.Mutex
	var waiting chan struct{} // closed when the second call comes
	return func(ctx context.Context, _ *mcp.CallToolRequest, in pairArgs) (*mcp.CallToolResult, any, error) {
		mu.Lock()
		if c := waiting; c != nil {
			waiting = nil
			mu.Unlock()
			close(c)
			return text(fmt.Sprintf("pair %d", in.N)), nil, nil
		}
		c := make(chan struct{})
		waiting = c
		mu.Unlock()
		timer := time.NewTimer(limit)
		defer timer.Stop()
		select {
		case <-c:
			return text(fmt.Sprintf("pair %d", in.N)), nil, nil
		case <-ctx.Done():
		case <-timer.C:
		}
		mu.Lock()
		if waiting == c {
			waiting = nil
		}
		mu.Unlock()
		return nil, nil, errors.New("pair: no second call came")
	}
}
