// Package sserun says which SSE events may go in a run of events
// (store.Frame.Events): events a recorder hands its cassette as they
// came, one run per read of a busy stream, which the cassette splits and
// derives when it reads them. The recorder and the store decide with the
// same functions, so a run the one writes is one the other reads back
// into exactly the frames the recorder would have made one by one.
package sserun

import (
	"bytes"

	"github.com/mcpvcr/mcpvcr/internal/sse"
)

// Event reports whether ev, as sse.Splitter returned it on a stream that
// may hold runs (store.StreamKind.EventRuns), may go in a run: Fields
// and Bytes both accept it. A run of such events splits back into
// exactly them: each block ends at its first blank line.
func Event(ev sse.Event) bool { return Fields(ev) && Bytes(ev.Raw) }

// Fields reports whether ev's parsed fields let it go in a run:
//   - it re-splits alone: its block ends in a blank line of two LFs, with
//     no byte order mark, and it was not cut short (oversize or partial);
//   - its frame has nothing but its block to derive: no id, no retry,
//     not a comment, not the HTTP+SSE endpoint event;
//   - its data is one JSON object, not a batch, on one data line, so
//     that it lies whole in the block for a scan of the block to see.
//
// Bytes checks the rest, on its block or on a whole read.
func Fields(ev sse.Event) bool {
	raw, data := ev.Raw, ev.Data
	n := len(raw)
	return !ev.HasID && ev.Retry == -1 && !ev.Comment && !ev.Partial && !ev.BOM && ev.Size == 0 && ev.HasData &&
		ev.Type != "endpoint" && len(data) > 0 && data[0] == '{' && bytes.IndexByte(data, '\n') < 0 &&
		n >= 2 && raw[n-1] == '\n' && raw[n-2] == '\n'
}

// Blocks returns how many whole blocks from the start of b have the one
// shape that Fields accepts without a parse: an optional "event: " line
// naming any type but endpoint, then one "data: " line whose value opens
// a JSON object, then the blank line, every line ending in LF alone and
// each block at most max bytes (any length when max is 0); and where the
// last of them ends. Bytes must still accept b[:end].
func Blocks(b []byte, max int) (end, n int) {
	for i := 0; i < len(b); {
		j := i
		if bytes.HasPrefix(b[j:], []byte("event: ")) {
			k := bytes.IndexByte(b[j:], '\n')
			if k < 0 {
				return end, n
			}
			typ := b[j+len("event: ") : j+k]
			if string(typ) == "endpoint" || bytes.IndexByte(typ, '\r') >= 0 {
				return end, n
			}
			j += k + 1
		}
		if !bytes.HasPrefix(b[j:], []byte("data: {")) {
			return end, n
		}
		k := bytes.IndexByte(b[j:], '\n')
		if k < 0 || j+k+1 >= len(b) || b[j+k+1] != '\n' || bytes.IndexByte(b[j:j+k], '\r') >= 0 {
			return end, n
		}
		j += k + 2
		if max > 0 && j-i > max {
			return end, n
		}
		i = j
		end, n = i, n+1
	}
	return end, n
}

// Bytes reports whether b, an event's block or a read of them, holds
// none of what keeps an event out of a run: a CR (every line must end in
// LF alone), a backslash (which could spell a name), or the member names
// "result" and "error", which an answer holds, so that a recorder learns
// nothing from an event of a run and no request is answered by one.
func Bytes(b []byte) bool { return UpTo(b) == len(b) }

// UpTo returns where in b the first byte is that may keep an event out
// of a run (see Bytes), or len(b): an event whose block lies in b before
// that is accepted.
func UpTo(b []byte) int {
	n := len(b)
	if i := bytes.IndexByte(b, '\r'); i >= 0 {
		n = i
	}
	if i := bytes.IndexByte(b[:n], '\\'); i >= 0 {
		n = i
	}
	return answerKey(b[:n])
}

// answerKey returns where in b, with no backslash, the first member name
// "result" or "error" starts (a quoted name, then a colon after any
// whitespace), at any depth, so that an answer's is always found; or
// len(b). It looks at what precedes each colon, which JSON has fewer of
// than quotes.
func answerKey(b []byte) int {
	for i := 0; ; {
		j := bytes.IndexByte(b[i:], ':')
		if j < 0 {
			return len(b)
		}
		k := i + j
		i = k + 1
		for k > 0 && (b[k-1] == ' ' || b[k-1] == '\t' || b[k-1] == '\n') {
			k--
		}
		// Most names end otherwise: look at their last letter first.
		switch {
		case k < 7 || b[k-1] != '"':
		case b[k-2] == 't' && k >= 8 && string(b[k-8:k]) == `"result"`:
			return k - 8
		case b[k-2] == 'r' && string(b[k-7:k]) == `"error"`:
			return k - 7
		}
	}
}
