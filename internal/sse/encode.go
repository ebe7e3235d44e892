package sse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

var (
	// ErrLineBreak means that a field or comment to be encoded contains a
	// CR or LF, which would end its line early.
	ErrLineBreak = errors.New("sse: line break in field value")
)

// AppendEvent appends an event with the given fields to dst and returns the
// extended slice. It writes, in order, an event line if typ is not empty, an
// id line if id is not empty, a retry line if retry is not negative, then
// data, and the blank line that ends the event.
//
// data is split at each CRLF, LF or CR into one data line per line, so that
// the event's Data reads back as data with every line break made LF. If data
// is nil, no data line is written; empty non-nil data writes one empty data
// line, as the priming event "id: 0\ndata: \n\n" has.
//
// id and typ must not contain CR or LF; Encode checks this, AppendEvent does
// not.
func AppendEvent(dst []byte, id, typ string, data []byte, retry int) []byte {
	if typ != "" {
		dst = appendLine(dst, "event: ", typ)
	}
	if id != "" {
		dst = appendLine(dst, "id: ", id)
	}
	if retry >= 0 {
		dst = strconv.AppendInt(append(dst, "retry: "...), int64(retry), 10)
		dst = append(dst, '\n')
	}
	if data != nil {
		dst = appendData(dst, data)
	}
	return append(dst, '\n')
}

// Encode writes e to w. If e.Raw is not empty, Encode writes it unchanged,
// so a recorded event is replayed byte for byte; use WithData to change its
// data first. Otherwise it encodes e's fields as AppendEvent does, writing
// first a line for each of e.Comments, and an id line whenever e.HasID is
// set (an empty one resets the last event ID), and data lines only if
// e.HasData is set. As Retry is written when it is not negative, set it to
// -1 for none.
//
// Encode returns an error wrapping ErrLineBreak, and writes nothing, if a
// comment, e.ID or e.Type contains CR or LF.
func Encode(w io.Writer, e Event) error {
	if len(e.Raw) > 0 {
		_, err := w.Write(e.Raw)
		return err
	}
	var b []byte
	for i, c := range e.Comments {
		if bytes.ContainsAny(c, "\r\n") {
			return fmt.Errorf("encode comment %d: %w", i, ErrLineBreak)
		}
		b = append(append(append(b, ':'), c...), '\n')
	}
	if strings.ContainsAny(e.Type, "\r\n") {
		return fmt.Errorf("encode event type: %w", ErrLineBreak)
	}
	if strings.ContainsAny(e.ID, "\r\n") {
		return fmt.Errorf("encode id: %w", ErrLineBreak)
	}
	if e.Type != "" {
		b = appendLine(b, "event: ", e.Type)
	}
	if e.HasID {
		b = appendLine(b, "id: ", e.ID)
	}
	if e.Retry >= 0 {
		b = strconv.AppendInt(append(b, "retry: "...), int64(e.Retry), 10)
		b = append(b, '\n')
	}
	if e.HasData {
		b = appendData(b, e.Data)
	}
	_, err := w.Write(append(b, '\n'))
	return err
}

