package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// listen opens addr, warning when it is not a loopback address: mcpvcr
// serves recorded traffic that may carry private data.
func listen(e *env, addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, failErr(fmt.Errorf("listen on %s: %w", addr, err), "choose another --listen address, such as 127.0.0.1:0 for any free port")
	}
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok && !tcp.IP.IsLoopback() {
		fmt.Fprintf(e.stderr, "mcpvcr: warning: listening on %s, which other machines can reach; use 127.0.0.1 unless you mean it\n", ln.Addr())
	}
	return ln, nil
}

// stopHooks tell serve what a stop waits for and what to do on the way.
// Every field may be nil.
type stopHooks struct {
	// waiting says what a graceful stop waits for, such as "2 open
	// streams (get, post)"; "" when nothing.
	waiting func() string
	// beforeShutdown runs when the stop begins (to end streams held
	// open); beforeClose just before the connections still open are cut.
	beforeShutdown, beforeClose func()
}

// shutdownGrace is how long a stop waits for open requests and streams.
const shutdownGrace = 5 * time.Second

// serve runs h on ln until ctx is done (the first Ctrl-C), then stops:
// it says on stderr what it waits for and for how long at most, waits up
// to shutdownGrace for open requests to end, and cuts them when the time
// is up or at a second Ctrl-C (or SIGTERM).
func serve(ctx context.Context, e *env, ln net.Listener, h http.Handler, hooks stopHooks) error {
	again := make(chan os.Signal, 2)
	signal.Notify(again, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(again)
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 30 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	// The signal that cancelled ctx reached again too, before ctx was
	// cancelled; only a later one is a second Ctrl-C.
	select {
	case <-again:
	default:
	}
	if hooks.beforeShutdown != nil {
		hooks.beforeShutdown()
	}
	what := ""
	if hooks.waiting != nil {
		what = hooks.waiting()
	}
	if what != "" {
		fmt.Fprintf(e.stderr, "mcpvcr: stopping: waiting up to %s for %s to end, then saving; press Ctrl-C again to stop now\n", shutdownGrace, what)
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	go func() {
		select {
		case <-again:
			fmt.Fprintln(e.stderr, "mcpvcr: stopping now")
			cancel()
		case <-sctx.Done():
		}
	}()
	err := srv.Shutdown(sctx)
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		if hooks.beforeClose != nil {
			hooks.beforeClose()
		}
		err = srv.Close()
	}
	if serr := <-errc; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		return serr
	}
	return err
}
