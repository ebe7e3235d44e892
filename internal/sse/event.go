package sse

import (
	"bytes"
	"math"
)

// bom is the UTF-8 byte order mark that may open a stream.
const bom = "\xEF\xBB\xBF"

// Event is one block of an event stream: the lines up to and including the
// blank line that ends them, both as raw bytes and as parsed fields.
//
// Raw is authoritative; every other field is derived from it. The Raw of the
// events a Reader or Splitter returns, concatenated in order, is exactly the
// stream they read. Data and Comments may share memory with Raw; their
// capacity is clipped, so appending to them never writes into Raw.
type Event struct {
	// Raw is the bytes of the block exactly as they arrived, including the
	// terminating blank line and, for the first block of a stream, a leading
	// byte order mark. It is a fresh slice that the caller may keep. When
	// Size is set, it is only the block's first bytes (Splitter.Max).
	Raw []byte
	// Size is the block's true length when Raw holds only its first bytes;
	// 0 when Raw is the whole block.
	Size int64

	// ID is the value of the block's last valid id field. HasID reports
	// whether there was one; an id field whose value contains NUL is
	// ignored. An empty ID with HasID set resets the last event ID. The ID
	// persists across events on the wire, but ID reports only this block's
	// field: the caller tracks the last event ID.
	ID    string
	HasID bool

	// Type is the value of the block's last event field. Empty means the
	// default event type, "message".
	Type string

	// Data is the values of the block's data fields joined with "\n".
	// HasData reports whether there was at least one data field, so that an
	// event with empty data (the priming event "id: 0\ndata:\n\n") can be
	// told apart from one with no data field, which a browser would not
	// dispatch.
	Data    []byte
	HasData bool

	// Retry is the value of the block's last valid retry field in
	// milliseconds, or -1 if it had none. A retry field is valid if its
	// value is one or more ASCII digits and fits in an int.
	Retry int

	// Comments holds the text after the colon of each comment line, in
	// order, with nothing stripped: ": ping" gives " ping".
	Comments [][]byte

	// Comment reports whether the block has no field lines: it holds only
	// comment lines, or only the blank line that ends it (a stray blank
	// line, which some servers send to keep a connection alive). Such a
	// block dispatches nothing; recorders keep it apart from events. A
	// block that mixes comments and fields is an event with Comments set.
	Comment bool

	// Partial reports that the stream ended before the blank line that
	// would have ended the block. Its fields are parsed as though the block
	// had been ended, so the last field may have been cut short.
	Partial bool

	// BOM reports that Raw begins with the stream's byte order mark, which
	// was skipped when parsing.
	BOM bool
}

// parse parses raw, one whole block, into an Event that keeps raw as its
// Raw. If hasBOM is set, raw begins with a byte order mark that is skipped.
// Parsing stops at the first blank line, which ends the block.
func parse(raw []byte, hasBOM bool) Event {
	e := Event{Raw: raw, Retry: -1, Comment: true, BOM: hasBOM}
	b := raw
	if hasBOM {
		b = raw[len(bom):]
	}
	var (
		id, typ []byte
		ndata   int
	)
	it := newLines(b)
	for {
		line, _, ok := it.next()
		if !ok || len(line) == 0 {
			break
		}
		if line[0] == ':' {
			e.Comments = append(e.Comments, clip(line[1:]))
			continue
		}
		e.Comment = false
		name, value := splitField(line)
		switch string(name) {
		case "data":
			switch ndata {
			case 0:
				e.Data = clip(value)
			case 1:
				d := make([]byte, 0, len(e.Data)+1+len(value))
				d = append(d, e.Data...)
				e.Data = append(append(d, '\n'), value...)
			default:
				e.Data = append(append(e.Data, '\n'), value...)
			}
			ndata++
			e.HasData = true
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				id, e.HasID = value, true
			}
		case "event":
			typ = value
		case "retry":
			if n, ok := parseRetry(value); ok {
				e.Retry = n
			}
		}
	}
	if e.HasID {
		e.ID = string(id)
	}
	switch string(typ) {
	case "":
	case "message":
		e.Type = "message"
	case "endpoint":
		e.Type = "endpoint"
	default:
		e.Type = string(typ)
	}
	return e
}

// splitField splits a field line into its name and value: the name runs up
// to the first colon and the value follows it, less one leading space. A
// line without a colon is a name with an empty value.
func splitField(line []byte) (name, value []byte) {
	i := bytes.IndexByte(line, ':')
	if i < 0 {
		return line, line[len(line):]
	}
	name, value = line[:i], line[i+1:]
	if len(value) > 0 && value[0] == ' ' {
		value = value[1:]
	}
	return name, value
}

// parseRetry parses a retry value: one or more ASCII digits that fit in an int.
func parseRetry(b []byte) (int, bool) {
	if len(b) == 0 {
		return 0, false
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := int(c - '0')
		if n > (math.MaxInt-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}

// clip returns b with its capacity cut to its length.
func clip(b []byte) []byte {
	return b[:len(b):len(b)]
}

// lines iterates over the lines of a byte slice. A line ends with CRLF, LF
// or CR; a final line may have no ending.
type lines struct {
	b      []byte
	i      int // start of the next line
	lf, cr int // index of the next LF or CR at or after i, or len(b); -1 before the first search
}

func newLines(b []byte) lines {
	return lines{b: b, lf: -1, cr: -1}
}

// next returns the next line and its ending, which is empty only for an
// unterminated final line. It reports false when no bytes remain.
//
// The positions of the next LF and CR are remembered across calls, so that
// input with one kind of line ending is not searched for the other once per
// line, which would be quadratic.
func (l *lines) next() (line, end []byte, ok bool) {
	b, i := l.b, l.i
	if i >= len(b) {
		return nil, nil, false
	}
	l.lf = nextByte(b, i, l.lf, '\n')
	l.cr = nextByte(b, i, l.cr, '\r')
	j := min(l.lf, l.cr)
	k := j
	if k < len(b) {
		k++
		if b[j] == '\r' && k < len(b) && b[k] == '\n' {
			k++
		}
	}
	l.i = k
	return b[i:j], b[j:k], true
}

// nextByte returns the index of the first c in b at or after i, or len(b) if
// there is none. last is the result of the previous search for c, which is
// reused if it is still ahead.
func nextByte(b []byte, i, last int, c byte) int {
	if last >= i {
		return last
	}
	if j := bytes.IndexByte(b[i:], c); j >= 0 {
		return i + j
	}
	return len(b)
}
