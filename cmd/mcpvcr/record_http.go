package main

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/mcpvcr/mcpvcr/cmd/mcpvcr/internal/bytesize"
	"github.com/mcpvcr/mcpvcr/cmd/mcpvcr/internal/graceful"
	"github.com/mcpvcr/mcpvcr/internal/upstream"
	"github.com/mcpvcr/mcpvcr/recorder"
)

func recordHTTP(c *cli.Context, e *env) error {
	raw := c.String("upstream")
	u, err := parseUpstream(raw)
	if err != nil {
		return err
	}
	red := redactor(c)
	hdr, err := upstreamHeader(c)
	if err != nil {
		return err
	}
	if err := upstream.Reachable(c.Context, u); err != nil {
		return failErr(fmt.Errorf("upstream %s is not reachable: %w", red.URL(raw), err), "start the server first, or check --upstream")
	}

	// One probe, straight to the upstream (not recorded); its warning
	// follows the URL to give the client.
	warn := upstream.Probe(c.Context, u, hdr, red.URL(raw))
	// The listener first: a port that is taken must not leave a new,
	// empty cassette behind.
	ln, err := listen(e, c.String("listen"))
	if err != nil {
		return err
	}
	db, err := openForWrite(c, e)
	if err != nil {
		ln.Close()
		return err
	}
	defer db.Close()
	rec := &recorder.HTTP{Upstream: u, Sink: db, Redactor: red, Name: c.String("name"), Logger: e.logger,
		Header: hdr, AuthDirect: !c.Bool("proxy-auth"), AllowOrigins: c.StringSlice("allow-origin"), MaxFrame: bytesize.Of(c.Generic("max-frame"))}
	if fit := newFitter(); fit != nil {
		rec.Active = fit.Active
	}
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	fmt.Fprintf(e.stderr, "mcpvcr: recording to %s; point your client at http://%s%s (upstream %s); stop with Ctrl-C\n",
		cassettePath(c), ln.Addr(), path, red.URL(raw))
	if warn != "" {
		fmt.Fprintf(e.stderr, "mcpvcr: warning: %s\n", warn)
	}
	serr := serve(c.Context, e, ln, &graceful.Server{Handler: rec, Waiting: rec.Pending, BeforeClose: rec.Stop, IdleTimeout: c.Duration("idle-timeout")})
	cerr := rec.Close(context.WithoutCancel(c.Context)) // c.Context is done: Ctrl-C stopped serving
	if err := db.Close(); err != nil {
		return failErr(fmt.Errorf("save cassette %s: %w", cassettePath(c), err), "")
	}
	if serr != nil {
		return failErr(fmt.Errorf("serve: %w", serr), "")
	}
	if cerr != nil {
		return failErr(fmt.Errorf("recording failed, the sessions in %s are incomplete: %w", cassettePath(c), cerr),
			"free disk space or choose another --cassette; what was recorded before the failure is kept")
	}
	fmt.Fprintf(e.stderr, "mcpvcr: recorded to %s; see mcpvcr ls --cassette %s\n", cassettePath(c), cassettePath(c))
	return nil
}
