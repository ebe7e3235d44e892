package mcptest

import (
	"context"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ReorderHandler returns a Streamable HTTP handler (serve it at /mcp) of
// the Go SDK test server with one more tool, notify, for the chaos
// reorder tests: it waits until the client's standalone GET stream is
// open, sends a log message outside the call (no request context: the
// Go SDK routes it to the GET stream), then progress "notified" on the
// call's stream, and returns. The two notifications are recorded one
// right after the other, on two streams. It serves one session.
func ReorderHandler() http.Handler {
	var once sync.Once
	open := make(chan struct{})
	s := NewServer(V1)
	mcp.AddTool(s, &mcp.Tool{Name: "notify", Description: "Logs a message unrelated to the call, then sends progress \"notified\" and returns."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ noArgs) (*mcp.CallToolResult, any, error) {
			select {
			case <-open:
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
			if err := req.Session.Log(context.Background(), &mcp.LoggingMessageParams{Level: "info", Logger: "notify", Data: "unrelated to the call"}); err != nil {
				return nil, nil, err
			}
			if token := req.Params.GetProgressToken(); token != nil {
				if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: 1, Total: 1, Message: "notified"}); err != nil {
					return nil, nil, err
				}
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
			w = &flushSignal{ResponseWriter: w, flushed: func() { once.Do(func() { close(open) }) }}
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
