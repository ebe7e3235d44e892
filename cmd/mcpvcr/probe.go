package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mcpvcr/mcpvcr/probe"
	"github.com/mcpvcr/mcpvcr/replayer"
)

// probeFlags are replay's probe options.
func probeFlags() []cli.Flag {
	var names []string
	for _, k := range probe.Kinds() {
		names = append(names, k.String())
	}
	return []cli.Flag{
		&cli.StringFlag{Name: "probe", Usage: "change recorded answers so that the client meets what its recording never had, and judge what it does next against its revision's rule (`KINDS`, comma-separated, or all): " + strings.Join(names, ",")},
	}
}

// parseProbe reads --probe: the probe Hook of the run, nil without it.
// Probes do not go beside --chaos (both are replay's one Hook).
func parseProbe(c *cli.Context) (*probe.Hook, error) {
	if !c.IsSet("probe") {
		return nil, nil
	}
	if c.IsSet("chaos") {
		return nil, usageErr("run the probes and the chaos faults in two replays", "--probe and --chaos cannot be used together")
	}
	kinds, err := probe.ParseKinds(c.String("probe"))
	if err != nil {
		return nil, usageErr("--probe all", "--probe %q: %w", c.String("probe"), err)
	}
	return probe.New(kinds, nil), nil
}

// plugProbe makes h, if not nil, srv's Hook, logging where srv does.
func plugProbe(srv *replayer.Server, h *probe.Hook) {
	if h == nil {
		return
	}
	h.Logger = srv.Logger
	srv.Hook = h
}

// announceProbe says on stderr, when probes are on, which.
func announceProbe(e *env, h *probe.Hook) {
	if h == nil {
		return
	}
	var names []string
	for _, k := range h.Kinds {
		names = append(names, k.String())
	}
	fmt.Fprintf(e.stderr, "mcpvcr: probes %s: each is placed once, at the first request where the session's revision and transport allow it, judged at exit\n", strings.Join(names, ","))
}

// writeProbe writes the probe report of srv to out (see probe.Hook.Write)
// and reports whether no probe of a MUST failed; true when probes are off.
func writeProbe(srv *replayer.Server, out io.Writer, command string) bool {
	if h, _ := srv.Hook.(*probe.Hook); h != nil {
		return h.Write(out, command)
	}
	return true
}
