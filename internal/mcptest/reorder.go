package mcptest

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ReorderHandler returns a Streamable HTTP handler (serve it at /mcp) of
// the Go SDK test server with one more tool, notify, for the chaos
// reorder tests: it waits until the session's standalone GET stream is
// open, sends a log message outside the call (no request context: the
// Go SDK routes it to the GET stream) and progress "notified" on the
// call's stream, and answers only once a client of [NewClient] in this
// process has received both. So a recording through mcpvcr holds the
// two notifications one right after the other, on two streams, with
// neither the answer nor anything else between them. It serves sessions
// one after another, each with its own GET stream; its hook is removed
// when tb ends.
func ReorderHandler(tb testing.TB) http.Handler {
	var mu sync.Mutex // guards everything below
	// opened holds, per session ID, a channel closed once the session's
	// GET stream is open.
	opened := map[string]chan struct{}{}
	// got is closed once the client has both notifications of the call
	// under way.
	var got chan struct{}
	logged, progressed := false, false
	openOf := func(id string) chan struct{} {
		mu.Lock()
		defer mu.Unlock()
		c, ok := opened[id]
		if !ok {
			c = make(chan struct{})
			opened[id] = c
		}
		return c
	}
	hook := func(params any) {
		mu.Lock()
		defer mu.Unlock()
		switch p := params.(type) {
		case *mcp.LoggingMessageParams:
			logged = logged || p.Logger == "notify"
		case *mcp.ProgressNotificationParams:
			progressed = progressed || p.Message == "notified"
		}
		if logged && progressed && got != nil {
			close(got)
			got = nil
		}
	}
	key := new(int)
	inboxes.mu.Lock()
	inboxes.hooks[key] = hook
	inboxes.mu.Unlock()
	tb.Cleanup(func() {
		inboxes.mu.Lock()
		delete(inboxes.hooks, key)
		inboxes.mu.Unlock()
	})

	s := NewServer(V1)
	mcp.AddTool(s, &mcp.Tool{Name: "notify", Description: "Logs a message unrelated to the call, sends progress \"notified\", and answers once the client has both."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ noArgs) (*mcp.CallToolResult, any, error) {
			select {
			case <-openOf(req.Session.ID()):
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
			mu.Lock()
			done := make(chan struct{})
			got, logged, progressed = done, false, false
			mu.Unlock()
			if err := req.Session.Log(context.Background(), &mcp.LoggingMessageParams{Level: "info", Logger: "notify", Data: "unrelated to the call"}); err != nil {
				return nil, nil, err
			}
			if token := req.Params.GetProgressToken(); token != nil {
				if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: 1, Total: 1, Message: "notified"}); err != nil {
					return nil, nil, err
				}
			}
			select {
			case <-done:
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
			return text("notified"), nil, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			// The SDK flushes the GET stream's opening comment while it
			// holds the stream, which it connects before letting go: a
			// message sent once the flush is seen waits for the stream
			// and goes out on it.
			open := openOf(r.Header.Get("Mcp-Session-Id"))
			w = &flushSignal{ResponseWriter: w, flushed: func() {
				mu.Lock()
				defer mu.Unlock()
				select {
				case <-open: // a GET of the session flushed before
				default:
					close(open)
				}
			}}
		}
		h.ServeHTTP(w, r)
	})
}

// flushSignal is a ResponseWriter that calls flushed after each flush.
type flushSignal struct {
	http.ResponseWriter
	flushed func()
}

func (f *flushSignal) Flush() {
	if fl, ok := f.ResponseWriter.(http.Flusher); ok {
		fl.Flush()
	}
	f.flushed()
}

func (f *flushSignal) Unwrap() http.ResponseWriter { return f.ResponseWriter }
