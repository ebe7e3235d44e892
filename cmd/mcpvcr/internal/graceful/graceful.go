// Package graceful serves an http.Handler (an HTTP recorder, or a replay
// server) for the mcpvcr command until its context ends, then stops the
// way a person at a terminal expects (Server).
package graceful

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"
)

// DefaultGrace is how long a Server's stop waits for open requests and
// streams when Grace is zero.
const DefaultGrace = 5 * time.Second

// Timeouts of a Server's connections when its fields are zero.
const (
	// DefaultIdleTimeout closes a keep-alive connection that has had no
	// request for this long.
	DefaultIdleTimeout = time.Minute
	// DefaultReadHeaderTimeout bounds the reading of a request's header.
	DefaultReadHeaderTimeout = 10 * time.Second
	// DefaultBodyTimeout bounds how long a request's body may go silent:
	// each read of it waits at most this long for the client's next
	// bytes. The time the handler takes between reads (an upstream slow
	// to take a long body) does not count, and an answer (a long SSE
	// stream) is not bounded.
	DefaultBodyTimeout = 30 * time.Second
)

// Server serves an http.Handler (an HTTP recorder, or a replay server)
// on a listener until its context ends, then stops the way a person at a
// terminal expects: it says on Progress what it waits for and for how
// long at most, waits up to Grace for open requests and streams to end,
// and cuts them when the time is up or when Again delivers (a second
// Ctrl-C).
//
// Every field but Handler may be zero. A Server serves once.
type Server struct {
	// Handler answers the requests. Required.
	Handler http.Handler
	// Grace is the longest a stop waits. If zero, DefaultGrace.
	Grace time.Duration
	// Waiting, if not nil, says what a stop waits for, such as "2 open
	// streams (1 get, 1 post)" (recorder.HTTP.Pending), or "" when nothing.
	Waiting func() string
	// BeforeShutdown, if not nil, runs when the stop begins (to end
	// streams held open); BeforeClose just before the connections still
	// open are cut.
	BeforeShutdown, BeforeClose func()
	// Again, if not nil, cuts a stop short when it delivers. A signal
	// already in it when the stop begins is the one that ended the
	// context, and is dropped.
	Again <-chan os.Signal
	// Progress gets the stop's messages for the user. If nil, they are
	// discarded.
	Progress io.Writer
	// IdleTimeout, ReadHeaderTimeout and BodyTimeout bound how long a
	// connection may sit idle between requests, send a request's header,
	// and keep the handler waiting for its body's next bytes. If zero,
	// the Default values; a connection that exceeds one is closed.
	// Answers are never cut by them.
	IdleTimeout, ReadHeaderTimeout, BodyTimeout time.Duration
}

// bodyDeadline is the handler that bounds the reading of request bodies:
// the connection's read deadline is set when the handler starts, moved
// on at each read of the body (so that it counts the client's silence,
// not the time the handler takes between reads: a 300 MB body forwarded
// to an upstream that takes two minutes to read it is not cut), and
// cleared once the body has been read to its end, so that it never cuts
// a long answer.
type bodyDeadline struct {
	h       http.Handler
	timeout time.Duration
}

func (d bodyDeadline) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Body == nil || r.Body == http.NoBody {
		d.h.ServeHTTP(w, r)
		return
	}
	rc := http.NewResponseController(w)
	if rc.SetReadDeadline(time.Now().Add(d.timeout)) == nil {
		r.Body = &deadlineBody{ReadCloser: r.Body, rc: rc, timeout: d.timeout}
	}
	d.h.ServeHTTP(w, r)
}

// deadlineBody clears the connection's read deadline once the body has
// been read to its end: from then on the server reads the connection only
// to notice the client leaving, which must not time out. A body that
// fails (timed out, cut) or is closed early keeps the deadline, so that
// the server's reading of what is left of it stays bounded too.
type deadlineBody struct {
	io.ReadCloser
	rc      *http.ResponseController
	timeout time.Duration
	done    bool
	// failed is set once a read failed: the deadline then stays as it is.
	failed bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	if !b.done && !b.failed {
		_ = b.rc.SetReadDeadline(time.Now().Add(b.timeout))
	}
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF {
		b.failed = true
	}
	if err == io.EOF && !b.done {
		b.done = true
		_ = b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

// Serve runs g.Handler on ln until ctx is done, then stops as the
// Server doc says. It returns an error when serving failed or the stop
// could not close the server; a stop cut short is not an error.
func (g *Server) Serve(ctx context.Context, ln net.Listener) error {
	progress, grace := g.Progress, g.Grace
	if progress == nil {
		progress = io.Discard
	}
	if grace == 0 {
		grace = DefaultGrace
	}
	srv := &http.Server{
		Handler:           bodyDeadline{h: g.Handler, timeout: orDefault(g.BodyTimeout, DefaultBodyTimeout)},
		IdleTimeout:       orDefault(g.IdleTimeout, DefaultIdleTimeout),
		ReadHeaderTimeout: orDefault(g.ReadHeaderTimeout, DefaultReadHeaderTimeout),
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	// The signal that cancelled ctx reached Again too, before ctx was
	// cancelled; only a later one is a second Ctrl-C.
	select {
	case <-g.Again:
	default:
	}
	if g.BeforeShutdown != nil {
		g.BeforeShutdown()
	}
	what := ""
	if g.Waiting != nil {
		what = g.Waiting()
	}
	if what != "" {
		fmt.Fprintf(progress, "mcpvcr: stopping: waiting up to %s for %s to end, then saving; press Ctrl-C again to stop now\n", grace, what)
	}
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	go func() {
		select {
		case <-g.Again:
			fmt.Fprintln(progress, "mcpvcr: stopping now")
			cancel()
		case <-sctx.Done(): // at the latest when Serve returns
		}
	}()
	err := srv.Shutdown(sctx)
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		if g.BeforeClose != nil {
			g.BeforeClose()
		}
		err = srv.Close()
	}
	if serr := <-errc; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		return serr
	}
	return err
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}
