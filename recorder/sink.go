// Package recorder holds the proxies that forward MCP traffic byte for byte
// and hand every frame, with its stream and timing, to a Sink (a
// *store.DB, usually).
//
// Stdio records a conversation between a client and a server given as
// streams; Command runs the server as a child process and records it with
// Stdio (the plumbing mcpvcr record and verify share); HTTP is a reverse
// proxy (an http.Handler) for Streamable HTTP and the HTTP+SSE transport.
//
// # Ownership and lifecycle
//
// The recorders never change what they forward; credentials are redacted
// in what they record only (Redactor). Stdio.Run and Command.Run return
// when the server's output has ended; HTTP records until Close, which
// ends the sessions it holds. The Sink is the caller's to close, after.
//
// # Walkthrough
//
//	db, _ := store.Open(ctx, "bug.db")
//	defer db.Close()
//	rec := &recorder.Command{
//		Argv:     []string{"npx", "@modelcontextprotocol/server-everything", "stdio"},
//		Recorder: recorder.Stdio{Sink: db},
//	}
//	res, err := rec.Run(ctx, struct{ io.Reader; io.Writer }{os.Stdin, os.Stdout})
//	// res.SessionID is the recorded session, res.ExitCode the server's.
package recorder

import (
	"context"

	"github.com/mcpvcr/mcpvcr/store"
)

// Sink receives what a recorder sees. *store.DB implements it. A Sink is
// used from several goroutines at once and must be safe for concurrent
// use. Methods that take a pointer may assign IDs into it; after Append
// the Sink owns the frame and the caller must not change it.
type Sink interface {
	CreateSession(ctx context.Context, s *store.Session) error
	UpdateSession(ctx context.Context, s *store.Session) error
	OpenStream(ctx context.Context, st *store.Stream) error
	CloseStream(ctx context.Context, st *store.Stream) error
	Append(ctx context.Context, f *store.Frame) error
}

// RunSink is a Sink that takes a run of SSE events as one frame
// (store.Frame.Events), as *store.DB does. To such a sink an HTTP
// recorder hands the events that one read of an answer completes, when
// each is one a run may hold (a notification or request on one data
// line, with no id, retry or escapes), as one frame, which it does not
// parse: the sink splits and derives them when it reads them. Any other
// Sink gets a frame per event.
type RunSink interface {
	Sink
	// TakesEventRuns reports whether the sink takes runs of events.
	TakesEventRuns() bool
}

// takesRuns reports whether s takes runs of SSE events.
func takesRuns(s Sink) bool {
	r, ok := s.(RunSink)
	return ok && r.TakesEventRuns()
}
