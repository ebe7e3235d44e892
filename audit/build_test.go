package audit

import (
	"net/http"
	"testing"
	"time"

	"github.com/mcpvcr/mcpvcr/store"
)

// rb builds a recording frame by frame, as the recorder would store it.
type rb struct {
	tb  testing.TB
	rec *store.Recording
	off time.Duration
}

func newRB(tb testing.TB, rev string, tr store.Transport) *rb {
	tb.Helper()
	b := &rb{tb: tb, rec: &store.Recording{Session: store.Session{ID: 1, Transport: tr, Revision: rev}}}
	if tr == store.Stdio {
		b.open(store.StdinStream, "", nil, 0)
		b.open(store.StdoutStream, "", nil, 0)
	}
	return b
}

// open adds a stream; hdr holds request headers, and "<" prefixed names
// response headers.
func (b *rb) open(kind store.StreamKind, method string, hdr map[string]string, status int) *store.Stream {
	b.off += time.Millisecond
	st := store.Stream{ID: int64(len(b.rec.Streams) + 1), SessionID: 1, Kind: kind, Method: method, Status: status,
		RequestHeader: http.Header{}, ResponseHeader: http.Header{}, Opened: b.off, End: store.EndComplete, URL: "http://127.0.0.1:1/mcp"}
	for k, v := range hdr {
		if k[0] == '<' {
			st.ResponseHeader.Set(k[1:], v)
		} else {
			st.RequestHeader.Set(k, v)
		}
	}
	b.rec.Streams = append(b.rec.Streams, st)
	return &b.rec.Streams[len(b.rec.Streams)-1]
}

// frame adds a frame of JSON data on stream st.
func (b *rb) frame(st int64, dir store.Direction, data string) *store.Frame {
	b.off += time.Millisecond
	f := store.Frame{SessionID: 1, StreamID: st, Seq: int64(len(b.rec.Frames) + 1), Direction: dir, Offset: b.off, Raw: []byte(data)}
	f.Derive(b.rec.Streams[st-1].Kind)
	b.rec.Frames = append(b.rec.Frames, f)
	return &b.rec.Frames[len(b.rec.Frames)-1]
}

// event adds an SSE event with an id (none when "") and a retry (-1 none).
func (b *rb) event(st int64, id string, retry int, data string) {
	b.off += time.Millisecond
	f := store.Frame{SessionID: 1, StreamID: st, Seq: int64(len(b.rec.Frames) + 1), Direction: store.ServerToClient, Offset: b.off,
		SSE: true, EventID: id, HasEventID: id != "", Retry: retry, Data: []byte(data), Raw: []byte("data: " + data + "\n\n")}
	f.Derive(b.rec.Streams[st-1].Kind)
	f.Retry = retry
	b.rec.Frames = append(b.rec.Frames, f)
}

// c and s add a client and a server line on stdio.
func (b *rb) c(data string) { b.frame(1, store.ClientToServer, data+"\n") }
func (b *rb) s(data string) { b.frame(2, store.ServerToClient, data+"\n") }

// post adds a POST stream with request body req and answer resp ("" none).
func (b *rb) post(hdr map[string]string, req, resp string) *store.Stream {
	st := b.open(store.PostStream, "POST", hdr, 200)
	b.frame(st.ID, store.ClientToServer, req)
	if resp != "" {
		b.frame(st.ID, store.ServerToClient, resp)
	}
	return st
}

// findings runs one rule over the recording.
func (b *rb) findings(id string) []Finding {
	b.tb.Helper()
	r := Lookup(id)
	if r == nil {
		b.tb.Fatalf("no rule %s", id)
	}
	return Audit([]*store.Recording{b.rec}, []*Rule{r})
}
