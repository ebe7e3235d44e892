package replayer

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpvcr/mcpvcr/clock"
	"github.com/mcpvcr/mcpvcr/store"
)

type pipeClient struct {
	io.Reader
	io.Writer
}

// TestServeStdio_Pace: with Pace 1 the recorded gap between a request and
// its answer is waited on the injected clock; nothing is sent before the
// fake clock gets there.
func TestServeStdio_Pace(t *testing.T) {
	rec := stdioRecording(t, 1,
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{}}`,
	)
	rec.Frames[0].Offset = 10 * time.Millisecond
	rec.Frames[1].Offset = 510 * time.Millisecond
	fake := clock.NewFake(time.Unix(0, 0))
	srv := &Server{Recordings: []*store.Recording{rec.Recording}, Pace: 1, Clock: fake}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan *Report, 1)
	go func() {
		rep, _ := srv.ServeStdio(context.Background(), pipeClient{inR, outW})
		outW.Close()
		done <- rep
	}()
	go io.WriteString(inW, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x"}}`+"\n")
	// Wait until the writer asked for its timer, then move the clock: a
	// 499 ms advance is not enough, the 500th ms releases the answer.
	for fake.Waiters() == 0 {
		runtime.Gosched()
	}
	got := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(outR).ReadString('\n')
		got <- line
	}()
	fake.Advance(499 * time.Millisecond)
	select {
	case l := <-got:
		t.Fatalf("answer %q sent before the recorded gap had passed", l)
	default:
	}
	fake.Advance(time.Millisecond)
	if l := <-got; l != `{"jsonrpc":"2.0","id":7,"result":{}}`+"\n" {
		t.Errorf("answer = %q", l)
	}
	inW.Close()
	if rep := <-done; rep == nil || !rep.OK() || rep.Matched != 1 {
		t.Errorf("report = %+v; want one matched frame", rep)
	}
}

// TestServeStdio_NoLeak: ServeStdio leaves no goroutine behind once the
// client has closed its side.
func TestServeStdio_NoLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	for range 20 {
		rec := stdioRecording(t, 1,
			`> {"jsonrpc":"2.0","id":1,"method":"ping"}`,
			`< {"jsonrpc":"2.0","id":1,"result":{}}`,
		)
		// A reader, not a pipe: no goroutine of the test's own to count.
		in := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n" + `{"jsonrpc":"2.0","id":2,"method":"nope"}` + "\n")
		rep, err := (&Server{Recordings: []*store.Recording{rec.Recording}}).ServeStdio(context.Background(), pipeClient{in, io.Discard})
		if err != nil || rep.Matched != 1 || len(rep.Mismatches) != 1 {
			t.Fatalf("ServeStdio = %+v, %v", rep, err)
		}
	}
	for i := 0; runtime.NumGoroutine() > before && i < 100000; i++ {
		runtime.Gosched()
	}
	if after := runtime.NumGoroutine(); after > before {
		buf := make([]byte, 1<<16)
		t.Errorf("goroutines: %d before, %d after\n%s", before, after, buf[:runtime.Stack(buf, true)])
	}
}

// stuckWriter is a client that stops reading: Write reports the first
// call on called and then blocks until release is closed.
type stuckWriter struct {
	once    sync.Once
	called  chan struct{}
	release chan struct{}
}

func (w *stuckWriter) Write(p []byte) (int, error) {
	w.once.Do(func() { close(w.called) })
	<-w.release
	return 0, io.ErrClosedPipe
}

// TestServeStdio_StopsWithoutTheClient: ServeStdio returns when its ctx
// ends, or when the Server is closed, although the client neither reads
// the answer waiting for it nor sends anything more.
func TestServeStdio_StopsWithoutTheClient(t *testing.T) {
	for _, stop := range []string{"Context", "Close"} {
		t.Run(stop, func(t *testing.T) {
			rec := stdioRecording(t, 1,
				`> {"jsonrpc":"2.0","id":1,"method":"ping"}`,
				`< {"jsonrpc":"2.0","id":1,"result":{}}`,
				`> {"jsonrpc":"2.0","id":2,"method":"ping"}`,
				`< {"jsonrpc":"2.0","id":2,"result":{}}`,
			)
			srv := &Server{Recordings: []*store.Recording{rec.Recording}}
			inR, inW := io.Pipe()
			out := &stuckWriter{called: make(chan struct{}), release: make(chan struct{})}
			defer close(out.release)
			defer inW.Close()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan *Report, 1)
			go func() {
				rep, _ := srv.ServeStdio(ctx, pipeClient{inR, out})
				done <- rep
			}()
			if _, err := io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n"); err != nil {
				t.Fatal(err)
			}
			<-out.called // the answer is being written, and nobody reads it
			if stop == "Close" {
				srv.Close()
			} else {
				cancel()
			}
			if rep := <-done; rep == nil || rep.Received != 1 || rep.Matched != 1 {
				t.Errorf("report = %+v; want the one frame received and matched", rep)
			}
		})
	}
}

// pipeCloser is a client on OS pipes whose Close closes the pipe the
// server writes to, as closing a connection would.
type pipeCloser struct {
	in     io.Reader
	out    *os.File
	closes atomic.Int32
}

func (c *pipeCloser) Read(p []byte) (int, error)  { return c.in.Read(p) }
func (c *pipeCloser) Write(p []byte) (int, error) { return c.out.Write(p) }
func (c *pipeCloser) Close() error                { c.closes.Add(1); return c.out.Close() }

// TestServeStdio_EndDrainsAndLeavesClientOpen: when the client ends its
// side, every answer already due still reaches it (more than a pipe
// holds), and ServeStdio does not close a client it did not open: only a
// stop from outside does.
func TestServeStdio_EndDrainsAndLeavesClientOpen(t *testing.T) {
	const n = 40
	big := strings.Repeat("x", 8<<10)
	var lines []string
	var in strings.Builder
	for i := 1; i <= n; i++ {
		lines = append(lines, fmt.Sprintf(`> {"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"n%d"}}`, i, i),
			fmt.Sprintf(`< {"jsonrpc":"2.0","id":%d,"result":{"n":%d,"pad":%q}}`, i, i, big))
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"n%d"}}`+"\n", i, i)
	}
	rec := stdioRecording(t, 1, lines...)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	c := &pipeCloser{in: strings.NewReader(in.String()), out: w}
	got := make(chan int, 1)
	go func() {
		sc := bufio.NewScanner(r)
		sc.Buffer(nil, 1<<20)
		count := 0
		for sc.Scan() {
			count++
		}
		got <- count
	}()
	rep, err := (&Server{Recordings: []*store.Recording{rec.Recording}}).ServeStdio(context.Background(), c)
	if err != nil || rep.Matched != n {
		t.Fatalf("ServeStdio = %+v, %v", rep, err)
	}
	if closes := c.closes.Load(); closes != 0 {
		t.Errorf("ServeStdio closed the client %d times; want 0 after an ordinary end", closes)
	}
	w.Close()
	if count := <-got; count != n {
		t.Errorf("client got %d answers; want %d", count, n)
	}
}
