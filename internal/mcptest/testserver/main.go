// Command testserver is mcpvcr's deterministic MCP test server (see package
// mcptest) as a child process, over stdio, Streamable HTTP or HTTP+SSE.
//
// Usage:
//
//	testserver [-transport stdio|http|sse] [-listen ADDR] [-variant v1|v2]
//	           [-json] [-stateless] [-eventstore] [-cross-origin] [-versions LIST]
//	           [-empty-cursor] [-toggle] [-header-tool] [-v]
//
// In the HTTP modes it prints "listening on http://127.0.0.1:PORT/mcp" (or
// /sse) to stdout once listening, and serves until SIGINT or SIGTERM.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
