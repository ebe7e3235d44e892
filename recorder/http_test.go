package recorder_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpvcr/mcpvcr/recorder"
	"github.com/mcpvcr/mcpvcr/store"
)

// proxy starts recorder.HTTP in front of upstream and returns its URL and
// the cassette.
func proxy(tb testing.TB, upstream http.Handler) (string, *store.DB, string) {
	tb.Helper()
	up := httptest.NewServer(upstream)
	tb.Cleanup(up.Close)
	u, _ := url.Parse(up.URL + "/mcp")
	path := filepath.Join(tb.TempDir(), "c.db")
	db, err := store.Open(context.Background(), path)
	if err != nil {
		tb.Fatal(err)
	}
	rec := &recorder.HTTP{Upstream: u, Sink: db}
	srv := httptest.NewServer(rec)
	tb.Cleanup(func() {
		srv.Close()
		rec.Close(context.Background())
		db.Close()
	})
	return srv.URL + "/mcp", db, path
}

func framesOf(tb testing.TB, db *store.DB) ([]store.Stream, []store.Frame) {
	tb.Helper()
	ctx := context.Background()
	if err := db.Flush(ctx); err != nil {
		tb.Fatal(err)
	}
	ss, err := db.Sessions(ctx)
	if err != nil || len(ss) == 0 {
		tb.Fatalf("sessions: %v %v", ss, err)
	}
	st, err := db.Streams(ctx, ss[0].ID)
	if err != nil {
		tb.Fatal(err)
	}
	fs, err := db.Frames(ctx, ss[0].ID)
	if err != nil {
		tb.Fatal(err)
	}
	return st, fs
}

// waitClosed waits until every stream of the first session has ended.
func waitClosed(tb testing.TB, db *store.DB, n int) []store.Stream {
	tb.Helper()
	for range 2000 {
		st, _ := framesOf(tb, db)
		done := len(st) >= n
		for _, s := range st {
			done = done && s.End != store.EndOpen
		}
		if done {
			return st
		}
		// The proxy closes a stream after its handler returns; Flush
		// above is the synchronisation, this loop only bounds retries.
	}
	tb.Fatal("streams did not end")
	return nil
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// answer is a server's answer to initBody.
const answer = `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`

// postInit posts initBody to url and sends the answer's body (or the
// error) on the channel it returns.
func postInit(url string) <-chan string {
	got := make(chan string, 1)
	go func() {
		resp, err := http.Post(url, "application/json", strings.NewReader(initBody))
		if err != nil {
			got <- err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body) // ends at Content-Length
		got <- string(b)
	}()
	return got
}

// TestHTTP_GarbageAndDeathMidStream: the upstream sends an event whose
// data is not JSON, then dies without ending the chunked body. The client
// gets the same bytes and the same broken end; the cassette keeps the
// events, the garbage flagged, and the stream marked upstream-error.
func TestHTTP_GarbageAndDeathMidStream(t *testing.T) {
	events := "id: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\n" +
		"id: 2\ndata: this is not json\n\n"
	up := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		io.WriteString(w, events)
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler) // die mid-stream
	})
	u, db, _ := proxy(t, up)
	resp, err := http.Post(u, "application/json", strings.NewReader(initBody))
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err == nil {
		t.Errorf("reading the body succeeded; want the upstream's broken end passed on")
	}
	if string(got) != events {
		t.Errorf("client got %q; want %q", got, events)
	}
	st := waitClosed(t, db, 1)
	if st[0].End != store.EndUpstreamError {
		t.Errorf("stream end = %v; want upstream-error", st[0].End)
	}
	_, fs := framesOf(t, db)
	var malformed, events2 int
	for _, f := range fs {
		if f.SSE {
			events2++
			if f.Malformed {
				malformed++
			}
		}
	}
	if events2 != 2 || malformed != 1 {
		t.Errorf("recorded %d events, %d malformed; want 2 and 1", events2, malformed)
	}
}

