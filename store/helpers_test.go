package store_test

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpvcr/mcpvcr/recorder"
	"github.com/mcpvcr/mcpvcr/store"
)

var _ recorder.Sink = (*store.DB)(nil)

// openDB opens a new cassette in a temporary directory and closes it when
// the test ends.
func openDB(t testing.TB) *store.DB {
	t.Helper()
	return openPath(t, filepath.Join(t.TempDir(), "cassette.db"))
}

func openPath(t testing.TB, path string) *store.DB {
	t.Helper()
	d, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatalf("Open(%q) = %v", path, err)
	}
	t.Cleanup(func() {
		if err := d.Close(); err != nil {
			t.Errorf("Close() = %v", err)
		}
	})
	return d
}

// must fails the test at once if err is not nil.
func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// newSession creates a stdio session with every field set.
func newSession(t testing.TB, d *store.DB) *store.Session {
	t.Helper()
	s := &store.Session{
		Name:       "everything",
		Transport:  store.StreamableHTTP,
		Revision:   "2025-11-25",
		Era:        "legacy",
		Upstream:   "http://127.0.0.1:3001/mcp",
		ExternalID: "f3c1-9a",
		StartedAt:  time.Date(2026, 3, 1, 12, 30, 0, 123456789, time.FixedZone("CET", 3600)),
		ExitCode:   -1,
		ClientInfo: json.RawMessage(`{"name": "inspector",  "version":"0.1"}`),
		ServerInfo: json.RawMessage(`{"name":"everything","version":"2.0.0"}`),
		Labels:     map[string]string{"case": "resume", "ci": "yes"},
		Note:       "recorded by hand\nsecond line",
	}
	must(t, d.CreateSession(context.Background(), s))
	return s
}

func newStream(t testing.TB, d *store.DB, sessionID int64, kind store.StreamKind) *store.Stream {
	t.Helper()
	st := &store.Stream{
		SessionID:     sessionID,
		Kind:          kind,
		Method:        "POST",
		URL:           "http://127.0.0.1:3001/mcp?x=1",
		Status:        200,
		RequestHeader: http.Header{"Accept": {"application/json", "text/event-stream"}, "Mcp-Session-Id": {"f3c1-9a"}},
		Opened:        3 * time.Millisecond,
	}
	must(t, d.OpenStream(context.Background(), st))
	return st
}

// frame returns a derived frame. Options set SSE fields before deriving.
func frame(seq int64, st *store.Stream, dir store.Direction, offset time.Duration, raw string, opts ...func(*store.Frame)) *store.Frame {
	f := &store.Frame{
		SessionID: st.SessionID,
		StreamID:  st.ID,
		Seq:       seq,
		Direction: dir,
		Offset:    offset,
		Raw:       []byte(raw),
		Retry:     -1,
	}
	for _, o := range opts {
		o(f)
	}
	f.Derive(st.Kind)
	return f
}

// sse makes a frame an SSE event with the given data and id.
func sse(data string, id string, hasID bool, event string, retry int) func(*store.Frame) {
	return func(f *store.Frame) {
		f.SSE, f.EventID, f.HasEventID, f.Event, f.Retry = true, id, hasID, event, retry
		if data != "" {
			f.Data = []byte(data)
		}
	}
}

func comment(f *store.Frame) { f.SSE, f.Comment = true, true }

// appendAll appends frames and waits until they are committed.
func appendAll(t testing.TB, d *store.DB, fs ...*store.Frame) {
	t.Helper()
	ctx := context.Background()
	for _, f := range fs {
		must(t, d.Append(ctx, f))
	}
	must(t, d.Flush(ctx))
}

// values returns copies of the frames, as Frames returns them.
func values(fs []*store.Frame) []store.Frame {
	out := make([]store.Frame, len(fs))
	for i, f := range fs {
		out[i] = *f
	}
	return out
}

// sample is a recording that exercises every field.
type sample struct {
	sessions []store.Session
	streams  map[int64][]store.Stream // by session ID
	frames   map[int64][]store.Frame  // by session ID
}

