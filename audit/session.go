package audit

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/mcpvcr/mcpvcr/internal/mcpwire"
	"github.com/mcpvcr/mcpvcr/store"
)

// msg is one JSON-RPC message of a frame (a batch frame has several).
type msg struct {
	f      *store.Frame
	st     *store.Stream
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *rpcError       `json:"error"`
}

type rpcError struct {
	Code int             `json:"code"`
	Data json.RawMessage `json:"data"`
}

func (m *msg) c2s() bool        { return m.f.Direction == store.ClientToServer }
func (m *msg) isRequest() bool  { return m.Method != "" && len(m.ID) > 0 && string(m.ID) != "null" }
func (m *msg) isResponse() bool { return m.Method == "" && (m.Result != nil || m.Error != nil) }

// view is the parsed form of one recording the rules read.
type view struct {
	rec     *store.Recording
	rev     string
	streams map[int64]*store.Stream
	ordinal map[int64]int // stream id -> position in the session, from 1
	msgs    []*msg        // every protocol message in seq order
	// requests maps a request's direction and raw id token to it.
	requests map[reqKey]*msg
	// responses maps a response's direction and raw id token to every
	// response with them, in seq order.
	responses map[reqKey][]*msg
	// listed holds the x-mcp-header annotations after each tools/list
	// result, in seq order; computed on first use.
	listed     []listing
	listedDone bool
}

// listing is the annotations of the listed tools as of frame seq.
type listing struct {
	seq   int64
	tools map[string][]annotation
}

type reqKey struct {
	dir store.Direction
	id  string
}

func newView(rec *store.Recording) *view {
	v := &view{rec: rec, rev: rec.Session.Revision, streams: map[int64]*store.Stream{}, ordinal: map[int64]int{},
		requests: map[reqKey]*msg{}, responses: map[reqKey][]*msg{}}
	for i := range rec.Streams {
		st := &rec.Streams[i]
		v.streams[st.ID] = st
		v.ordinal[st.ID] = i + 1
	}
	for _, f := range rec.ProtocolFrames() {
		data := bytes.TrimSpace(f.Data)
		if len(data) == 0 {
			continue
		}
		var ms []*msg
		if data[0] == '[' {
			_ = json.Unmarshal(data, &ms)
		} else {
			m := &msg{}
			if json.Unmarshal(data, m) == nil {
				ms = append(ms, m)
			}
		}
		for _, m := range ms {
			if m == nil {
				continue
			}
			m.f, m.st = f, v.streams[f.StreamID]
			v.msgs = append(v.msgs, m)
			switch {
			case m.isRequest():
				v.requests[reqKey{f.Direction, string(m.ID)}] = m
			case m.isResponse():
				k := reqKey{f.Direction, string(m.ID)}
				v.responses[k] = append(v.responses[k], m)
			}
		}
	}
	return v
}

// answer returns the response to request r, nil if none was recorded.
// Over HTTP a POSTed request is answered on its own stream (or a stream
// resuming it), and ids may repeat across streams.
func (v *view) answer(r *msg) *msg {
	// A Streamable HTTP request is answered on its own stream (or one
	// resuming it); over HTTP+SSE every answer comes on the SSE stream.
	scoped := r.c2s() && r.st != nil && (r.st.Kind == store.PostStream || r.st.Kind == store.ListenStream) && v.rec.Session.Transport != store.LegacySSE
	other := store.ServerToClient
	if !r.c2s() {
		other = store.ClientToServer
	}
	for _, m := range v.responses[reqKey{other, string(r.ID)}] {
		if m.f.Seq <= r.f.Seq {
			continue
		}
		if scoped && m.st != nil && m.st.ID != r.st.ID && !v.resumes(m.st, r.st.ID) {
			continue
		}
		return m
	}
	return nil
}

// resumes reports whether st resumes, directly or through others, the
// stream with id origin.
func (v *view) resumes(st *store.Stream, origin int64) bool {
	for i := 0; st != nil && st.ResumesID != 0 && i < len(v.rec.Streams); i++ {
		if st.ResumesID == origin {
			return true
		}
		st = v.streams[st.ResumesID]
	}
	return false
}

