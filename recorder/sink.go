// Package recorder holds the proxies that forward MCP traffic byte for byte
// and hand every frame, with its stream and timing, to a Sink.
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
