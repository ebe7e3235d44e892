package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Exit codes.
const (
	exitOK      = 0
	exitUsage   = 2
	exitFailure = 3
)

// options are the parsed command line.
type options struct {
	transport  string
	listen     string
	config     mcptest.ServerConfig
	json       bool
	stateless  bool
	eventStore bool
	noCancel   bool
	// crossOrigin refuses cross-origin requests with 403
	// (http.CrossOriginProtection).
	crossOrigin bool
}

// run runs the test server until ctx is done or, over stdio, stdin ends.
// Logs go to stderr; over stdio, stdout carries only MCP messages.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	opts, err := parse(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "testserver: %v\ntry: testserver -h\n", err)
		return exitUsage
	}
	server := opts.config.NewServer()
	switch opts.transport {
	case "stdio":
		err = server.Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(stdin), Writer: nopWriteCloser{stdout}})
	default:
		err = serveHTTP(ctx, server, opts, stdout)
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(stderr, "testserver: %v\n", err)
		return exitFailure
	}
	return exitOK
}

func parse(args []string, stderr io.Writer) (options, error) {
	var (
		o        options
		versions string
		verbose  bool
	)
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.transport, "transport", "stdio", "`transport`: stdio, http (Streamable HTTP on /mcp) or sse (2024-11-05 HTTP+SSE on /sse)")
	fs.StringVar(&o.listen, "listen", "127.0.0.1:0", "`address` to listen on in the HTTP modes")
	fs.StringVar(&o.config.Variant, "variant", mcptest.V1, "server `variant`: v1, or v2 (the next release, for diff tests)")
	fs.BoolVar(&o.json, "json", false, "http only: answer POSTs with application/json instead of an SSE stream")
	fs.BoolVar(&o.stateless, "stateless", false, "http only: stateless server (no sessions; needed for 2026-07-28 over HTTP)")
	fs.BoolVar(&o.eventStore, "eventstore", false, "http only: keep SSE events in memory so that clients can resume streams")
	fs.BoolVar(&o.noCancel, "no-propagate-cancel", false, "http only: do not cancel a 2026-07-28 request when its HTTP request goes away")
	fs.BoolVar(&o.crossOrigin, "cross-origin", false, "http only: refuse cross-origin requests (an Origin naming another host) with 403")
	fs.BoolVar(&o.config.Stubborn, "stubborn", false, "add tools stubborn and abandon, which answer after a cancellation and cancel their own request (for the cancellation tests)")
	fs.BoolVar(&o.config.Annotated, "annotated", false, "mark tool info read-only and add tool forget, marked destructive (for verify's write guard)")
	fs.BoolVar(&o.config.EmptyCursor, "empty-cursor", false, "end every list with nextCursor \"\" instead of none (for the audit's pagination rules)")
	fs.StringVar(&o.config.AnswerVersion, "answer-version", "", "answer initialize naming this protocol `version` instead of the negotiated one (for the audit's lifecycle rules)")
	fs.BoolVar(&o.config.Toggle, "toggle", false, "add tool toggle, which adds or removes tool extra: the tool list changes")
	fs.BoolVar(&o.config.HeaderTool, "header-tool", false, "add tool lookup, whose integer argument id is annotated x-mcp-header \"Id\"")
	fs.DurationVar(&o.config.SlowLimit, "slow-limit", mcptest.DefaultSlowLimit, "longest `duration` tool slow waits for its cancellation")
	fs.StringVar(&versions, "versions", "", "comma-separated protocol `versions` to negotiate (default: all of "+strings.Join(mcptest.Versions, ",")+")")
	fs.BoolVar(&verbose, "v", false, "log the SDK's server activity to stderr")
	if err := fs.Parse(args[1:]); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	switch o.transport {
	case "stdio", "http", "sse":
	default:
		return o, fmt.Errorf("unknown -transport %q (want stdio, http or sse)", o.transport)
	}
	if o.transport != "http" && (o.json || o.stateless || o.eventStore || o.noCancel || o.crossOrigin) {
		return o, errors.New("-json, -stateless, -eventstore, -no-propagate-cancel and -cross-origin need -transport http")
	}
	if versions != "" {
		o.config.Versions = strings.Split(versions, ",")
	}
	// With an event store, tool reconnect closes its stream mid-call so
	// that clients resume it (SEP-1699 polling).
	o.config.CloseStreams = o.eventStore
	if verbose {
		o.config.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return o, o.config.Validate()
}

// serveHTTP serves server over HTTP until ctx is done. Once listening, it
// prints "listening on URL" to stdout.
func serveHTTP(ctx context.Context, server *mcp.Server, o options, stdout io.Writer) error {
	getServer := func(*http.Request) *mcp.Server { return server }
	var (
		handler http.Handler
		path    string
	)
	switch o.transport {
	case "http":
		path = "/mcp"
		hopts := &mcp.StreamableHTTPOptions{
			JSONResponse:                 o.json,
			Stateless:                    o.stateless,
			PropagateRequestCancellation: !o.noCancel,
		}
		if o.eventStore {
			hopts.EventStore = mcp.NewMemoryEventStore(nil)
		}
		handler = mcp.NewStreamableHTTPHandler(getServer, hopts)
		if o.crossOrigin {
			handler = http.NewCrossOriginProtection().Handler(handler)
		}
	case "sse":
		path = "/sse"
		handler = mcp.NewSSEHandler(getServer, nil)
	}
	mux := http.NewServeMux()
	mux.Handle(path, handler)

	l, err := net.Listen("tcp", o.listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	srv := &http.Server{Handler: mux}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(l) }()
	fmt.Fprintf(stdout, "listening on http://%s%s\n", l.Addr(), path)

	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	// Close rather than Shutdown: hanging GET streams never go idle.
	srv.Close()
	<-errc
	return nil
}

// nopWriteCloser is an io.WriteCloser whose Close does nothing.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
