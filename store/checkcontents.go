package store

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcpvcr/mcpvcr/internal/sse"
)

// maxContentProblems bounds the content problems listed.
const maxContentProblems = 100

// checkFrameContents checks that each committed frame's bytes still give
// the fields indexed for it (kind, id, method, malformed; for SSE, the
// data, event id and type of its raw block). SQLite keeps no checksums,
// so damage inside a frame's bytes passes its integrity check; this is
// how it shows. It reads the frames through Export, one session at a
// time, so that memory does not grow with the cassette, and decodes them
// with the JSONL schema Import uses.
func (d *DB) checkFrameContents(ctx context.Context) (problems []string, omitted int, err error) {
	ss, err := d.Sessions(ctx)
	if err != nil {
		return nil, 0, err
	}
	for _, s := range ss {
		c := &contentChecker{session: s.ID, kinds: map[int64]StreamKind{}}
		// A pack that does not decode is the order check's problem
		// (checkFrames): this one checks every other frame.
		if err := d.export(ctx, c, func(error) {}, []int64{s.ID}); err != nil {
			return problems, omitted, err
		}
		c.flush()
		for _, p := range c.problems {
			if len(problems) < maxContentProblems {
				problems = append(problems, p)
			} else {
				omitted++
			}
		}
	}
	return problems, omitted, nil
}

// contentChecker is an io.Writer for the JSONL export of one session: it
// checks each frame line as it is written.
type contentChecker struct {
	session  int64
	kinds    map[int64]StreamKind // the export's stream ids → kinds
	partial  []byte               // an unfinished line
	problems []string
}

func (c *contentChecker) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			c.partial = append(c.partial, p...)
			break
		}
		line := p[:i]
		if len(c.partial) > 0 {
			line = append(c.partial, line...)
			c.partial = c.partial[:0]
		}
		c.line(line)
		p = p[i+1:]
	}
	return n, nil
}

// flush checks a last line without a newline.
func (c *contentChecker) flush() {
	if len(c.partial) > 0 {
		c.line(c.partial)
		c.partial = nil
	}
}

func (c *contentChecker) line(line []byte) {
	var peek struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(line, &peek); err != nil {
		c.problem(0, "export line does not decode: %v", err)
		return
	}
	switch peek.Type {
	case "stream":
		var st streamRecord
		if err := json.Unmarshal(line, &st); err != nil {
			c.problem(0, "export line does not decode: %v", err)
			return
		}
		c.kinds[st.ID], _ = parseStreamKind(st.Kind)
	case "frame":
		var rec frameRecord
		if err := json.Unmarshal(line, &rec); err != nil {
			c.problem(0, "export line does not decode: %v", err)
			return
		}
		c.frame(&rec)
	}
}

// frame derives the fields of rec's bytes afresh and compares them with
// the indexed ones.
func (c *contentChecker) frame(rec *frameRecord) {
	f, err := rec.frame()
	if err != nil {
		c.problem(rec.Seq, "bytes do not decode: %v", err)
		return
	}
	f.Derive(c.kinds[rec.Stream])
	kind := ""
	if !f.Comment && (f.Kind != KindInvalid || f.Malformed) {
		kind = f.Kind.String()
	}
	if kind != rec.Kind {
		c.problem(rec.Seq, "its bytes give kind %s, but it is indexed as %s", orNone(kind), orNone(rec.Kind))
	}
	if f.ID != rec.RPCID {
		c.problem(rec.Seq, "its bytes give id %s, but it is indexed with id %s", orNone(f.ID), orNone(rec.RPCID))
	}
	if f.Method != rec.Method {
		c.problem(rec.Seq, "its bytes give method %q, but it is indexed with method %q", f.Method, rec.Method)
	}
	if f.Malformed != rec.Malformed && kind == rec.Kind {
		c.problem(rec.Seq, "its bytes give malformed=%t, but it is indexed with malformed=%t", f.Malformed, rec.Malformed)
	}
	if rec.SSE {
		c.sseBlock(rec, f.Raw, f.Data)
	}
}

// sseBlock checks that an SSE frame's raw block gives its data, event id
// and type.
func (c *contentChecker) sseBlock(rec *frameRecord, raw, data []byte) {
	evs := sse.Split(raw)
	if len(evs) != 1 {
		c.problem(rec.Seq, "its raw bytes hold %d SSE blocks; want 1", len(evs))
		return
	}
	ev := evs[0]
	hasID := rec.EventID != nil
	id := ""
	if hasID {
		id = *rec.EventID
	}
	switch {
	case ev.HasData && !bytes.Equal(ev.Data, data):
		c.problem(rec.Seq, "its raw SSE block has data %.60q, but %.60q is stored", ev.Data, data)
	case ev.HasID != hasID || ev.ID != id:
		c.problem(rec.Seq, "its raw SSE block has event id %q, but %q is indexed", ev.ID, id)
	case ev.Type != rec.Event:
		c.problem(rec.Seq, "its raw SSE block has event type %q, but %q is indexed", ev.Type, rec.Event)
	}
}

func (c *contentChecker) problem(seq int64, format string, args ...any) {
	where := fmt.Sprintf("session %d", c.session)
	if seq > 0 {
		where += fmt.Sprintf(": frame %d", seq)
	}
	c.problems = append(c.problems, where+": "+fmt.Sprintf(format, args...))
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
