package mcptest

import (
	"context"
	"errors"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// chaosCall is one step of a chaos client run.
type chaosCall struct {
	name string
	args map[string]any
	meta mcp.Meta
}

// chaosScripts are the client runs of the chaos tests: "script", the
// steps of [Script] that need no waiting (tools, resources, prompts,
// sampling, elicitation, roots, a failing tool) and the slow call it
// cancels once its "started" progress came, and "run0", run 0 of the
// multi-session cassettes (echo "run 0"), "reorder", "confusion" and
// "asks" (see there).
var chaosScripts = map[string][]chaosCall{
	"script": {
		{"echo", map[string]any{"text": "hello"}, nil},
		{"add", map[string]any{"a": 2, "b": 3}, nil},
		{"info", map[string]any{}, nil},
		{"progress", map[string]any{"steps": 3}, mcp.Meta{"progressToken": progressToken}},
		{"logging/setLevel", nil, nil},
		{"log", map[string]any{}, mcp.Meta{"progressToken": logToken}},
		{"slow", nil, nil},
		{"resources/list", nil, nil},
		{"resources/read", map[string]any{"uri": StaticURI}, nil},
		{"resources/read", map[string]any{"uri": "test://items/42"}, nil},
		{"resources/templates/list", nil, nil},
		{"prompts/list", nil, nil},
		{"prompts/get", nil, nil},
		{"sample", map[string]any{"prompt": "Say hello."}, nil},
		{"elicit", map[string]any{}, nil},
		{"roots", map[string]any{}, nil},
		{"fail", map[string]any{}, nil},
	},
	"run0": {{"echo", map[string]any{"text": "run 0"}, nil}},
	// "confusion": the calls of the chaos package's confusion matrix,
	// none of which asks the client anything (a raw client replays
	// them one POST at a time): streams with several events (progress,
	// log), a level set, a call it cancels (slow) and one after it.
	"confusion": {
		{"echo", map[string]any{"text": "hello"}, nil},
		{"progress", map[string]any{"steps": 3}, mcp.Meta{"progressToken": progressToken}},
		{"logging/setLevel", nil, nil},
		{"log", map[string]any{}, mcp.Meta{"progressToken": logToken}},
		{"slow", nil, nil},
		{"add", map[string]any{"a": 2, "b": 3}, nil},
	},
	// "asks": a call the server answers only once the client answered
	// its request (roots/list, on the call's stream), and one after it.
	"asks": {
		{"roots", map[string]any{}, nil},
		{"echo", map[string]any{"text": "after"}, nil},
	},
	// "reorder": tool notify of ReorderHandler, between a level set and
	// an echo (the request after the reorder).
	"reorder": {
		{"logging/setLevel", nil, nil},
		{"notify", map[string]any{}, mcp.Meta{"progressToken": progressToken}},
		{"echo", map[string]any{"text": "after"}, nil},
	},
	// "pair": two calls of tool pair at once (ServerConfig.Paired), whose
	// responses come side by side on two streams (or one after the other
	// over stdio), and an echo after them.
	"pair": {
		{"pair", nil, nil},
		{"echo", map[string]any{"text": "after"}, nil},
	},
}

// ChaosScript reports whether name is a chaos script ChaosRun knows.
func ChaosScript(name string) bool { _, ok := chaosScripts[name]; return ok }

// ChaosRun is a Go SDK client under chaos replay: it connects over
// transport as info at 2025-11-25, lists the tools, runs the chaos
// script named script (see chaosScripts) and closes, each step's
// failure part of what it saw, which it returns one line per step. It
// gives up after 20 seconds.
func ChaosRun(ctx context.Context, transport mcp.Transport, info *mcp.Implementation, script string) []string {
	return ChaosRunAt(ctx, transport, info, script, V20251125)
}

// ChaosRunAt is ChaosRun at protocol revision version (2026-07-28, say).
func ChaosRunAt(ctx context.Context, transport mcp.Transport, info *mcp.Implementation, script, version string) []string {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	cs, err := NewClientAs(info).Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		return []string{"connect: " + err.Error()}
	}
	in, stop := watch(cs)
	defer stop()
	out := []string{"connected"}
	note := func(step string, err error) {
		if err != nil {
			out = append(out, step+": "+err.Error())
			return
		}
		out = append(out, step+": ok")
	}
	_, err = cs.ListTools(ctx, nil)
	note("tools/list", err)
	for _, c := range chaosScripts[script] {
		var err error
		switch c.name {
		case "slow":
			// Cancelled once its "started" progress came; a fault may
			// lose that progress: wait for it 5 seconds at most.
			sctx, scancel := context.WithTimeout(ctx, 5*time.Second)
			r := &scriptRun{cs: cs, in: in}
			err = r.cancel(sctx)
			scancel()
		case "pair":
			errs := make(chan error, 2)
			for n := range 2 {
				go func() {
					_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "pair", Arguments: map[string]any{"n": n + 1}})
					errs <- err
				}()
			}
			err = errors.Join(<-errs, <-errs)
		case "logging/setLevel":
			err = cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"})
		case "resources/list":
			_, err = cs.ListResources(ctx, nil)
		case "resources/read":
			_, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: c.args["uri"].(string)})
		case "resources/templates/list":
			_, err = cs.ListResourceTemplates(ctx, nil)
		case "prompts/list":
			_, err = cs.ListPrompts(ctx, nil)
		case "prompts/get":
			_, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greet", Arguments: map[string]string{"name": "Ada"}})
		default:
			p := &mcp.CallToolParams{Name: c.name, Arguments: c.args}
			if c.meta != nil {
				p.SetMeta(c.meta)
			}
			_, err = cs.CallTool(ctx, p)
		}
		note(c.name, err)
	}
	note("close", cs.Close())
	return out
}
