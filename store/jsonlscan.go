package store

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
)

// The record types of the JSONL text form.
const (
	sessionType = "session"
	streamType  = "stream"
	frameType   = "frame"
)

// CountSessions counts the records of the JSONL export r that may be
// sessions, reading only the start of each line (a frame's line may be
// long). A line whose type it cannot tell counts as one, so that 0 means
// the export surely holds none.
func CountSessions(r io.Reader) (int, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	n, start := 0, true
	for {
		line, err := br.ReadSlice('\n')
		if start && len(bytes.TrimSpace(line)) > 0 {
			switch recordType(line) {
			case headerType, streamType, frameType:
			default:
				n++
			}
		}
		start = err != bufio.ErrBufferFull
		switch {
		case err == io.EOF:
			return n, nil
		case err != nil && err != bufio.ErrBufferFull:
			return n, err
		}
	}
}

// recordType is the "type" of the JSON object line starts with, when it
// is its first member; "" when that cannot be told.
func recordType(line []byte) string {
	dec := json.NewDecoder(bytes.NewReader(line))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return ""
	}
	if k, err := dec.Token(); err != nil || k != "type" {
		return ""
	}
	if v, err := dec.Token(); err == nil {
		if s, ok := v.(string); ok {
			return s
		}
	}
	return ""
}

// LineOf says where a frame is in a JSONL export: its line, numbered
// from 1, keyed by the session's id in the file and the frame's seq; seq 0
// is the session's own line.
type LineOf map[[2]int64]int

// FrameLines reads the JSONL export r and returns the line of every
// session and frame record in it. Lines that are not records are passed
// over; it reads until r ends or fails.
func FrameLines(r io.Reader) LineOf {
	lines := LineOf{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<30)
	for n := 1; sc.Scan(); n++ {
		var rec struct {
			Type    string `json:"type"`
			ID      int64  `json:"id"`
			Session int64  `json:"session"`
			Seq     int64  `json:"seq"`
		}
		if json.Unmarshal(sc.Bytes(), &rec) != nil {
			continue
		}
		switch rec.Type {
		case sessionType:
			lines[[2]int64{rec.ID, 0}] = n
		case frameType:
			lines[[2]int64{rec.Session, rec.Seq}] = n
		}
	}
	return lines
}

// Line returns the line of frame seq of session, or of the session's own
// line when the frame has none; 0 when neither is known.
func (l LineOf) Line(session, seq int64) int {
	if line, ok := l[[2]int64{session, seq}]; ok {
		return line
	}
	return l[[2]int64{session, 0}]
}
