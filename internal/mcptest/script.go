package mcptest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Progress tokens the script attaches to its requests.
const (
	progressToken  = "progress-1"
	logToken       = "log-1"
	slowToken      = "slow-1"
	reconnectToken = "reconnect-1"
)

// Script runs every feature of the test server (see [NewServer]) once on
// cs, a session of a client from [NewClient], and returns what it saw.
//
// It calls, in order: tools/list; tools echo, add, info; tool progress with
// a progress token (waiting for the final notification); logging/setLevel
// debug (legacy only: 2026-07-28 sends the level in the log call's _meta
// instead) and tool log (waiting for its "logged" progress notification);
// tool slow, cancelled once its "started" progress notification arrived;
// resources/list, resources/read of the static resource and of item 42,
// resources/templates/list; prompts/list, prompts/get greet; tools
// sample, elicit (skipped before 2025-06-18), roots and fail; and tool
// reconnect with a progress token (waiting for its "after" notification),
// whose stream an HTTP server with an event store closes mid-call.
//
// A request that fails is recorded in its step, and so is a slow call that
// ends otherwise than by its cancellation. Script returns an error only when
// a notification it waits for does not arrive before ctx is done, so bound
// ctx. The transcript's Requested is left empty. Script must not run twice
// at once on the same session.
func Script(ctx context.Context, cs *mcp.ClientSession) (Transcript, error) {
	in, stop := watch(cs)
	defer stop()
	r := &scriptRun{cs: cs, in: in}
	if res := cs.InitializeResult(); res != nil {
		r.t.Negotiated = res.ProtocolVersion
		name := "initialize"
		if Modern(res.ProtocolVersion) {
			name = "server/discover"
		}
		r.t.Steps = append(r.t.Steps, Step{Name: name, Result: jsonValue(res)})
	}
	modern := Modern(r.t.Negotiated)

	r.do("tools/list", func() (any, error) { return cs.ListTools(ctx, nil) })
	r.call(ctx, "echo", map[string]any{"text": "hello"}, nil)
	r.call(ctx, "add", map[string]any{"a": 2, "b": 3}, nil)
	r.call(ctx, "info", nil, nil)

	r.call(ctx, "progress", map[string]any{"steps": 3}, mcp.Meta{"progressToken": progressToken})
	if err := r.await(ctx, progressToken, isFinal); err != nil {
		return r.t, fmt.Errorf("tools/call progress: wait for final progress: %w", err)
	}

	logMeta := mcp.Meta{"progressToken": logToken}
	if modern {
		r.skip("logging/setLevel", "2026-07-28 has no logging/setLevel: the log call carries _meta "+mcp.MetaKeyLogLevel)
		logMeta[mcp.MetaKeyLogLevel] = "debug"
	} else {
		r.do("logging/setLevel", func() (any, error) {
			return map[string]any{}, cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"})
		})
	}
	r.call(ctx, "log", nil, logMeta)
	if err := r.await(ctx, logToken, hasMessage("logged")); err != nil {
		return r.t, fmt.Errorf("tools/call log: wait for progress \"logged\": %w", err)
	}

	// Cancel before the remaining steps: the SDK sends notifications/cancelled
	// from a goroutine of its own after the call returns, and a Close right
	// after the cancellation could beat it.
	if err := r.cancel(ctx); err != nil {
		return r.t, fmt.Errorf("tools/call slow: %w", err)
	}

	r.do("resources/list", func() (any, error) { return cs.ListResources(ctx, nil) })
	r.do("resources/read", func() (any, error) {
		return cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: StaticURI})
	})
	r.do("resources/read item", func() (any, error) {
		return cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://items/42"})
	})
	r.do("resources/templates/list", func() (any, error) { return cs.ListResourceTemplates(ctx, nil) })
	r.do("prompts/list", func() (any, error) { return cs.ListPrompts(ctx, nil) })
	r.do("prompts/get", func() (any, error) {
		return cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greet", Arguments: map[string]string{"name": "Ada"}})
	})

	r.call(ctx, "sample", map[string]any{"prompt": "Say hello."}, nil)
	if r.t.Negotiated < V20250618 {
		r.skip("tools/call elicit", "elicitation/create exists from 2025-06-18")
	} else {
		r.call(ctx, "elicit", nil, nil)
	}
	r.call(ctx, "roots", nil, nil)
	r.call(ctx, "fail", nil, nil)

	r.call(ctx, "reconnect", nil, mcp.Meta{"progressToken": reconnectToken})
	if err := r.await(ctx, reconnectToken, hasMessage("after")); err != nil {
		return r.t, fmt.Errorf("tools/call reconnect: wait for progress \"after\": %w", err)
	}
	return r.t, nil
}