// WithData returns e with its data replaced by data and the rest of Raw kept
// as it was: the replayer uses it to rewrite a JSON-RPC id in a recorded
// event without disturbing its other fields, their order, its comments or
// its line endings.
//
// data is split into lines as AppendEvent splits it. The i-th line replaces
// the value of the i-th data line of Raw, which keeps its field name, colon,
// space and line ending. Lines beyond those of Raw follow its last data line;
// data lines of Raw beyond those of data are removed. If Raw has no data
// line, the new ones go just before the blank line that ends it. A nil data
// removes every data line. So e.WithData(e.Data) is e.
//
// The returned event has a new Raw, parsed afresh, and keeps e's Partial.
func (e Event) WithData(data []byte) Event {
	values := splitData(data)
	b := e.Raw
	out := make([]byte, 0, len(b)+len(data)+16)
	hasBOM := e.BOM && bytes.HasPrefix(b, []byte(bom))
	if hasBOM {
		out, b = append(out, bom...), b[len(bom):]
	}
	type rawLine struct {
		text, end []byte
		data      bool
	}
	var (
		ls       []rawLine
		n        int // bytes of b in ls
		lastData = -1
		hasBlank bool
	)
	for it := newLines(b); !hasBlank; {
		line, end, ok := it.next()
		if !ok {
			break
		}
		l := rawLine{text: line, end: end, data: isData(line)}
		if l.data {
			lastData = len(ls)
		}
		hasBlank = len(line) == 0
		ls = append(ls, l)
		n += len(line) + len(end)
	}
	k := 0 // values written
	for i, l := range ls {
		switch {
		case !l.data:
			if len(l.text) == 0 && lastData < 0 {
				// The blank line of a block without data: insert it here.
				out = appendValues(out, "data: ", values, l.end, l.end)
			}
			out = append(append(out, l.text...), l.end...)
		case k >= len(values):
			// More data lines than values: drop the line.
		case i < lastData:
			out = appendValue(out, name(l.text), values[k], l.end)
			k++
		default:
			// The last data line takes the values left.
			sep := l.end
			if len(sep) == 0 {
				sep = []byte{'\n'}
			}
			out = appendValues(out, name(l.text), values[k:], sep, l.end)
			k = len(values)
		}
	}
	if !hasBlank && lastData < 0 && len(values) > 0 {
		// A partial block without data: add it at the end.
		if len(ls) > 0 && len(ls[len(ls)-1].end) == 0 {
			out = append(out, '\n')
		}
		out = appendValues(out, "data: ", values, "\n", "\n")
	}
	out = append(out, b[n:]...)
	ne := parse(out, hasBOM)
	ne.Partial = e.Partial
	return ne
}

// isData reports whether line is a data field line.
func isData(line []byte) bool {
	if len(line) == 0 || line[0] == ':' {
		return false
	}
	name, _ := splitField(line)
	return string(name) == "data"
}

// name returns the text of a field line before its value: the field name
// and any colon and space.
func name(line []byte) []byte {
	_, v := splitField(line)
	return line[:len(line)-len(v)]
}

// appendValues appends one data line per value, each made of name, the
// value and sep, but ending the last with end instead.
func appendValues[N, S, E []byte | string](dst []byte, name N, values [][]byte, sep S, end E) []byte {
	for i, v := range values {
		if i == len(values)-1 {
			return appendValue(dst, name, v, end)
		}
		dst = appendValue(dst, name, v, sep)
	}
	return dst
}

// appendValue appends a data line made of name, v and end. name is the
// line's text before its value: a field name, maybe a colon and maybe a
// space. If it lacks the colon or space that v needs to read back as v, they
// are added.
func appendValue[N, E []byte | string](dst []byte, name N, v []byte, end E) []byte {
	dst = append(dst, name...)
	var last byte
	if len(name) > 0 {
		last = name[len(name)-1]
	}
	if len(v) > 0 && last != ':' && last != ' ' {
		dst = append(dst, ':')
	}
	if len(v) > 0 && v[0] == ' ' && last != ' ' {
		dst = append(dst, ' ')
	}
	return append(append(dst, v...), end...)
}

// appendLine appends a line made of prefix and v.
func appendLine(dst []byte, prefix, v string) []byte {
	return append(append(append(dst, prefix...), v...), '\n')
}

// appendData appends one data line per line of data.
func appendData(dst, data []byte) []byte {
	return appendValues(dst, "data: ", splitData(data), "\n", "\n")
}

// splitData splits data into lines at each CRLF, LF or CR. A nil data has
// no lines; an empty one has one empty line.
func splitData(data []byte) [][]byte {
	if data == nil {
		return nil
	}
	var values [][]byte
	it := newLines(data)
	for {
		line, end, ok := it.next()
		if !ok {
			break
		}
		values = append(values, line)
		if len(end) == 0 {
			return values
		}
	}
	// data is empty or ends with a line break, after which comes an empty line.
	return append(values, data[len(data):])
}
