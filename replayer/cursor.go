package replayer

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/store"
)

// NoMatchCode is the JSON-RPC error code of the answer to a request that
// matches no recorded request. It lies in the implementation-defined range
// that no MCP revision gives a meaning to.
const NoMatchCode = -32019

// recording is one recorded session with what replay derives from it
// once and shares between the clients replaying it.
type recording struct {
	*store.Recording

	byStreamOnce sync.Once
	byStream     map[int64][]*store.Frame // stream id -> its server frames
	templateOnce sync.Once
	tmpl         *engine // see template
}

// serverFrames returns the server frames of each stream, in order,
// indexed once. Frames must not change after the first call.
func (r *recording) serverFrames() map[int64][]*store.Frame {
	r.byStreamOnce.Do(func() {
		r.byStream = map[int64][]*store.Frame{}
		for i := range r.Frames {
			if f := &r.Frames[i]; f.Direction == store.ServerToClient {
				r.byStream[f.StreamID] = append(r.byStream[f.StreamID], f)
			}
		}
	})
	return r.byStream
}

// Mismatch is a live client frame that matched no recorded frame.
type Mismatch struct {
	// Live is the frame the client sent.
	Live []byte
	// Closest is the recorded client frame most like it, nil if none.
	Closest *store.Frame
	// Diff shows how Live differs from Closest (-recorded +live).
	Diff string
	// Reason says why, for checks that are not about matching.
	Reason string
}

// Error describes the mismatch on one line.
func (m *Mismatch) Error() string {
	live := jsonrpc.Parse(m.Live)
	what := live.Kind.String()
	if live.Kind == jsonrpc.KindEmpty {
		what = "request without body"
	}
	if live.Method != "" {
		what += " " + live.Method
	}
	if m.Reason != "" {
		return fmt.Sprintf("%s: %s", what, m.Reason)
	}
	if m.Closest == nil {
		return fmt.Sprintf("%s: no recorded frame matches", what)
	}
	return fmt.Sprintf("%s: no recorded frame matches; closest is seq %d (%s %s)", what, m.Closest.Seq, m.Closest.Kind, m.Closest.Method)
}

// closest returns the mismatch report for live against e's recording.
func (e *engine) closest(live jsonrpc.Message) *Mismatch {
	mm := &Mismatch{Live: live.Raw}
	want := canonical(live.Params)
	best := -1
	bestScore := 0
	for i := range e.frames {
		fr := &e.frames[i]
		if !fr.c2s {
			continue
		}
		score := 1
		if fr.msg.Kind == live.Kind {
			score += 2
		}
		if fr.msg.Method == live.Method && live.Method != "" {
			score += 4
		}
		if !fr.done {
			score++
		}
		if score > bestScore {
			best, bestScore = i, score
		}
	}
	if best < 0 || bestScore < 5 {
		return mm
	}
	fr := &e.frames[best]
	mm.Closest = fr.f
	mm.Diff = cmp.Diff(canonical(fr.msg.Params), want)
	if mm.Diff == "" && fr.done {
		mm.Reason = fmt.Sprintf("matches recorded seq %d, which this client already sent", fr.f.Seq)
	}
	return mm
}

