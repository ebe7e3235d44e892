package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
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

// serve runs h on ln until ctx is done, then shuts down: beforeShutdown
// runs first (to end streams held open).
func serve(ctx context.Context, ln net.Listener, h http.Handler, beforeShutdown func()) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 30 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	if beforeShutdown != nil {
		beforeShutdown()
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := srv.Shutdown(sctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = srv.Close()
	}
	if serr := <-errc; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		return serr
	}
	return err
}
