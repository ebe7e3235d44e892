package matrix

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
)

// waitLimit bounds how long a client waits for a progress notification
// a step waits for (one a server that honours a cancellation never sends).
const waitLimit = 5 * time.Second

// Answers of the matrix clients to server requests. With alt (P5), the
// client answers otherwise.
const (
	sampleModel  = "matrix-model"
	samplePrefix = "sampled: "
	altPrefix    = "otherwise: "
	elicitName   = "matrix-user"
	altName      = "someone-else"
)

// roots are the roots every matrix client reports; altRoots those a
// client answering otherwise (P5) reports.
var (
	roots = []*mcp.Root{
		{URI: "file:///matrix/alpha", Name: "alpha"},
		{URI: "file:///matrix/beta", Name: "beta"},
	}
	altRoots = []*mcp.Root{{URI: "file:///matrix/gamma", Name: "gamma"}}
)

// progressLog collects the notifications of one session.
type progressLog struct {
	mu       sync.Mutex // guards the fields below
	progress map[string][]any
	notes    []any
	changed  chan struct{}
}

func newProgressLog() *progressLog {
	return &progressLog{progress: map[string][]any{}, changed: make(chan struct{})}
}

func (l *progressLog) add(token string, v any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if token == "" {
		l.notes = append(l.notes, v)
	} else {
		l.progress[token] = append(l.progress[token], v)
	}
	close(l.changed)
	l.changed = make(chan struct{})
}

func (l *progressLog) of(token string) []any {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]any(nil), l.progress[token]...)
}

// wait blocks until a progress notification of token with progress value
// arrived, or ctx is done.
func (l *progressLog) wait(ctx context.Context, token string, value float64) error {
	for {
		l.mu.Lock()
		for _, p := range l.progress[token] {
			if m, ok := p.(map[string]any); ok && m["progress"] == value {
				l.mu.Unlock()
				return nil
			}
		}
		changed := l.changed
		l.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// waitNotes blocks until n notes arrived, or ctx is done.
func (l *progressLog) waitNotes(ctx context.Context, n int) error {
	for {
		l.mu.Lock()
		got, changed := len(l.notes), l.changed
		l.mu.Unlock()
		if got >= n {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// goClient is the Go SDK client (v1.8.0, the module's) in this process.
func goClient(t *testing.T, ep endpoint, c call) run {
	t.Helper()
	out, err := goSession(ep, c)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// goSession runs c's plan on a session of the Go SDK client over ep.
func goSession(ep endpoint, c call) (run, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	log := newProgressLog()
	prefix, name := samplePrefix, elicitName
	if c.alt {
		prefix, name = altPrefix, altName
	}
	// The client is mcptest's, so that mcptest.Script (the script
	// scenario) sees the notifications it waits for; its handlers are
	// the matrix's, each passing notifications on to mcptest's first.
	client := mcptest.NewClientWith(&mcp.Implementation{Name: c.info, Version: "1.0.0"}, func(o *mcp.ClientOptions) {
		scriptProgress, scriptLog := o.ProgressNotificationHandler, o.LoggingMessageHandler
		*o = mcp.ClientOptions{
			CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
				var prompt string
				for _, m := range req.Params.Messages {
					if tc, ok := m.Content.(*mcp.TextContent); ok && m.Role == "user" {
						prompt = tc.Text
					}
				}
				return &mcp.CreateMessageResult{Role: "assistant", Model: sampleModel, Content: &mcp.TextContent{Text: prefix + prompt}, StopReason: "endTurn"}, nil
			},
			ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": name}}, nil
			},
			ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
				tok, _ := req.Params.ProgressToken.(string)
				p := map[string]any{"progress": req.Params.Progress}
				if req.Params.Total != 0 {
					p["total"] = req.Params.Total
				}
				if req.Params.Message != "" {
					p["message"] = req.Params.Message
				}
				log.add(tok, jsonValue(p))
			},
			LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
				log.add("", map[string]any{"method": "notifications/message", "params": jsonValue(req.Params)})
			},
			ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
				log.add("", map[string]any{"method": "notifications/tools/list_changed"})
			},
		}
		progress, logging := o.ProgressNotificationHandler, o.LoggingMessageHandler
		o.ProgressNotificationHandler = func(ctx context.Context, req *mcp.ProgressNotificationClientRequest) {
			scriptProgress(ctx, req)
			progress(ctx, req)
		}
		o.LoggingMessageHandler = func(ctx context.Context, req *mcp.LoggingMessageRequest) {
			scriptLog(ctx, req)
			logging(ctx, req)
		}
	})
	for _, r := range mcptest.Roots {
		client.RemoveRoots(r.URI)
	}
	if c.alt {
		client.AddRoots(altRoots...)
	} else {
		client.AddRoots(roots...)
	}

	var (
		transport mcp.Transport
		cmd       *exec.Cmd
		stderr    syncBuffer
	)
	switch ep.transport {
	case "stdio":
		cmd = exec.Command(ep.argv[0], ep.argv[1:]...)
		cmd.Stderr = &stderr
		transport = &mcp.CommandTransport{Command: cmd, TerminateDuration: time.Second}
	case "http":
		transport = &mcp.StreamableClientTransport{Endpoint: ep.url}
	case "sse":
		transport = &mcp.SSEClientTransport{Endpoint: ep.url}
	default:
		return run{}, fmt.Errorf("Go SDK client: unknown transport %q", ep.transport)
	}
	out := run{code: -1}
	cs, err := client.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: c.rev})
	if err != nil {
		out.t.Steps = append(out.t.Steps, Entry{Step: "connect", Error: err.Error()})
		return finishStdio(out, cmd, &stderr), nil
	}
	if res := cs.InitializeResult(); res != nil {
		out.t.Negotiated = res.ProtocolVersion
	}
	for i, s := range c.plan {
		out.t.Steps = append(out.t.Steps, goStep(ctx, cs, log, fmt.Sprintf("p-%d", i), s))
	}
	if c.notes > 0 {
		wctx, wcancel := context.WithTimeout(ctx, waitLimit)
		_ = log.waitNotes(wctx, c.notes) // the transcript shows what came
		wcancel()
	}
	_ = cs.Close() // a server that does not exit on EOF is terminated: its exit is no failure of the cell
	log.mu.Lock()
	out.t.Notes = log.notes
	log.mu.Unlock()
	return finishStdio(out, cmd, &stderr), nil
}

