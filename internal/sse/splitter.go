package sse

import (
	"bytes"

	"github.com/mcpvcr/mcpvcr/internal/framebuf"
)

// keepBuf is the largest carry-over buffer a Splitter keeps between events.
// A larger one, grown for a large event, is released once the event is out.
const keepBuf = 64 << 10

// Splitter cuts an event stream into events as it arrives in chunks of any
// size. It is the tee half of a proxy: forward each chunk, then feed it to
// the Splitter, which returns the events the chunk completed.
//
// The events do not depend on how the stream was cut into chunks: feeding it
// whole or one byte at a time gives the same events with the same Raw. So
// that this holds when a blank line ends in CR, which may be the first half
// of a CRLF, an event whose blank line ends in a CR that is the last byte of
// a chunk is held until the next chunk, or End, shows whether an LF follows.
// Events whose blank line ends in LF are returned by the Feed that completes
// them, so in practice only a stream whose lines end in CR alone sees its
// events a chunk late.
//
// A Splitter holds the bytes of at most one unfinished event. With Max
// zero it has no size limit and drops nothing; with Max set, it keeps at
// most Max bytes of an event: a longer one is returned with only its
// first Max bytes in Raw (its fields parsed from those) and its true
// length in Size. Events are found where they end all the same.
//
// The zero value is ready to split a new stream. A Splitter is not safe for
// concurrent use.
type Splitter struct {
	// Max, if positive, bounds the bytes kept of one event.
	Max int

	dropped int64   // bytes of the current block not kept (over Max)
	buf     []byte  // bytes of the current block carried over from earlier chunks
	lineLen int     // length so far of the current line, without its ending
	head    [3]byte // the stream's first bytes, to recognise a BOM
	nhead   int     // bytes in head
	second  bool    // the stream's first line has ended
	started bool    // a block has been emitted, so later blocks cannot start with the BOM
	skipLF  bool    // the last byte fed was a CR ending a line; an LF next belongs to it
	held    bool    // the last byte fed was a CR ending a blank line; the block waits for a possible LF
}

// AtBlockStart reports whether the next byte fed starts a block of a
// stream under way: a block has been returned (so the next cannot open
// with the stream's byte order mark), and no bytes of another are
// carried over or wait for an LF. Whole blocks whose lines end in LF
// alone then leave the Splitter as it is: a caller that knows what it
// would return for such blocks may skip them and feed what follows.
func (s *Splitter) AtBlockStart() bool {
	return s.started && s.second && len(s.buf) == 0 && s.lineLen == 0 && s.dropped == 0 && !s.skipLF && !s.held
}

// Carried returns how many bytes of the block under way the Splitter
// holds, carried over from the chunks fed so far.
func (s *Splitter) Carried() int { return len(s.buf) }

// BlockEnd returns how many bytes of p, fed next, bring the Splitter to
// the start of a block: up to and including p's first blank line that
// ends in LF, which ends the block under way (or the stream's first; or a
// later one, when a CR ended the one under way sooner). It returns 0 when
// p holds no such line, when a blank line ending in CR waits for p, or
// when AtBlockStart holds already. Once those bytes are fed, AtBlockStart
// holds. As with any cut, feeding p in those two parts gives the events
// that feeding it whole would, so a caller may feed what follows by
// another path.
func (s *Splitter) BlockEnd(p []byte) int {
	if len(p) == 0 || s.held || s.AtBlockStart() {
		return 0
	}
	if s.lineLen == 0 && !s.skipLF && p[0] == '\n' {
		return 1
	}
	if i := bytes.Index(p, []byte("\n\n")); i >= 0 {
		return i + 2
	}
	return 0
}

// Feed splits p, the next bytes of the stream, and appends the events that p
// completes to dst, returning the extended slice. Feed does not keep p.
// Events hold no memory of the Splitter's, so dst may be reused once its
// events have been handled:
//
//	evs = s.Feed(evs[:0], chunk)
func (s *Splitter) Feed(dst []Event, p []byte) []Event { return s.feed(dst, p, false) }

// FeedOwned is Feed for a p the caller hands over and never changes
// again: an event that p holds whole has its Raw (and Data) in p rather
// than in a copy of its own, so that a chunk of many events costs one
// allocation, the caller's, not one per event. p stays in memory while
// any of those events does.
func (s *Splitter) FeedOwned(dst []Event, p []byte) []Event { return s.feed(dst, p, true) }

