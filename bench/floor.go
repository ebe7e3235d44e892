package main

import (
	"context"
	"sync/atomic"

	"github.com/mcpvcr/mcpvcr/store"
)

// floor, set by -floor, adds a mode that records into discardSink: the
// recorder's own work (reading the request, splitting and deriving every
// frame, redaction, the session's bookkeeping) with no store behind it.
// Its ratio to the passthrough is the floor no store can take record
// below, measured in the same rounds as record.
var floor bool

// discard, set by the internal -discard, makes an http-record peer
// record into discardSink.
var discard bool

// discardSink is a recorder.Sink that gives sessions and streams IDs, as
// a cassette does, and keeps nothing.
type discardSink struct{ ids atomic.Int64 }

func (s *discardSink) CreateSession(_ context.Context, ses *store.Session) error {
	ses.ID = s.ids.Add(1)
	return nil
}

func (s *discardSink) UpdateSession(context.Context, *store.Session) error { return nil }

func (s *discardSink) OpenStream(_ context.Context, st *store.Stream) error {
	st.ID = s.ids.Add(1)
	return nil
}

func (s *discardSink) CloseStream(context.Context, *store.Stream) error { return nil }
func (s *discardSink) Append(context.Context, *store.Frame) error       { return nil }

// TakesEventRuns makes the floor take runs of SSE events, as record's
// cassette does (recorder.RunSink): the same recording work.
func (s *discardSink) TakesEventRuns() bool { return true }