// finishStdio adds the stderr and exit code of a command the client ran.
func finishStdio(out run, cmd *exec.Cmd, stderr *syncBuffer) run {
	if cmd == nil {
		return out
	}
	out.stderr = stderr.String()
	if cmd.ProcessState != nil {
		out.code = cmd.ProcessState.ExitCode()
	}
	return out
}

// goStep runs one step on cs.
func goStep(ctx context.Context, cs *mcp.ClientSession, log *progressLog, token string, s step) Entry {
	e := Entry{Step: s.name()}
	switch {
	case s.Script:
		tr, err := mcptest.Script(ctx, cs)
		e.Result = jsonValue(tr)
		if err != nil {
			e.Error = err.Error()
		}
		return e
	case s.Op == "list":
		res, err := cs.ListTools(ctx, nil)
		setOutcome(&e, res, err)
		return e
	}
	args := s.Args
	if args == nil { // a nil map in the any of Arguments would be sent as null
		args = map[string]any{}
	}
	p := &mcp.CallToolParams{Name: s.Tool, Arguments: args}
	if s.Progress {
		p.Meta = mcp.Meta{"progressToken": token}
	}
	callCtx, cancelCall := context.WithCancel(ctx)
	defer cancelCall()
	type outcome struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := cs.CallTool(callCtx, p)
		done <- outcome{res, err}
	}()
	if s.CancelAt != 0 {
		wctx, wcancel := context.WithTimeout(ctx, waitLimit)
		err := log.wait(wctx, token, s.CancelAt)
		wcancel()
		if err != nil {
			e.Wait = fmt.Sprintf("progress %v to cancel at never came", s.CancelAt)
		}
		log.add(token, "cancel")
		cancelCall()
	}
	o := <-done
	switch {
	case o.err != nil && errors.Is(o.err, context.Canceled) && s.CancelAt != 0:
		e.Error = "cancelled"
	default:
		setOutcome(&e, o.res, o.err)
	}
	if s.WaitFor != 0 {
		wctx, wcancel := context.WithTimeout(ctx, waitLimit)
		if err := log.wait(wctx, token, s.WaitFor); err != nil && e.Wait == "" {
			e.Wait = fmt.Sprintf("progress %v never came", s.WaitFor)
		}
		wcancel()
	}
	if s.Progress {
		e.Progress = log.of(token)
	}
	return e
}

func setOutcome(e *Entry, res any, err error) {
	if err != nil {
		var werr *jsonrpc.Error
		if errors.As(err, &werr) {
			e.Error = fmt.Sprintf("%d %s", werr.Code, werr.Message)
		} else {
			e.Error = err.Error()
		}
		return
	}
	e.Result = jsonValue(res)
}
