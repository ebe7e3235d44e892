package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/internal/sse"
	"github.com/mcpvcr/mcpvcr/store"
)

// maxContentProblems bounds the content problems listed.
const maxContentProblems = 100

// checkFrameContents checks that each committed frame's bytes still give
// the fields indexed for it (kind, id, method, malformed; for SSE, the
// data, event id and type of its raw block). SQLite keeps no checksums,
// so damage inside a frame's bytes passes its integrity check; this is
// how it shows. It reads the frames through Export, one session at a
// time, so that memory does not grow with the cassette.
func checkFrameContents(ctx context.Context, db *store.DB) (problems []string, omitted int, err error) {
	ss, err := db.Sessions(ctx)
	if err != nil {
		return nil, 0, err
	}
	for _, s := range ss {
		c := &contentChecker{session: s.ID, kinds: map[int64]store.StreamKind{}}
		if err := db.Export(ctx, c, s.ID); err != nil {
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
	kinds    map[int64]store.StreamKind // the export's stream ids → kinds
	partial  []byte                     // an unfinished line
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

// exported is the part of an export line the check reads: a stream's id
// and kind, or a frame's fields. The JSONL form is the store's documented
// text format.
type exported struct {
	Type      string  `json:"type"`
	ID        int64   `json:"id"`
	Kind      string  `json:"kind"`
	Seq       int64   `json:"seq"`
	Stream    int64   `json:"stream"`
	RPCID     string  `json:"rpc_id"`
	Method    string  `json:"method"`
	Malformed bool    `json:"malformed"`
	SSE       bool    `json:"sse"`
	EventID   *string `json:"event_id"`
	Event     string  `json:"event"`
	Retry     *int    `json:"retry"`
	Comment   bool    `json:"comment"`
	Raw       string  `json:"raw"`
	RawB64    string  `json:"raw_b64"`
	Data      *string `json:"data"`
	DataB64   string  `json:"data_b64"`
}

func (c *contentChecker) line(line []byte) {
	var x exported
	if err := json.Unmarshal(line, &x); err != nil {
		c.problem(0, "export line does not decode: %v", err)
		return
	}
	switch x.Type {
	case "stream":
		c.kinds[x.ID] = parseStreamKind(x.Kind)
	case "frame":
		c.frame(&x)
	}
}

// frame derives the fields of x's bytes afresh and compares them with
// the indexed ones.
func (c *contentChecker) frame(x *exported) {
	raw, err := bytesOf(x.Raw, x.RawB64)
	if err != nil {
		c.problem(x.Seq, "raw bytes do not decode: %v", err)
		return
	}
	f := store.Frame{Raw: raw, SSE: x.SSE, Event: x.Event, Comment: x.Comment}
	if x.Data != nil || x.DataB64 != "" {
		text := ""
		if x.Data != nil {
			text = *x.Data
		}
		if f.Data, err = bytesOf(text, x.DataB64); err != nil {
			c.problem(x.Seq, "data bytes do not decode: %v", err)
			return
		}
		if f.Data == nil {
			f.Data = []byte{}
		}
	}
	f.Derive(c.kinds[x.Stream])
	kind := ""
	if !f.Comment && (f.Kind != jsonrpc.KindInvalid || f.Malformed) {
		kind = f.Kind.String()
	}
	if kind != x.Kind {
		c.problem(x.Seq, "its bytes give kind %s, but it is indexed as %s", orNone(kind), orNone(x.Kind))
	}
	if f.ID != x.RPCID {
		c.problem(x.Seq, "its bytes give id %s, but it is indexed with id %s", orNone(f.ID), orNone(x.RPCID))
	}
	if f.Method != x.Method {
		c.problem(x.Seq, "its bytes give method %q, but it is indexed with method %q", f.Method, x.Method)
	}
	if f.Malformed != x.Malformed && kind == x.Kind {
		c.problem(x.Seq, "its bytes give malformed=%t, but it is indexed with malformed=%t", f.Malformed, x.Malformed)
	}
	if x.SSE {
		c.sseBlock(x, raw, f.Data)
	}
}

// sseBlock checks that an SSE frame's raw block gives its data, event id
// and type.
func (c *contentChecker) sseBlock(x *exported, raw, data []byte) {
	var sp sse.Splitter
	evs := sp.Feed(nil, raw)
	if ev, ok := sp.End(); ok {
		evs = append(evs, ev)
	}
	if len(evs) != 1 {
		c.problem(x.Seq, "its raw bytes hold %d SSE blocks; want 1", len(evs))
		return
	}
	ev := evs[0]
	hasID := x.EventID != nil
	id := ""
	if hasID {
		id = *x.EventID
	}
	switch {
	case ev.HasData && !bytes.Equal(ev.Data, data):
		c.problem(x.Seq, "its raw SSE block has data %.60q, but %.60q is stored", ev.Data, data)
	case ev.HasID != hasID || ev.ID != id:
		c.problem(x.Seq, "its raw SSE block has event id %q, but %q is indexed", ev.ID, id)
	case ev.Type != x.Event:
		c.problem(x.Seq, "its raw SSE block has event type %q, but %q is indexed", ev.Type, x.Event)
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

// bytesOf decodes an export's text-or-base64 pair; empty is nil.
func bytesOf(text, b64 string) ([]byte, error) {
	if b64 != "" {
		return base64.StdEncoding.DecodeString(b64)
	}
	if text == "" {
		return nil, nil
	}
	return []byte(text), nil
}

// parseStreamKind maps an exported stream kind name back to its value.
func parseStreamKind(name string) store.StreamKind {
	for k := store.StreamKind(1); k.String() != "unknown"; k++ {
		if k.String() == name {
			return k
		}
	}
	return store.StreamUnknown
}