// request returns the request a response answers, nil if unknown.
func (v *view) request(resp *msg) *msg {
	other := store.ClientToServer
	if resp.c2s() {
		other = store.ServerToClient
	}
	if other == store.ClientToServer && resp.st != nil {
		// Over HTTP the answer is on the request's stream or one
		// resuming it; ids may repeat across streams.
		for _, m := range v.msgs {
			if m.c2s() && m.isRequest() && string(m.ID) == string(resp.ID) && m.st != nil &&
				(m.st.Kind == store.PostStream || m.st.Kind == store.ListenStream) && (m.st.ID == resp.st.ID || v.resumes(resp.st, m.st.ID)) {
				return m
			}
		}
	}
	return v.requests[reqKey{other, string(resp.ID)}]
}

// http reports whether the session went over Streamable HTTP.
func (v *view) http() bool { return v.rec.Session.Transport == store.StreamableHTTP }

// modern reports whether the session's revision is 2026-07-28 or later.
func (v *view) modern() bool { return mcpwire.IsModern(v.rev) }

// finding starts a finding of rule r at frame f.
func (v *view) finding(r *Rule, f *store.Frame, sent, required string) Finding {
	fd := Finding{Rule: r.ID, Level: r.Level, Section: r.Section, Session: v.rec.Session.ID, Revision: v.rev, Sent: sent, Required: required}
	if f != nil {
		fd.Seq = f.Seq
		fd.Stream = v.ordinal[f.StreamID]
		if st := v.streams[f.StreamID]; st != nil {
			fd.StreamLabel = st.Kind.String() + "#" + strconv.Itoa(fd.Stream)
		}
	}
	return fd
}

// streamFinding is a finding about a stream with no frame of its own
// (a GET): located at the first frame recorded after it opened.
func (v *view) streamFinding(r *Rule, st *store.Stream, sent, required string) Finding {
	var at *store.Frame
	for i := range v.rec.Frames {
		f := &v.rec.Frames[i]
		if f.StreamID == st.ID {
			at = f
			break
		}
	}
	fd := v.finding(r, at, sent, required)
	fd.Stream = v.ordinal[st.ID]
	fd.StreamLabel = st.Kind.String() + "#" + strconv.Itoa(fd.Stream)
	return fd
}

// firstFrame returns the first frame of stream st, nil if it has none.
func (v *view) firstFrame(st *store.Stream) *store.Frame {
	for i := range v.rec.Frames {
		if v.rec.Frames[i].StreamID == st.ID {
			return &v.rec.Frames[i]
		}
	}
	return nil
}

// clientStreams returns the HTTP streams the client opened (requests it
// sent), in order, without plain HTTP exchanges beside MCP.
func (v *view) clientStreams() []*store.Stream {
	var out []*store.Stream
	for i := range v.rec.Streams {
		st := &v.rec.Streams[i]
		switch st.Kind {
		case store.PostStream, store.GetStream, store.ResumeStream, store.DeleteStream, store.ListenStream:
			out = append(out, st)
		}
	}
	return out
}

// header returns the values of name in h (case-insensitively), and
// whether it was there.
func header(h http.Header, name string) (string, bool) {
	for k, vs := range h {
		if http.CanonicalHeaderKey(k) == http.CanonicalHeaderKey(name) && len(vs) > 0 {
			return vs[0], true
		}
	}
	return "", false
}

// str decodes a JSON string, "" when raw is not one.
func str(raw json.RawMessage) string {
	var s string
	_ = json.Unmarshal(raw, &s)
	return s
}

// field returns obj[key] of a JSON object, nil when absent.
func field(obj json.RawMessage, keys ...string) json.RawMessage {
	for _, k := range keys {
		var m map[string]json.RawMessage
		if json.Unmarshal(obj, &m) != nil {
			return nil
		}
		obj = m[k]
		if obj == nil {
			return nil
		}
	}
	return obj
}

// quote renders a value for a message, "(absent)" when missing.
func quote(s string, ok bool) string {
	if !ok {
		return "(absent)"
	}
	return strconv.Quote(s)
}