// Run connects a client from [NewClient] over transport, asking for protocol
// version (empty means the SDK's latest), runs [Script], closes the session
// and returns the transcript. It fails tb if connecting, the script or
// closing fails.
func Run(ctx context.Context, tb testing.TB, transport mcp.Transport, version string) Transcript {
	tb.Helper()
	cs, err := NewClient().Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		tb.Fatalf("connect at %s: %v", version, err)
	}
	t, err := Script(ctx, cs)
	t.Requested = version
	if err != nil {
		cs.Close()
		tb.Fatalf("script at %s: %v", version, err)
	}
	if err := cs.Close(); err != nil {
		tb.Fatalf("close session at %s: %v", version, err)
	}
	return t
}

// A scriptRun accumulates a transcript.
type scriptRun struct {
	cs *mcp.ClientSession
	in *inbox
	t  Transcript
	// lastStart is the inbox index at which the last step began.
	lastStart int
}

// do runs one request and records it with the notifications that arrived
// meanwhile.
func (r *scriptRun) do(name string, f func() (any, error)) {
	start := r.in.len()
	r.lastStart = start
	res, err := f()
	s := Step{Name: name}
	if err != nil {
		s.Error = stepError(err, false)
	} else {
		s.Result = jsonValue(res)
	}
	s.Notifications = r.in.since(start)
	r.t.Steps = append(r.t.Steps, s)
}

func (r *scriptRun) skip(name, why string) {
	r.t.Steps = append(r.t.Steps, Step{Name: name, Skipped: why})
}

// call runs tools/call name.
func (r *scriptRun) call(ctx context.Context, name string, args map[string]any, meta mcp.Meta) {
	r.do("tools/call "+name, func() (any, error) {
		if args == nil {
			args = map[string]any{}
		}
		return r.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args, Meta: meta})
	})
}

// await waits until a progress notification for token satisfies ok, then
// records in the last step all notifications that arrived since it began.
// It does not wait after a failed call, which may have sent nothing.
func (r *scriptRun) await(ctx context.Context, token string, ok func(map[string]any) bool) error {
	last := &r.t.Steps[len(r.t.Steps)-1]
	if res, _ := last.Result.(map[string]any); last.Error != nil || res["isError"] == true {
		return nil
	}
	start := r.lastStart
	err := r.in.wait(ctx, start, func(n Notification) bool {
		p, _ := n.Params.(map[string]any)
		return n.Method == "notifications/progress" && p["progressToken"] == token && ok(p)
	})
	last.Notifications = r.in.since(start)
	return err
}

func isFinal(p map[string]any) bool {
	total, ok := p["total"].(float64)
	return ok && p["progress"] == total
}

func hasMessage(msg string) func(map[string]any) bool {
	return func(p map[string]any) bool { return p["message"] == msg }
}

// cancel calls tool slow, waits for its "started" progress notification,
// cancels the call and records how it ended.
func (r *scriptRun) cancel(ctx context.Context) error {
	start := r.in.len()
	callCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	type outcome struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := r.cs.CallTool(callCtx, &mcp.CallToolParams{
			Name: "slow", Arguments: map[string]any{}, Meta: mcp.Meta{"progressToken": slowToken},
		})
		done <- outcome{res, err}
	}()
	err := r.in.wait(ctx, start, func(n Notification) bool {
		p, _ := n.Params.(map[string]any)
		return n.Method == "notifications/progress" && p["progressToken"] == slowToken && p["message"] == "started"
	})
	cancel()
	o := <-done
	if err != nil {
		return fmt.Errorf("wait for progress \"started\": %w", err)
	}
	s := Step{Name: "tools/call slow", Notifications: r.in.since(start)}
	switch {
	case o.err != nil:
		s.Error = stepError(o.err, errors.Is(o.err, context.Canceled))
	default:
		s.Result = jsonValue(o.res)
	}
	r.t.Steps = append(r.t.Steps, s)
	return nil
}
