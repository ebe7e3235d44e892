package store

import (
	"errors"
	"fmt"

	"github.com/mcpvcr/mcpvcr/internal/sse"
	"github.com/mcpvcr/mcpvcr/internal/sserun"
)

// Runs of SSE events (Frame.Events). A busy server streams many events
// per read of its answer; the recorder may hand the events one read
// completes to Append as one frame, which the store keeps as it came,
// and splits and derives on read. The events a run may hold are those
// whose frames a read rebuilds exactly as the recorder would have built
// them (internal/sserun), so every reader sees the same frames either
// way.

// EventRuns reports whether a stream of kind k may hold runs of SSE
// events (Frame.Events): the streams of MCP over HTTP, whose kind changes
// nothing of how an event's frame is derived.
func (k StreamKind) EventRuns() bool {
	switch k {
	case PostStream, GetStream, ResumeStream, ListenStream, SSEGetStream:
		return true
	}
	return false
}

// errRun is the error of a run of events that does not split back into
// the events it says it holds.
var errRun = errors.New("run of events does not split into its events")

// runFrames splits run, a frame with Events set, into the frames of its
// events, each derived as the recorder derives an event's frame.
func runFrames(run *Frame) ([]*Frame, error) {
	if run.Events <= 0 || len(run.Raw) > maxRunBytes {
		return nil, fmt.Errorf("%w: %d events in %d bytes", errRun, run.Events, len(run.Raw))
	}
	var sp sse.Splitter
	evs := sp.FeedOwned(make([]sse.Event, 0, run.Events), run.Raw)
	if _, rest := sp.End(); rest || len(evs) != run.Events {
		return nil, fmt.Errorf("%w: %d events, %d found", errRun, run.Events, len(evs))
	}
	frames := make([]Frame, len(evs))
	out := make([]*Frame, len(evs))
	for i, ev := range evs {
		if !sserun.Event(ev) {
			return nil, fmt.Errorf("%w: event %d of %d is not one a run may hold", errRun, i+1, len(evs))
		}
		f := &frames[i]
		*f = Frame{SessionID: run.SessionID, StreamID: run.StreamID, Seq: run.Seq + int64(i), Direction: run.Direction,
			Offset: run.Offset, Raw: ev.Raw, SSE: true, Event: ev.Type, Retry: ev.Retry, Data: ev.Data}
		f.Derive(PostStream)
		out[i] = f
	}
	return out, nil
}

// handleEventRun writes a run of events (Frame.Events) that goes in no
// pack as a row per event: one whose seqs may be in a pack already, or
// that SQLite refused as a pack. A run that does not split into its
// events is dropped whole and reported, as a refused frame is.
func (w *writer) handleEventRun(o *op) (written bool) {
	fs, err := runFrames(o.frame)
	if err != nil {
		w.d.log.Error("a write was refused and dropped; the other frames and sessions are still recorded", "session", o.sessionID, "seq", o.frame.Seq, "err", err)
		return false
	}
	for _, f := range fs {
		e := *o
		e.frame = f
		written = w.handle(&e) || written
	}
	return written
}
