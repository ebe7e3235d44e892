package recorder_test

import (
	"context"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcpvcr/mcpvcr/recorder"
)

// lineWriter sends each Write to a channel, for a test to wait on.
type lineWriter chan string

func (w lineWriter) Write(p []byte) (int, error) { w <- string(p); return len(p), nil }

// TestGraceful_Serve: a stop says what it waits for, a second signal cuts
// it short (BeforeClose runs, open requests are cut), and Serve returns.
func TestGraceful_Serve(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-r.Context().Done() // held open until the connection is cut
	})
	again := make(chan os.Signal, 2)
	progress := make(lineWriter, 4)
	closed := make(chan struct{})
	g := &recorder.Graceful{Handler: h, Grace: time.Hour, Again: again, Progress: progress,
		Waiting: func() string { return "1 open stream (1 post)" }, BeforeClose: func() { close(closed) }}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- g.Serve(ctx, ln) }()

	go func() {
		resp, err := http.Post("http://"+ln.Addr().String(), "text/plain", nil)
		if err == nil {
			resp.Body.Close()
		}
	}()
	<-started
	again <- os.Interrupt // the signal that ends ctx reaches Again too
	cancel()
	if l := <-progress; !strings.Contains(l, "waiting up to 1h0m0s for 1 open stream (1 post) to end") {
		t.Errorf("first progress line = %q; want what the stop waits for and how long", l)
	}
	again <- os.Interrupt
	if l := <-progress; !strings.Contains(l, "stopping now") {
		t.Errorf("second progress line = %q; want stopping now", l)
	}
	<-closed
	if err := <-errc; err != nil {
		t.Errorf("Serve = %v; want nil", err)
	}
}

// TestGraceful_ServeQuiet: with nothing open a stop says nothing and
// returns at once.
func TestGraceful_ServeQuiet(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	shut := false
	g := &recorder.Graceful{Handler: http.NotFoundHandler(), BeforeShutdown: func() { shut = true }}
	if err := g.Serve(ctx, ln); err != nil {
		t.Errorf("Serve = %v; want nil", err)
	}
	if !shut {
		t.Error("BeforeShutdown did not run")
	}
}