// recordSample records an HTTP session and a stdio session into d, with
// every field of every type set somewhere, and waits for the commit.
func recordSample(t testing.TB, d *store.DB) sample {
	t.Helper()
	ctx := context.Background()
	smp := sample{streams: map[int64][]store.Stream{}, frames: map[int64][]store.Frame{}}

	// HTTP: a POST answered with SSE, a GET stream and its resumption.
	s := newSession(t, d)
	post := newStream(t, d, s.ID, store.PostStream)
	get := newStream(t, d, s.ID, store.GetStream)
	get.Method, get.Opened = "GET", 5*time.Millisecond
	resume := &store.Stream{SessionID: s.ID, Kind: store.ResumeStream, Method: "GET", URL: get.URL,
		ResumesID: get.ID, LastEventID: "ev-2", Opened: 9 * time.Millisecond}
	must(t, d.OpenStream(ctx, resume))
	hf := []*store.Frame{
		frame(1, post, store.ClientToServer, 3*time.Millisecond, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"<héllo & bye>"}}}`),
		frame(2, post, store.ServerToClient, 4*time.Millisecond, "id: ev-0\nretry: 3000\ndata:\n\n", sse("", "ev-0", true, "", 3000)),
		frame(3, post, store.ServerToClient, 4*time.Millisecond, "id: ev-1\r\nevent: message\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\r\n\r\n",
			sse(`{"jsonrpc":"2.0","id":1,"result":{}}`, "ev-1", true, "message", -1)),
		frame(4, get, store.ServerToClient, 6*time.Millisecond, ": keep-alive\n\n", comment),
		frame(5, post, store.ClientToServer, 7*time.Millisecond, `[{"jsonrpc":"2.0","id":"a","method":"ping"},{"jsonrpc":"2.0","method":"notifications/cancelled","params":{}},{"jsonrpc":"2.0","id":2,"result":{}}]`),
		frame(6, get, store.ServerToClient, 8*time.Millisecond, "data: not json\n\n", sse("not json", "", false, "", -1)),
		frame(7, post, store.ClientToServer, 8*time.Millisecond, "\xff\xfe{binary\x00"),
		frame(8, resume, store.ServerToClient, 10*time.Millisecond, "id:\ndata: \xff\n\n", sse("\xff", "", true, "", -1)),
		frame(9, resume, store.ServerToClient, 11*time.Millisecond, "id: ev-3\nevent: bye\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\n\n",
			sse(`{"jsonrpc":"2.0","method":"notifications/message"}`, "ev-3", true, "bye", 0)),
	}
	appendAll(t, d, hf...)
	post.Closed, post.End, post.ResponseHeader = 12*time.Millisecond, store.EndComplete, responseHeader("text/event-stream")
	get.Closed, get.End = 9*time.Millisecond, store.EndServerClosed
	resume.Closed, resume.End, resume.Err, resume.Status = 13*time.Millisecond, store.EndUpstreamError, "connection reset by peer", 200
	for _, st := range []*store.Stream{post, get, resume} {
		must(t, d.CloseStream(ctx, st))
	}

	// stdio: CRLF lines, stderr, no stream on one frame.
	s2 := &store.Session{Transport: store.Stdio, Upstream: "npx server-everything stdio", StartedAt: time.Unix(1767225600, 0)}
	must(t, d.CreateSession(ctx, s2))
	stdin := newStdioStream(t, d, s2.ID, store.StdinStream)
	stdout := newStdioStream(t, d, s2.ID, store.StdoutStream)
	stderr := newStdioStream(t, d, s2.ID, store.StderrStream)
	stdio := []*store.Frame{
		frame(1, stdin, store.ClientToServer, 0, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{}}\r\n"),
		frame(2, stderr, store.ServerToClient, time.Millisecond, "Starting server...\n"),
		frame(3, stdout, store.ServerToClient, 2*time.Millisecond, "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"protocolVersion\":\"2025-11-25\"}}\n"),
		frame(4, stdin, store.ClientToServer, 2*time.Millisecond, "\n"),
	}
	stdio = append(stdio, &store.Frame{SessionID: s2.ID, Seq: 5, Direction: store.ServerToClient, Offset: 3 * time.Millisecond, Raw: []byte("{}\n"), Retry: -1})
	stdio[4].Derive(store.StreamUnknown)
	appendAll(t, d, stdio...)
	s2.EndedAt, s2.ExitCode = time.Unix(1767225601, 5), 0
	must(t, d.UpdateSession(ctx, s2))
	for _, st := range []*store.Stream{stdin, stdout, stderr} {
		st.End, st.Closed = store.EndComplete, 4*time.Millisecond
		must(t, d.CloseStream(ctx, st))
	}
	must(t, d.Flush(ctx))

	smp.sessions = []store.Session{*s, *s2}
	smp.streams[s.ID] = []store.Stream{*post, *get, *resume}
	smp.streams[s2.ID] = []store.Stream{*stdin, *stdout, *stderr}
	smp.frames[s.ID] = values(hf)
	smp.frames[s2.ID] = values(stdio)
	return smp
}

func responseHeader(contentType string) http.Header {
	return http.Header{"Content-Type": {contentType}, "Cache-Control": {"no-cache"}}
}

func newStdioStream(t testing.TB, d *store.DB, sessionID int64, kind store.StreamKind) *store.Stream {
	t.Helper()
	st := &store.Stream{SessionID: sessionID, Kind: kind}
	must(t, d.OpenStream(context.Background(), st))
	return st
}
