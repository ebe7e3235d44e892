package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/mcpvcr/mcpvcr/cmd/mcpvcr/internal/graceful"
	"github.com/mcpvcr/mcpvcr/internal/args"
	"github.com/mcpvcr/mcpvcr/internal/authwire"
	"github.com/mcpvcr/mcpvcr/internal/termtext"
	"github.com/mcpvcr/mcpvcr/replayer"
	"github.com/mcpvcr/mcpvcr/store"
)

func replayHTTP(c *cli.Context, e *env, db *store.DB, pace float64) error {
	faults, err := parseFaults(c)
	if err != nil {
		return err
	}
	srv, ids, err := replayServer(c, e, db, store.StreamableHTTP, store.LegacySSE)
	if err != nil {
		return err
	}
	auth, err := authwire.LoadHandler(c.Context, srv, db, ids, e.logger)
	if err != nil {
		return failErr(err, "")
	}
	chaos, err := parseChaos(c)
	if err != nil {
		return err
	}
	probes, err := parseProbe(c)
	if err != nil {
		return err
	}
	srv.Pace, srv.Faults, srv.Strict = pace, faults, c.Bool("strict")
	plugChaos(srv, chaos)
	plugProbe(srv, probes)
	ln, err := listen(e, c.String("listen"))
	if err != nil {
		return err
	}
	announceChaos(c, e, chaos)
	announceProbe(e, probes)
	fmt.Fprintf(e.stderr, "mcpvcr: replaying %s on http://%s; point your client at http://%s%s; stop with Ctrl-C\n",
		termtext.Count(srv.Sessions(), "session"), ln.Addr(), ln.Addr(), srv.EndpointPath(c.Context))
	if err := serve(c.Context, e, ln, &graceful.Server{Handler: auth, BeforeShutdown: srv.Close, IdleTimeout: c.Duration("idle-timeout")}); err != nil {
		if rerr := writeChaosReport(c, e, db, srv, chaosCommand(c, c.String("listen"))); rerr != nil {
			report(e.stderr, rerr)
		}
		return failErr(fmt.Errorf("serve: %w", err), "")
	}
	if c.Bool("verbose") {
		srv.WriteReports(e.stderr)
	}
	ok := auth.WriteSummary(e.stderr) // the OAuth dance, then MCP
	if !srv.WriteSummary(e.stderr) {
		ok = false
	}
	if !writeChaos(srv, e.stderr, chaosCommand(c, c.String("listen"))) {
		ok = false
	}
	if !writeProbe(srv, e.stderr, chaosCommand(c, c.String("listen"))) {
		ok = false
	}
	if err := writeChaosReport(c, e, db, srv, chaosCommand(c, c.String("listen"))); err != nil {
		return err
	}
	if !ok {
		return errDiffer
	}
	return nil
}

func parseFaults(c *cli.Context) (replayer.Faults, error) {
	f := replayer.Faults{ExpireAfter: c.Int("expire-after"), Delay: c.Duration("delay")}
	for _, spec := range c.StringSlice("cut") {
		sn, en, err := args.ParseCut(spec)
		if err != nil {
			return f, usageErr("--cut 3:2 cuts stream 3 (see mcpvcr show) after 2 events", "--cut %q is not STREAM:EVENTS", spec)
		}
		if f.CutAfter == nil {
			f.CutAfter = map[int]int{}
		}
		f.CutAfter[sn] = en
	}
	return f, nil
}
