package recorder_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"hash"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpvcr/mcpvcr/recorder"
	"github.com/mcpvcr/mcpvcr/store"
)

// Memory of big frames (issues #46 and #48): a frame the recorder
// forwards and stores costs it about one copy of at most MaxFrame bytes,
// not several copies of the frame.

// bigJSON is a reader of one JSON-RPC message of n bytes (with its
// newline when line is set), made as it is read, and the hash of what
// it handed out.
type bigJSON struct {
	head, tail string
	pad        int64 // bytes of padding left
	off        int   // of head, then of tail, handed out
	h          hash.Hash
}

func newBigJSON(n int64, head, tail string) *bigJSON {
	return &bigJSON{head: head, tail: tail, pad: n - int64(len(head)+len(tail)), h: sha256.New()}
}

var padding = bytes.Repeat([]byte("abcdefgh"), 8<<10)

func (b *bigJSON) Read(p []byte) (int, error) {
	var n int
	switch {
	case b.off < len(b.head):
		n = copy(p, b.head[b.off:])
		b.off += n
	case b.pad > 0:
		n = copy(p[:min(int64(len(p)), b.pad)], padding)
		b.pad -= int64(n)
	case b.off-len(b.head) < len(b.tail):
		n = copy(p, b.tail[b.off-len(b.head):])
		b.off += n
	default:
		return 0, io.EOF
	}
	b.h.Write(p[:n])
	return n, nil
}

func (b *bigJSON) sum() string { return fmt.Sprintf("%x", b.h.Sum(nil)) }

// hashWriter hashes what it is written and counts it.
type hashWriter struct {
	h hash.Hash
	n int64
}

func newHashWriter() *hashWriter { return &hashWriter{h: sha256.New()} }

func (w *hashWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	return w.h.Write(p)
}

func (w *hashWriter) sum() string { return fmt.Sprintf("%x", w.h.Sum(nil)) }

// heapPeak samples the bytes of the heap's objects, live or not yet
// collected, until stop: its peak above the level at start. Sampling may
// miss a peak shorter than its period, never add to one.
type heapPeak struct {
	base, peak uint64
	stop       chan struct{}
	done       sync.WaitGroup
}

func heapObjects() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func startHeapPeak() *heapPeak {
	runtime.GC()
	m := &heapPeak{base: heapObjects(), stop: make(chan struct{})}
	m.peak = m.base
	m.done.Add(1)
	go func() {
		defer m.done.Done()
		t := time.NewTicker(200 * time.Microsecond)
		defer t.Stop()
		for {
			if v := heapObjects(); v > m.peak {
				m.peak = v
			}
			select {
			case <-m.stop:
				return
			case <-t.C:
			}
		}
	}()
	return m
}

// end returns the peak above the level at start.
func (m *heapPeak) end() uint64 {
	close(m.stop)
	m.done.Wait()
	if v := heapObjects(); v > m.peak {
		m.peak = v
	}
	return m.peak - m.base
}

// bigFrameSlack is what a big frame may cost the recorder beyond the one
// copy of at most MaxFrame bytes it keeps: buffers of the size of a read,
// the frame's row on its way to the sink, the heap's own rounding. An SSE
// event over the limit peaked at 22 MB beyond it without -race and at
// 24.1 MB with it (the race detector's shadow of the heap); 32 MB keeps
// the bound a constant, far under a second copy of the frame.
const bigFrameSlack = 32 << 20

// serverLine is the head and tail of a server's answer padded to a size.
const (
	lineHead = `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"`
	lineTail = `"}]}}` + "\n"
)

func TestStdio_BigLineMemory(t *testing.T) {
	for _, c := range []struct {
		name         string
		line, max    int64
		wantRaw      int64
		wantOversize int64
	}{
		{"64 MB under the default limit", 64 << 20, 0, 64 << 20, 0},
		{"80 MB over a limit of 16 MB", 80 << 20, 16 << 20, 16 << 20, 80 << 20},
		{"80 MB over the default limit", 80 << 20, 0, 64 << 20, 80 << 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			db := openDB(t)
			peak, id := recordBigLine(t, db, c.line, c.max)
			checkBigFrame(t, db, id, store.ServerToClient, c.wantRaw, c.wantOversize)
			limit := c.max
			if limit == 0 {
				limit = recorder.DefaultMaxFrame
			}
			t.Logf("heap peak %.1f MB for a line of %d MB, MaxFrame %d MB", float64(peak)/(1<<20), c.line>>20, limit>>20)
			if peak > uint64(limit)+bigFrameSlack {
				t.Errorf("heap peak %.1f MB; want at most MaxFrame (%d MB) and %d MB", float64(peak)/(1<<20), limit>>20, bigFrameSlack>>20)
			}
		})
	}
}

