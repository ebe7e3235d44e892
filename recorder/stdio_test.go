package recorder_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpvcr/mcpvcr/recorder"
	"github.com/mcpvcr/mcpvcr/store"
)

var _ recorder.Sink = (*store.DB)(nil)

func openDB(tb testing.TB) *store.DB {
	tb.Helper()
	db, err := store.Open(context.Background(), filepath.Join(tb.TempDir(), "test.db"))
	if err != nil {
		tb.Fatalf("store.Open: %v", err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

// pipeServer is a fake server made of pipes: the test reads what the
// recorder forwards to the server's stdin and writes the server's stdout.
type pipeServer struct {
	stdinR  *io.PipeReader
	stdinW  *io.PipeWriter
	stdoutR *io.PipeReader
	stdoutW *io.PipeWriter
}

func newPipeServer() *pipeServer {
	p := &pipeServer{}
	p.stdinR, p.stdinW = io.Pipe()
	p.stdoutR, p.stdoutW = io.Pipe()
	return p
}

func (p *pipeServer) Read(b []byte) (int, error)  { return p.stdoutR.Read(b) }
func (p *pipeServer) Write(b []byte) (int, error) { return p.stdinW.Write(b) }
func (p *pipeServer) Close() error                { return p.stdinW.Close() }

type clientIO struct {
	io.Reader
	io.Writer
}

func TestStdio_ForwardsAndRecordsExactBytes(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	srv := newPipeServer()
	clientIn := strings.NewReader(strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","clientInfo":{"name":"t","version":"1"}}}`,
		`[{"jsonrpc":"2.0","id":2,"method":"tools/list"},{"jsonrpc":"2.0","method":"notifications/x"}]`,
		"not json\r",
		`{"jsonrpc":"2.0","id":3,"method":"ping"}`, // no newline at EOF
	}, "\n"))
	var clientOut bytes.Buffer
	serverOut := "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"protocolVersion\":\"2025-03-26\",\"serverInfo\":{\"name\":\"s\"}}}\n" +
		"[{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}]\r\n"
	stderr := "log line 1\nlog line 2\n"

	gotStdin := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(srv.stdinR)
		gotStdin <- b
		srv.stdoutW.Write([]byte(serverOut))
		srv.stdoutW.Close()
	}()
	var passedErr bytes.Buffer
	rec := &recorder.Stdio{Sink: db, Session: store.Session{Name: "t", Upstream: "fake"}, Stderr: &passedErr}
	res, err := rec.Run(ctx, clientIO{clientIn, &clientOut}, srv, strings.NewReader(stderr))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	res.End(ctx, 0)
	if err := db.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if got := <-gotStdin; string(got) != readAll(t, clientIn) {
		t.Errorf("server got %q; want the client's bytes unchanged", got)
	}
	if got := clientOut.String(); got != serverOut {
		t.Errorf("client got %q; want %q", got, serverOut)
	}
	if got := passedErr.String(); got != stderr {
		t.Errorf("stderr passed through = %q; want %q", got, stderr)
	}

	frames, err := db.Frames(ctx, res.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Dir       string
		Raw       string
		Kind      string
		Method    string
		Batch     bool
		Malformed bool
	}
	var rows []row
	for _, f := range frames {
		rows = append(rows, row{f.Direction.String(), string(f.Raw), f.Kind.String(), f.Method, f.Batch, f.Malformed})
	}
	// stdin and stdout interleave in an order the test does not fix; sort
	// by direction, keeping each direction's order.
	var c2s, s2c []row
	for _, r := range rows {
		if r.Dir == "c2s" {
			c2s = append(c2s, r)
		} else {
			s2c = append(s2c, r)
		}
	}
	wantC2S := []row{
		{"c2s", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","clientInfo":{"name":"t","version":"1"}}}` + "\n", "request", "initialize", false, false},
		{"c2s", `[{"jsonrpc":"2.0","id":2,"method":"tools/list"},{"jsonrpc":"2.0","method":"notifications/x"}]` + "\n", "batch", "", true, false},
		{"c2s", "not json\r\n", "invalid", "", false, true},
		{"c2s", `{"jsonrpc":"2.0","id":3,"method":"ping"}`, "request", "ping", false, false},
	}
	if diff := cmp.Diff(wantC2S, c2s); diff != "" {
		t.Errorf("client frames (-want +got):\n%s", diff)
	}
	if got, want := len(s2c), 4; got != want {
		t.Fatalf("server-side frames = %d (%v); want 2 stdout + 2 stderr", got, s2c)
	}
	for _, f := range frames {
		if f.Batch && f.Direction == store.ClientToServer {
			want := []store.Member{{Kind: store.KindRequest, ID: "2", Method: "tools/list"}, {Kind: store.KindNotification, Method: "notifications/x"}}
			if diff := cmp.Diff(want, f.Members); diff != "" {
				t.Errorf("batch members (-want +got):\n%s", diff)
			}
		}
	}
	sess, err := db.Session(ctx, res.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	if sess.Revision != "2025-03-26" || sess.Era != "legacy" || string(sess.ServerInfo) != `{"name":"s"}` || sess.ExitCode != 0 {
		t.Errorf("session = %+v; want revision 2025-03-26, legacy, serverInfo and exit code 0", sess)
	}
}

func readAll(tb testing.TB, r *strings.Reader) string {
	tb.Helper()
	r.Seek(0, io.SeekStart)
	b, _ := io.ReadAll(r)
	return string(b)
}

func TestStdio_ServerExitsMidSession(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	srv := newPipeServer()
	clientR, clientW := io.Pipe()
	var clientOut bytes.Buffer
	go func() {
		// The server reads one line, answers and dies.
		buf := make([]byte, 1024)
		srv.stdinR.Read(buf)
		srv.stdoutW.Write([]byte("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n"))
		srv.stdoutW.Close()
		srv.stdinR.CloseWithError(io.ErrClosedPipe)
	}()
	go clientW.Write([]byte("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n"))
	rec := &recorder.Stdio{Sink: db}
	res, err := rec.Run(ctx, clientIO{clientR, &clientOut}, srv, nil)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	clientW.Close()
	res.End(ctx, 1)
	if err := db.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	frames, err := db.Frames(ctx, res.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(frames), 2; got != want {
		t.Fatalf("frames = %d; want %d", got, want)
	}
	if got := clientOut.String(); got != "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n" {
		t.Errorf("client got %q", got)
	}
}

// gatedSink is a store.DB whose CreateSession (if create is set) or
// CloseStream (if close is set) waits until that channel is closed: a
// cassette whose write lock another recorder holds, a disk that stalls.
type gatedSink struct {
	*store.DB
	create, close chan struct{}
}

func (g gatedSink) CreateSession(ctx context.Context, s *store.Session) error {
	if g.create != nil {
		<-g.create
	}
	return g.DB.CreateSession(ctx, s)
}

func (g gatedSink) CloseStream(ctx context.Context, st *store.Stream) error {
	if g.close != nil {
		<-g.close
	}
	return g.DB.CloseStream(ctx, st)
}

// TestStdio_ForwardsBeforeSessionCreated: while the cassette cannot give
// the session its ID yet, the client's request reaches the server and the
// server's answer reaches the client; once it can, the frames are
// recorded in the order they passed.
func TestStdio_ForwardsBeforeSessionCreated(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	sink := gatedSink{DB: db, create: make(chan struct{})}
	srv := newPipeServer()
	clientR, clientW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan *recorder.StdioResult, 1)
	go func() {
		rec := &recorder.Stdio{Sink: sink}
		res, err := rec.Run(ctx, clientIO{clientR, outW}, srv, nil)
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	req := `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n"
	resp := `{"jsonrpc":"2.0","id":1,"result":{}}` + "\n"
	go clientW.Write([]byte(req))
	buf := make([]byte, len(req))
	if _, err := io.ReadFull(srv.stdinR, buf); err != nil || string(buf) != req {
		t.Fatalf("the server got %q, %v; want the request, forwarded while the session is not created", buf, err)
	}
	go srv.stdoutW.Write([]byte(resp))
	buf = make([]byte, len(resp))
	if _, err := io.ReadFull(outR, buf); err != nil || string(buf) != resp {
		t.Fatalf("the client got %q, %v; want the answer, forwarded while the session is not created", buf, err)
	}
	close(sink.create)
	clientW.Close()
	srv.stdoutW.Close()
	go io.Copy(io.Discard, srv.stdinR)
	res := <-done
	res.End(ctx, 0)
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	if err := db.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	fs, err := db.Frames(ctx, res.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range fs {
		got = append(got, fmt.Sprintf("%d %s %s", f.Seq, f.Direction, f.Raw))
	}
	want := []string{"1 c2s " + req, "2 s2c " + resp}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("recorded frames mismatch (-want +got):\n%s", diff)
	}
}