// TestHTTP_UpstreamDown: a request to an upstream that is gone gets 502
// with a JSON-RPC error carrying the request's id.
func TestHTTP_UpstreamDown(t *testing.T) {
	up := httptest.NewServer(http.NotFoundHandler())
	u, _ := url.Parse(up.URL + "/mcp")
	up.Close()
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	srv := httptest.NewServer(&recorder.HTTP{Upstream: u, Sink: db})
	defer srv.Close()
	resp, err := http.Post(srv.URL+"/mcp", "application/json", strings.NewReader(initBody))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadGateway || !strings.Contains(string(b), `"id":1`) || !strings.Contains(string(b), "upstream") {
		t.Errorf("answer = %d %s; want 502 with a JSON-RPC error for id 1", resp.StatusCode, b)
	}
	st := waitClosed(t, db, 1)
	if st[0].End != store.EndUpstreamError || st[0].Err == "" {
		t.Errorf("stream = %v %q; want upstream-error with the cause", st[0].End, st[0].Err)
	}
}

// TestHTTP_BigBody forwards and records a 16 MB POST body and answer.
func TestHTTP_BigBody(t *testing.T) {
	big := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + strings.Repeat("y", 16<<20) + `"}}}`
	var gotLen int
	up := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		gotLen = len(b)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(strings.Replace(string(b), `"method":"tools/call","params"`, `"result"`, 1)))
	})
	u, db, _ := proxy(t, up)
	resp, err := http.Post(u, "application/json", strings.NewReader(big))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if gotLen != len(big) || len(b) != len(big)-len(`"method":"tools/call","params"`)+len(`"result"`) {
		t.Fatalf("upstream got %d bytes, client %d", gotLen, len(b))
	}
	waitClosed(t, db, 1)
	_, fs := framesOf(t, db)
	if len(fs) != 2 || string(fs[0].Raw) != big || string(fs[1].Raw) != string(b) {
		t.Errorf("recorded %d frames; want the 16 MB request and answer, exact", len(fs))
	}
}

// TestHTTP_Redaction: credentials reach the upstream unchanged and never
// reach the cassette file.
func TestHTTP_Redaction(t *testing.T) {
	secrets := []string{"s3cr3t-bearer", "c00kie-value", "set-c00kie-value", "api-k3y-value", "qu3ry-t0ken", "pr0xy-auth"}
	var mu sync.Mutex
	var seen http.Header
	var seenQuery string
	up := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen, seenQuery = r.Header.Clone(), r.URL.RawQuery
		mu.Unlock()
		w.Header().Set("Set-Cookie", "session=set-c00kie-value; HttpOnly")
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	})
	u, db, path := proxy(t, up)
	req, _ := http.NewRequest("POST", u+"?access_token=qu3ry-t0ken&x=1", strings.NewReader(initBody))
	req.Header.Set("Authorization", "Bearer s3cr3t-bearer")
	req.Header.Set("Cookie", "sid=c00kie-value")
	req.Header.Set("X-Api-Key", "api-k3y-value")
	req.Header.Set("Proxy-Authorization", "Basic pr0xy-auth")
	req.Header.Set("Origin", "http://localhost:3000")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if got := resp.Header.Get("Set-Cookie"); !strings.Contains(got, "set-c00kie-value") {
		t.Errorf("client got Set-Cookie %q; want it unchanged", got)
	}
	mu.Lock()
	if seen.Get("Authorization") != "Bearer s3cr3t-bearer" || seen.Get("Cookie") != "sid=c00kie-value" || seen.Get("X-Api-Key") != "api-k3y-value" || !strings.Contains(seenQuery, "qu3ry-t0ken") {
		t.Errorf("upstream got %v ?%s; want every credential unchanged", seen, seenQuery)
	}
	if seen.Get("Origin") != "http://localhost:3000" {
		t.Errorf("upstream got Origin %q; want it passed through", seen.Get("Origin"))
	}
	mu.Unlock()
	waitClosed(t, db, 1)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	wal, _ := os.ReadFile(path + "-wal")
	for _, s := range secrets {
		if strings.Contains(string(raw), s) || strings.Contains(string(wal), s) {
			t.Errorf("the cassette file holds %q", s)
		}
	}
	if !strings.Contains(string(raw)+string(wal), "Bearer REDACTED-") {
		t.Errorf("the cassette lacks the placeholder for the bearer token")
	}
}

