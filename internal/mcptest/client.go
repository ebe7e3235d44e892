package mcptest

import (
	"context"
	"maps"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Fixed answers of the client returned by [NewClient].
const (
	// ClientName is the clientInfo name of the test client.
	ClientName = "mcptest-client"
	// ClientVersion is the clientInfo version of the test client.
	ClientVersion = "1.0.0"
	// SampleModel is the model name the test client reports for sampling.
	SampleModel = "mcptest-model"
	// SamplePrefix starts every sampled text; the rest echoes the last
	// user message.
	SamplePrefix = "sampled: "
)

// ElicitContent is what the test client answers, with action "accept", to
// every elicitation. It satisfies [ElicitSchema].
var ElicitContent = map[string]any{"name": "mcptest-user"}

// Roots are the roots the test client reports, in URI order.
var Roots = []*mcp.Root{
	{URI: "file:///mcptest/alpha", Name: "alpha"},
	{URI: "file:///mcptest/beta", Name: "beta"},
}

// NewClient returns an MCP client with deterministic handlers: sampling
// answers [SamplePrefix] plus the last user message's text from model
// [SampleModel], elicitation accepts with [ElicitContent], roots/list
// returns [Roots]. Progress and logging notifications are recorded for
// [Script], per session. The client may be connected any number of times.
func NewClient() *mcp.Client {
	return NewClientAs(&mcp.Implementation{Name: ClientName, Version: ClientVersion})
}

// NewClientAs is [NewClient] with another clientInfo: info names the
// client in initialize (and, in 2026-07-28, in every request's _meta). Its
// handlers answer exactly as [NewClient]'s do, so that a replay test can
// play an upgraded client against a recording of an older one.
func NewClientAs(info *mcp.Implementation) *mcp.Client {
	return NewClientWith(info, nil)
}

// NewClientWith is [NewClientAs] whose options edit may change before the
// client is made (nil changes nothing): a replay test plays a client that
// answers a server request otherwise than the recorded one did (declines
// an elicitation, say), with the notifications still recorded for
// [Script].
func NewClientWith(info *mcp.Implementation, edit func(*mcp.ClientOptions)) *mcp.Client {
	opts := &mcp.ClientOptions{
		CreateMessageHandler: createMessage,
		ElicitationHandler:   elicitAccept,
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			record(req.Session, "notifications/progress", req.Params)
		},
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			record(req.Session, "notifications/message", req.Params)
		},
	}
	if edit != nil {
		edit(opts)
	}
	c := mcp.NewClient(info, opts)
	c.AddRoots(Roots...)
	return c
}

func createMessage(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	var prompt string
	for _, m := range req.Params.Messages {
		if t, ok := m.Content.(*mcp.TextContent); ok && m.Role == "user" {
			prompt = t.Text
		}
	}
	return &mcp.CreateMessageResult{
		Role:       "assistant",
		Model:      SampleModel,
		Content:    &mcp.TextContent{Text: SamplePrefix + prompt},
		StopReason: "endTurn",
	}, nil
}

func elicitAccept(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	content := make(map[string]any, len(ElicitContent))
	for k, v := range ElicitContent {
		content[k] = v
	}
	return &mcp.ElicitResult{Action: "accept", Content: content}, nil
}

// inboxes holds the notification inbox of each session a [Script] is
// running on. Handlers of sessions without an inbox drop notifications.
var inboxes = struct {
	// guards m
	mu sync.Mutex
	m  map[*mcp.ClientSession]*inbox
	// hooks see every notification a client of NewClient receives
	// (ReorderHandler's).
	hooks map[*int]func(params any)
}{m: make(map[*mcp.ClientSession]*inbox), hooks: make(map[*int]func(params any))}

// watch creates the inbox of cs. The caller must call the returned stop.
func watch(cs *mcp.ClientSession) (*inbox, func()) {
	in := &inbox{changed: make(chan struct{})}
	inboxes.mu.Lock()
	inboxes.m[cs] = in
	inboxes.mu.Unlock()
	return in, func() {
		inboxes.mu.Lock()
		delete(inboxes.m, cs)
		inboxes.mu.Unlock()
	}
}

func record(cs *mcp.ClientSession, method string, params any) {
	inboxes.mu.Lock()
	in := inboxes.m[cs]
	hooks := slices.Collect(maps.Values(inboxes.hooks))
	inboxes.mu.Unlock()
	for _, h := range hooks {
		h(params)
	}
	if in == nil {
		return
	}
	n := Notification{Method: method, Params: jsonValue(params)}
	in.add(n)
}

// An inbox collects a session's notifications in arrival order. The SDK
// handles notifications one at a time, in the order they were read, so a
// notification's arrival proves all earlier ones arrived too.
type inbox struct {
	// guards got and changed
	mu  sync.Mutex
	got []Notification
	// changed is closed and replaced on every add.
	changed chan struct{}
}

func (in *inbox) add(n Notification) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.got = append(in.got, n)
	close(in.changed)
	in.changed = make(chan struct{})
}

// len returns how many notifications have arrived.
func (in *inbox) len() int {
	in.mu.Lock()
	defer in.mu.Unlock()
	return len(in.got)
}

// since returns a copy of the notifications from index i on.
func (in *inbox) since(i int) []Notification {
	in.mu.Lock()
	defer in.mu.Unlock()
	if i >= len(in.got) {
		return nil
	}
	return append([]Notification(nil), in.got[i:]...)
}

// wait blocks until some notification from index i on satisfies ok, or ctx
// is done.
func (in *inbox) wait(ctx context.Context, i int, ok func(Notification) bool) error {
	for {
		in.mu.Lock()
		for _, n := range in.got[min(i, len(in.got)):] {
			if ok(n) {
				in.mu.Unlock()
				return nil
			}
		}
		i = len(in.got)
		changed := in.changed
		in.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