func (s *Splitter) feed(dst []Event, p []byte, owned bool) []Event {
	if len(p) == 0 {
		return dst
	}
	start, i := 0, 0 // p[start:] is not yet in an event or in buf; p[:i] is scanned
	switch {
	case s.held:
		s.held = false
		if p[0] == '\n' {
			i = 1
		}
		dst = append(dst, s.emit(p[:i], false))
		start = i
	case s.skipLF:
		s.skipLF = false
		if p[0] == '\n' {
			i = 1
		}
	}
	lf, cr := -1, -1 // index of the next LF and CR at or after i, or len(p)
	for i < len(p) {
		lf = nextByte(p, i, lf, '\n')
		cr = nextByte(p, i, cr, '\r')
		j := min(lf, cr)
		if !s.second && s.nhead < len(s.head) {
			s.nhead += copy(s.head[s.nhead:], p[i:j])
		}
		s.lineLen += j - i
		if j == len(p) {
			break
		}
		blank := s.lineLen == 0 || !s.second && s.lineLen == len(bom) && string(s.head[:]) == bom
		s.lineLen = 0
		s.second = true
		i = j + 1
		if p[j] == '\r' {
			if i == len(p) {
				if blank {
					s.held = true
				} else {
					s.skipLF = true
				}
				break
			}
			if p[i] == '\n' {
				i++
			}
		}
		if blank {
			dst = append(dst, s.emit(p[start:i], owned))
			start = i
		}
	}
	s.buf = s.grow(s.buf, s.clip(p[start:]))
	return dst
}

// clip returns as much of p as the current block may still keep (see
// Max), counting the rest as dropped.
func (s *Splitter) clip(p []byte) []byte {
	if s.Max <= 0 || len(s.buf)+len(p) <= s.Max {
		return p
	}
	keep := max(0, s.Max-len(s.buf))
	s.dropped += int64(len(p) - keep)
	return p[:keep]
}

// End reports that the stream has ended and returns what the Splitter still
// holds as a final event. ok is false if it holds nothing. The event is
// Partial unless it is one that Feed held back to see whether an LF followed
// its final CR.
//
// After End the Splitter is ready for a new stream.
func (s *Splitter) End() (e Event, ok bool) {
	switch {
	case s.held:
		e, ok = s.emit(nil, false), true
	case len(s.buf) > 0:
		e, ok = s.emit(nil, false), true
		e.Partial = true
	}
	*s = Splitter{Max: s.Max, buf: s.buf[:0]}
	return e, ok
}

// emit returns the event made of the carried-over bytes and tail, and
// empties the carry-over buffer. With owned, an event that is all tail
// keeps tail as its Raw (see FeedOwned).
func (s *Splitter) emit(tail []byte, owned bool) Event {
	tail = s.clip(tail)
	var raw []byte
	switch {
	case owned && len(s.buf) == 0:
		raw = tail[:len(tail):len(tail)] // the caller's: see FeedOwned
	case cap(s.buf) > keepBuf && len(s.buf)+len(tail) <= cap(s.buf):
		// A large event: its buffer becomes its Raw, rather than be
		// copied once more (the Splitter lets go of it below).
		raw = append(s.buf, tail...)
		raw = raw[:len(raw):len(raw)]
	default:
		raw = make([]byte, len(s.buf)+len(tail))
		copy(raw[copy(raw, s.buf):], tail)
	}
	if cap(s.buf) > keepBuf {
		s.buf = nil
	} else {
		s.buf = s.buf[:0]
	}
	e := parse(raw, !s.started && len(raw) >= len(bom) && string(raw[:len(bom)]) == bom)
	s.started = true
	if s.dropped > 0 {
		e.Size, s.dropped = int64(len(raw))+s.dropped, 0
	}
	return e
}

// grow appends p to b, at least doubling b's capacity when it must grow, so
// that a large event arriving in small chunks is copied a bounded number of
// times; with Max set, a large event gets one buffer of Max bytes
// (framebuf), so that it costs one copy of at most Max bytes.
func (s *Splitter) grow(b, p []byte) []byte {
	b, _ = framebuf.Append(b, p, s.Max, 0)
	return b
}

// Split returns the events of raw, a whole event stream: its last event
// too when no blank line ends it. The events are as a Splitter fed raw in
// any chunks returns them.
func Split(raw []byte) []Event {
	sp := Splitter{Max: len(raw)} // an event cut short is copied into one buffer of its length
	evs := sp.Feed(nil, raw)
	if ev, ok := sp.End(); ok {
		evs = append(evs, ev)
	}
	return evs
}