// TestHTTP_HostPassthrough: a Host naming the proxy becomes the upstream's
// and gets Header; a foreign Host is refused with 403 before reaching the
// upstream, and one AllowOrigins names goes upstream unchanged, without
// Header.
func TestHTTP_HostPassthrough(t *testing.T) {
	type seenReq struct{ host, auth string }
	seen := make(chan seenReq, 4)
	up := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen <- seenReq{r.Host, r.Header.Get("Authorization")}
		w.WriteHeader(http.StatusAccepted)
	})
	upSrv := httptest.NewServer(up)
	defer upSrv.Close()
	u, _ := url.Parse(upSrv.URL + "/mcp")
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	srv := httptest.NewServer(&recorder.HTTP{Upstream: u, Sink: db, AllowOrigins: []string{"http://allowed.example"},
		Header: http.Header{"Authorization": {"Bearer user-token"}}})
	defer srv.Close()
	tests := []struct {
		host       string
		status     int
		wantHost   string
		wantHeader string
	}{
		{"", http.StatusAccepted, u.Host, "Bearer user-token"},
		{"rebind.example:80", http.StatusForbidden, "", ""},
		{"allowed.example:80", http.StatusAccepted, "allowed.example:80", ""},
	}
	for _, tt := range tests {
		req, _ := http.NewRequest("POST", srv.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
		if tt.host != "" {
			req.Host = tt.host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.status {
			t.Errorf("Host %q: status %d; want %d", tt.host, resp.StatusCode, tt.status)
		}
		if tt.status == http.StatusForbidden {
			continue
		}
		got := <-seen
		if got.host != tt.wantHost || got.auth != tt.wantHeader {
			t.Errorf("Host %q reached the upstream as %q with Authorization %q; want %q with %q", tt.host, got.host, got.auth, tt.wantHost, tt.wantHeader)
		}
	}
	select {
	case got := <-seen:
		t.Errorf("a refused request reached the upstream: %+v", got)
	default:
	}
}

// TestHTTP_ManySSEStreams: 50 concurrent SSE answers of 100 events through
// the proxy all arrive whole and are all recorded (the ReverseProxy SSE
// cut of golang/go#40747 does not happen).
func TestHTTP_ManySSEStreams(t *testing.T) {
	const streams, events = 50, 100
	up := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		for i := range events {
			io.WriteString(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":"+strings.Repeat("1", i%7+1)+"}}\n\n")
			w.(http.Flusher).Flush()
		}
		io.WriteString(w, "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n")
	})
	u, db, _ := proxy(t, up)
	var wg sync.WaitGroup
	errs := make(chan string, streams)
	for range streams {
		wg.Go(func() {
			req, _ := http.NewRequest("POST", u, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`))
			req.Header.Set("Mcp-Session-Id", "s1")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				errs <- err.Error()
				return
			}
			defer resp.Body.Close()
			n := 0
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
				if strings.HasPrefix(sc.Text(), "data: ") {
					n++
				}
			}
			if n != events+1 {
				errs <- "stream cut short"
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	waitClosed(t, db, streams)
	_, fs := framesOf(t, db)
	if got, want := len(fs), streams*(events+2); got != want {
		t.Errorf("recorded %d frames; want %d", got, want)
	}
}

// TestHTTP_ClientNeverReads: a client that opens an SSE answer and never
// reads it holds up only its own stream; once it goes away, the proxy's
// goroutines end and the stream is recorded as client-aborted.
func TestHTTP_ClientNeverReads(t *testing.T) {
	stop := make(chan struct{})
	up := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		chunk := "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"data\":\"" + strings.Repeat("z", 4096) + "\"}}\n\n"
		for {
			select {
			case <-stop:
				return
			case <-r.Context().Done():
				return
			default:
			}
			if _, err := io.WriteString(w, chunk); err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
	})
	u, db, _ := proxy(t, up)
	defer close(stop)
	before := runtime.NumGoroutine()
	tr := &http.Transport{}
	req, _ := http.NewRequest("POST", u, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"flood"}}`))
	req.Header.Set("Mcp-Session-Id", "never-reads")
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	// Read nothing; the upstream fills the buffers and blocks. Then leave.
	resp.Body.Close()
	tr.CloseIdleConnections()
	st := waitClosed(t, db, 1)
	if st[0].End != store.EndClientAborted {
		t.Errorf("stream end = %v; want client-aborted", st[0].End)
	}
	for i := 0; runtime.NumGoroutine() > before+2 && i < 100000; i++ {
		runtime.Gosched()
	}
	if after := runtime.NumGoroutine(); after > before+2 {
		t.Errorf("goroutines: %d before, %d after the client left", before, after)
	}
}

// TestHTTP_RedactsEndpointToken: an HTTP+SSE endpoint event whose URL
// carries a token reaches the client as sent, and is stored redacted.
func TestHTTP_RedactsEndpointToken(t *testing.T) {
	up := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		io.WriteString(w, "event: endpoint\ndata: /messages?sessionId=abc&token=3ndp0int-t0ken\n\n")
	})
	u, db, path := proxy(t, up)
	resp, err := http.Get(strings.TrimSuffix(u, "/mcp") + "/sse")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), "token=3ndp0int-t0ken") {
		t.Errorf("client got %q; want the endpoint as sent", b)
	}
	waitClosed(t, db, 1)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(path)
	wal, _ := os.ReadFile(path + "-wal")
	if strings.Contains(string(raw)+string(wal), "3ndp0int-t0ken") {
		t.Error("the cassette holds the endpoint's token")
	}
}

