package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/mcpvcr/mcpvcr/cmd/mcpvcr/internal/graceful"
)

// listen opens addr, warning when it is not a loopback address: mcpvcr
// serves recorded traffic that may carry private data.
func listen(e *env, addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		why := fmt.Errorf("listen on %s: %w", addr, err)
		if addr == defaultListen && errors.Is(err, syscall.EADDRINUSE) {
			// record's default, where the quick starts replay too: one of each collides.
			why = fmt.Errorf("listen on %s: %w (record listens there by default, and the quick starts replay there too: is another mcpvcr running?)", addr, err)
		}
		return nil, failErr(why, "choose another --listen address, such as 127.0.0.1:0 for any free port")
	}
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok && !tcp.IP.IsLoopback() {
		fmt.Fprintf(e.stderr, "mcpvcr: warning: listening on %s, which other machines can reach; use 127.0.0.1 unless you mean it\n", ln.Addr())
	}
	return ln, nil
}

// serve runs g on ln until ctx is done (the first Ctrl-C), then stops it
// gracefully, telling the user on stderr; a second Ctrl-C (or SIGTERM)
// stops at once.
func serve(ctx context.Context, e *env, ln net.Listener, g *graceful.Server) error {
	again := make(chan os.Signal, 2)
	signal.Notify(again, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(again)
	g.Again, g.Progress = again, e.stderr
	return g.Serve(ctx, ln)
}

// defaultListen is where record and replay listen unless told.
const defaultListen = "127.0.0.1:8080"