// noMatchAnswer is the JSON-RPC error sent for an unmatched request.
func noMatchAnswer(id json.RawMessage, mm *Mismatch) []byte {
	type closest struct {
		Seq    int64           `json:"seq"`
		Method string          `json:"method,omitempty"`
		Frame  json.RawMessage `json:"frame,omitempty"`
	}
	data := struct {
		Closest *closest `json:"closest,omitempty"`
		Diff    string   `json:"diff,omitempty"`
	}{Diff: mm.Diff}
	if mm.Closest != nil {
		data.Closest = &closest{Seq: mm.Closest.Seq, Method: mm.Closest.Method}
		if json.Valid(mm.Closest.Data) {
			data.Closest.Frame = json.RawMessage(strings.TrimSpace(string(mm.Closest.Data)))
		}
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
			Data    any    `json:"data"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: json.RawMessage("null"), Error: struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Data    any    `json:"data"`
	}{NoMatchCode, "mcpvcr: " + mm.Error(), data}})
	// Splice the client's id in as it sent it: encoding/json would
	// re-escape it ("<a>" would come back as "\u003ca\u003e").
	if out, err := jsonrpc.Splice(b, id, "id"); err == nil && len(id) > 0 {
		return out
	}
	return b
}

// noMatchReply is the answer to an unmatched client frame: an error for a
// request, an array of errors (one per request) for a batch holding
// requests, nil when nothing is owed.
func noMatchReply(live jsonrpc.Message, mm *Mismatch) []byte {
	switch live.Kind {
	case jsonrpc.KindRequest:
		return noMatchAnswer(live.ID, mm)
	case jsonrpc.KindBatch:
		var out []byte
		for _, m := range live.Members {
			if m.Kind != jsonrpc.KindRequest {
				continue
			}
			if out == nil {
				out = append(out, '[')
			} else {
				out = append(out, ',')
			}
			out = append(out, noMatchAnswer(m.ID, mm)...)
		}
		if out != nil {
			out = append(out, ']')
		}
		return out
	}
	return nil
}

// cursor follows one live client through the recorded sessions that are
// still candidates for it. The leader, the first survivor, speaks; the
// others follow silently and take over if the leader stops matching. It is
// safe for concurrent use.
type cursor struct {
	mu    sync.Mutex // guards cands
	cands []*engine
}

func newCursor(recs []*recording) *cursor {
	c := &cursor{}
	for _, r := range recs {
		c.cands = append(c.cands, newEngine(r))
	}
	return c
}

// start returns the server frames recorded before any client frame.
func (c *cursor) start() []outFrame {
	c.mu.Lock()
	defer c.mu.Unlock()
	var outs []outFrame
	for i, e := range c.cands {
		o := e.release()
		if i == 0 {
			outs = o
		}
	}
	return outs
}

// receive matches a client frame and returns the leader's recorded frame
// it matched and what the server sends next. When nothing matches, the
// candidates are kept and a Mismatch (from the leader's point of view) is
// returned.
func (c *cursor) receive(live jsonrpc.Message) ([]outFrame, *store.Frame, *Mismatch) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var kept []*engine
	var idx []int
	for _, e := range c.cands {
		if i, ok := e.match(live); ok {
			kept = append(kept, e)
			idx = append(idx, i)
		}
	}
	if len(kept) == 0 {
		if live.Kind.IsResponse() && c.cands[0].unanswered(live.ID) {
			// An answer to a server request whose recorded answer never
			// came (the recorded client was gone first): a server takes
			// it and moves on.
			return nil, nil, nil
		}
		return nil, nil, c.cands[0].closest(live)
	}
	c.cands = kept
	var outs []outFrame
	for n, e := range kept {
		e.consume(idx[n], live)
		o := e.release()
		if n == 0 {
			outs = o
		}
	}
	return outs, kept[0].frames[idx[0]].f, nil
}

// leader returns the candidate that speaks.
func (c *cursor) leader() *engine {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cands[0]
}

// caughtUp reports whether the leader has received every recorded client
// frame before offset t.
func (c *cursor) caughtUp(t time.Duration) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.cands[0]
	for e.firstC2S < len(e.frames) && (!e.frames[e.firstC2S].c2s || e.frames[e.firstC2S].done) {
		e.firstC2S++
	}
	return e.firstC2S == len(e.frames) || e.frames[e.firstC2S].f.Offset >= t
}

// unanswered reports whether id is a server request that replay has sent
// and the recorded client never answered.
func (e *engine) unanswered(id []byte) bool {
	sent := false
	for _, fr := range e.frames {
		if string(fr.msg.ID) != string(id) {
			continue
		}
		if fr.c2s && fr.msg.Kind.IsResponse() {
			return false
		}
		if !fr.c2s && fr.msg.Kind == jsonrpc.KindRequest && fr.done {
			sent = true
		}
	}
	return sent
}
