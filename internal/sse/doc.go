// Package sse reads and writes text/event-stream, the wire format of
// Server-Sent Events, byte for byte.
//
// The recorder must pass an event stream to its client unchanged while
// cutting it into events, and the replayer must write those events back
// exactly as they were. So every Event keeps Raw, the bytes of its block as
// they arrived, beside the fields parsed from it by the WHATWG rules: lines
// end with CRLF, LF or CR; a blank line ends a block; one space after a
// field's colon is stripped; data lines are joined with "\n"; an id holding
// NUL and a retry that is not all digits are ignored; a byte order mark that
// opens the stream is skipped. Nothing is dropped: comment blocks, stray
// blank lines, events with no data and a block cut short by the end of the
// stream all come out as events, so the Raw of all events, concatenated, is
// always the stream.
//
// A proxy feeds each chunk to a Splitter after forwarding it:
//
//	upstream ──chunk──▶ client (write, flush)
//	              │
//	              └───▶ Splitter.Feed ──▶ events completed by the chunk ──▶ recorder
//
// A Reader does the same for a whole io.Reader. On the way back, Encode
// writes a recorded event's Raw, Event.WithData replaces only its data, and
// AppendEvent writes a new event.
package sse