// TestHTTP_AnswerBeforeItsEnd: a JSON answer with a Content-Length, whose
// last bytes come with the end of the upstream's body, reaches the client
// whole before the recorder records how its stream ended (which here
// cannot finish until the client has it); the stream is then recorded as
// complete, with the answer.
func TestHTTP_AnswerBeforeItsEnd(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(answer))
	}))
	defer up.Close()
	u, _ := url.Parse(up.URL + "/mcp")
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	sink := gatedSink{DB: db, close: make(chan struct{})}
	rec := &recorder.HTTP{Upstream: u, Sink: sink}
	srv := httptest.NewServer(rec)
	defer srv.Close()

	got := postInit(srv.URL + "/mcp")
	select {
	case b := <-got:
		if b != answer {
			t.Fatalf("client got %q; want %q", b, answer)
		}
	case <-time.After(10 * time.Second):
		close(sink.close)
		t.Fatal("the client did not get its answer while the stream's end was being recorded")
	}
	close(sink.close)
	rec.Close(context.Background())
	st := waitClosed(t, db, 1)
	if st[0].End != store.EndComplete {
		t.Errorf("stream ended %v; want %v", st[0].End, store.EndComplete)
	}
	if _, fs := framesOf(t, db); len(fs) != 2 || string(fs[1].Raw) != answer {
		t.Errorf("recorded %d frames; want the request and the answer %q", len(fs), answer)
	}
}

// watchSink is a cassette whose OpenStream waits for gate, and which
// tells requests of each client frame it is handed.
type watchSink struct {
	*store.DB
	gate     <-chan struct{}
	requests chan<- string
}

func (s watchSink) OpenStream(ctx context.Context, st *store.Stream) error {
	select {
	case <-s.gate:
	case <-time.After(10 * time.Second):
		return errors.New("the request did not reach the upstream while its stream was being recorded")
	}
	return s.DB.OpenStream(ctx, st)
}

func (s watchSink) Append(ctx context.Context, f *store.Frame) error {
	if f.Direction == store.ClientToServer {
		s.requests <- string(f.Raw)
	}
	return s.DB.Append(ctx, f)
}