// recordBigLine records a stdio server that answers with one line of
// size bytes through recorder.Stdio with MaxFrame max into db, checks
// that the client got the line byte for byte, and returns the heap's
// peak while it did and the session's id.
func recordBigLine(tb testing.TB, db *store.DB, size, max int64) (uint64, int64) {
	tb.Helper()
	ctx := context.Background()
	srv := newPipeServer()
	src := newBigJSON(size, lineHead, lineTail)
	go func() {
		io.Copy(io.Discard, srv.stdinR)
		io.CopyBuffer(srv.stdoutW, src, make([]byte, 64<<10))
		srv.stdoutW.Close()
	}()
	out := newHashWriter()
	rec := &recorder.Stdio{Sink: db, MaxFrame: max}
	m := startHeapPeak()
	res, err := rec.Run(ctx, clientIO{strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}` + "\n"), out}, srv, nil)
	if err != nil {
		tb.Fatal(err)
	}
	res.End(ctx, 0)
	if err := db.Flush(ctx); err != nil {
		tb.Fatal(err)
	}
	peak := m.end()
	if out.n != size || out.sum() != src.sum() {
		tb.Errorf("client got %d bytes (sha256 %s); want the server's %d bytes (sha256 %s)", out.n, out.sum(), size, src.sum())
	}
	return peak, res.SessionID
}

// BenchmarkRecordBigFrame records a stdio line of 64 MB (under the
// default MaxFrame) and one of 80 MB (over it, stored cut), and reports
// the heap's peak above its level before, in MB (peak-heap-MB; what
// SQLite allocates in C is not in it: see docs for RSS).
func BenchmarkRecordBigFrame(b *testing.B) {
	for _, size := range []int64{64 << 20, 80 << 20} {
		b.Run(fmt.Sprintf("%dMB", size>>20), func(b *testing.B) {
			var worst uint64
			for b.Loop() {
				db, err := store.Open(context.Background(), filepath.Join(b.TempDir(), "b.db"))
				if err != nil {
					b.Fatal(err)
				}
				peak, _ := recordBigLine(b, db, size, 0)
				db.Close()
				worst = max(worst, peak)
			}
			b.SetBytes(size)
			b.ReportMetric(float64(worst)/(1<<20), "peak-heap-MB")
		})
	}
}

// checkBigFrame checks the one frame in direction dir of the session:
// wantRaw bytes stored, and flagged with its length when it was cut.
func checkBigFrame(t *testing.T, db *store.DB, sessionID int64, dir store.Direction, wantRaw, wantOversize int64) {
	t.Helper()
	fs, err := db.Frames(context.Background(), sessionID)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fs {
		if f.Direction != dir || int64(len(f.Raw)) < 1<<20 {
			continue
		}
		if int64(len(f.Raw)) != wantRaw || f.Oversize != wantOversize {
			t.Errorf("stored %d bytes, oversize %d; want %d, oversize %d", len(f.Raw), f.Oversize, wantRaw, wantOversize)
		}
		return
	}
	t.Errorf("no big frame %s stored among %d", dir, len(fs))
}

// bigProxy starts recorder.HTTP with MaxFrame max in front of upstream.
func bigProxy(tb testing.TB, upstream http.Handler, max int64) (string, *store.DB, *recorder.HTTP, <-chan struct{}) {
	tb.Helper()
	up := httptest.NewServer(upstream)
	tb.Cleanup(up.Close)
	u, _ := url.Parse(up.URL + "/mcp")
	db, err := store.Open(context.Background(), filepath.Join(tb.TempDir(), "c.db"))
	if err != nil {
		tb.Fatal(err)
	}
	rec := &recorder.HTTP{Upstream: u, Sink: db, MaxFrame: max}
	served := make(chan struct{}, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.ServeHTTP(w, r)
		served <- struct{}{}
	}))
	tb.Cleanup(func() {
		srv.Close()
		rec.Close(context.Background())
		db.Close()
	})
	return srv.URL + "/mcp", db, rec, served
}

func TestHTTP_BigFrameMemory(t *testing.T) {
	const call = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`
	for _, c := range []struct {
		name         string
		kind         string // json, sse: the answer; request: the client's body
		size, max    int64
		wantRaw      int64
		wantOversize int64
	}{
		{"JSON answer of 64 MB under the default limit", "json", 64 << 20, 0, 64 << 20, 0},
		{"JSON answer of 80 MB over a limit of 16 MB", "json", 80 << 20, 16 << 20, 16 << 20, 80 << 20},
		{"SSE event of 64 MB under the default limit", "sse", 64 << 20, 0, 64 << 20, 0},
		{"SSE event of 80 MB over a limit of 16 MB", "sse", 80 << 20, 16 << 20, 16 << 20, 80 << 20},
		{"request body of 64 MB under the default limit", "request", 64 << 20, 0, 64 << 20, 0},
		{"request body of 80 MB over a limit of 16 MB", "request", 80 << 20, 16 << 20, 16 << 20, 80 << 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			var src *bigJSON
			got := newHashWriter()
			up := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if c.kind == "request" {
					io.Copy(got, r.Body)
					w.Header().Set("Content-Type", "application/json")
					io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
					return
				}
				io.Copy(io.Discard, r.Body)
				if c.kind == "sse" {
					w.Header().Set("Content-Type", "text/event-stream")
				} else {
					w.Header().Set("Content-Type", "application/json")
					w.Header().Set("Content-Length", fmt.Sprint(c.size))
				}
				io.CopyBuffer(w, src, make([]byte, 64<<10))
			})
			u, db, rec, served := bigProxy(t, up, c.max)
			switch c.kind {
			case "json":
				src = newBigJSON(c.size, lineHead, lineTail)
			case "sse":
				src = newBigJSON(c.size, "event: message\ndata: "+lineHead, lineTail+"\n")
			case "request":
				src = newBigJSON(c.size, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"t":"`, `"}}}`)
			}
			m := startHeapPeak()
			var body io.Reader = strings.NewReader(call)
			if c.kind == "request" {
				body = src
			}
			req, _ := http.NewRequest(http.MethodPost, u, body)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if c.kind == "request" {
				req.ContentLength = c.size
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			answer := io.Writer(io.Discard)
			if c.kind != "request" {
				answer = got
			}
			io.Copy(answer, resp.Body)
			resp.Body.Close()
			waitStreamsEnded(t, db, served)
			peak := m.end()
			if err := rec.Err(); err != nil {
				t.Fatal(err)
			}
			if got.n != c.size || got.sum() != src.sum() {
				t.Errorf("the other end got %d bytes (sha256 %s); want the %d bytes sent (sha256 %s)", got.n, got.sum(), c.size, src.sum())
			}
			ss, err := db.Sessions(context.Background())
			if err != nil || len(ss) != 1 {
				t.Fatalf("sessions %v, %v", ss, err)
			}
			dir := store.ServerToClient
			if c.kind == "request" {
				dir = store.ClientToServer
			}
			checkBigFrame(t, db, ss[0].ID, dir, c.wantRaw, c.wantOversize)
			limit := c.max
			if limit == 0 {
				limit = recorder.DefaultMaxFrame
			}
			t.Logf("heap peak %.1f MB for a frame of %d MB, MaxFrame %d MB", float64(peak)/(1<<20), c.size>>20, limit>>20)
			if peak > uint64(limit)+bigFrameSlack {
				t.Errorf("heap peak %.1f MB; want at most MaxFrame (%d MB) and %d MB", float64(peak)/(1<<20), limit>>20, bigFrameSlack>>20)
			}
		})
	}
}

// waitStreamsEnded waits until the proxy has served the request (served
// hears of each ServeHTTP call once it has returned, its stream's end
// handed to the sink), then checks that the first session has a stream
// and all its streams have ended, without reading frames (which would
// cost the heap their bytes).
func waitStreamsEnded(tb testing.TB, db *store.DB, served <-chan struct{}) {
	tb.Helper()
	ctx := context.Background()
	select {
	case <-served:
	case <-time.After(time.Minute):
		tb.Fatal("the proxy did not return from the request")
	}
	if err := db.Flush(ctx); err != nil {
		tb.Fatal(err)
	}
	ss, err := db.Sessions(ctx)
	if err != nil || len(ss) == 0 {
		tb.Fatalf("Sessions() = %v, %v; want the recorded session", ss, err)
	}
	st, err := db.Streams(ctx, ss[0].ID)
	if err != nil {
		tb.Fatal(err)
	}
	if len(st) == 0 {
		tb.Fatal("the session has no stream")
	}
	for _, s := range st {
		if s.End == store.EndOpen {
			tb.Fatalf("stream %d is open after the proxy served its request", s.ID)
		}
	}
}