// TestHTTP_RequestLeavesBeforeItsRecording: a request goes upstream before
// the recorder does the work of recording it (here the cassette cannot
// open its stream until the upstream has the request), and it is
// recorded while the server still works on it, without waiting for the
// answer; the request then comes before the answer in the session.
func TestHTTP_RequestLeavesBeforeItsRecording(t *testing.T) {
	got := make(chan struct{})     // closed once the upstream has the request
	release := make(chan struct{}) // closed to let the upstream answer
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		close(got)
		<-release
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(answer))
	}))
	defer up.Close()
	u, _ := url.Parse(up.URL + "/mcp")
	db := openDB(t)
	requests := make(chan string, 1)
	rec := &recorder.HTTP{Upstream: u, Sink: watchSink{DB: db, gate: got, requests: requests}}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	defer rec.Close(context.Background())

	answered := postInit(srv.URL + "/mcp")
	select {
	case req := <-requests:
		if req != initBody {
			t.Errorf("recorded request %q; want %q", req, initBody)
		}
	case <-time.After(10 * time.Second):
		close(release)
		t.Fatal("the request was not recorded while the server worked on it")
	}
	close(release)
	if b := <-answered; b != answer {
		t.Fatalf("client got %q; want %q", b, answer)
	}
	rec.Close(context.Background())
	st := waitClosed(t, db, 1)
	if st[0].End != store.EndComplete {
		t.Errorf("stream ended %v; want %v", st[0].End, store.EndComplete)
	}
	if _, fs := framesOf(t, db); len(fs) != 2 || string(fs[0].Raw) != initBody || string(fs[1].Raw) != answer {
		t.Errorf("recorded %d frames; want the request, then the answer", len(fs))
	}
}

// earlyAnswer is a transport whose server answers before the transport
// reports the request written: it tells the request's trace only as it
// hands back the answer, from another goroutine, as net/http's transport
// may when a server answers before it has read the whole request.
type earlyAnswer struct {
	answer string
	wrote  sync.WaitGroup
}

func (t *earlyAnswer) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	if trace := httptrace.ContextClientTrace(r.Context()); trace != nil && trace.WroteRequest != nil {
		t.wrote.Go(func() { trace.WroteRequest(httptrace.WroteRequestInfo{}) })
	}
	return &http.Response{StatusCode: http.StatusOK, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        http.Header{"Content-Type": {"application/json"}},
		Body:          io.NopCloser(strings.NewReader(t.answer)),
		ContentLength: int64(len(t.answer)), Request: r}, nil
}

// TestHTTP_AnswerBeforeRequestWritten: an answer that comes before the
// transport reports its request written is recorded after the request,
// on the stream the request opened (with -race: and the stream's
// recording and the answer's do not race).
func TestHTTP_AnswerBeforeRequestWritten(t *testing.T) {
	u, _ := url.Parse("http://upstream.invalid/mcp")
	db := openDB(t)
	tr := &earlyAnswer{answer: answer}
	rec := &recorder.HTTP{Upstream: u, Sink: db, Transport: tr}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	for range 20 {
		resp, err := http.Post(srv.URL+"/mcp", "application/json", strings.NewReader(initBody))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != answer {
			t.Fatalf("client got %q; want %q", b, answer)
		}
	}
	tr.wrote.Wait()
	rec.Close(context.Background())
	ctx := context.Background()
	if err := db.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	ss, err := db.Sessions(ctx)
	if err != nil || len(ss) != 20 {
		t.Fatalf("sessions: %d, %v; want 20, one per initialize", len(ss), err)
	}
	for _, s := range ss {
		st, err := db.Streams(ctx, s.ID)
		if err != nil || len(st) != 1 || st[0].Status != http.StatusOK || st[0].End != store.EndComplete {
			t.Fatalf("session %d streams: %+v, %v; want one complete with status 200", s.ID, st, err)
		}
		fs, err := db.Frames(ctx, s.ID)
		if err != nil || len(fs) != 2 || string(fs[0].Raw) != initBody || string(fs[1].Raw) != answer || fs[0].StreamID != st[0].ID || fs[1].StreamID != st[0].ID {
			t.Fatalf("session %d: recorded %d frames (%v); want the request, then the answer, on its stream", s.ID, len(fs), err)
		}
	}
}
