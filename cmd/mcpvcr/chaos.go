package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mcpvcr/mcpvcr/internal/args"
	"github.com/mcpvcr/mcpvcr/replayer"
)

// chaosFlags are replay's chaos options.
func chaosFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "chaos", Usage: "draw faults from `SEED` (a number) at places in each recorded session, inject them, and judge what the client does next; the same seed and client behaviour give the same faults (stdio: delay and late-result only)"},
		&cli.StringFlag{Name: "chaos-faults", Usage: "with --chaos: the fault `KINDS` to draw from, comma-separated (default all): " + kindList()},
		&cli.IntFlag{Name: "chaos-rate", Value: replayer.DefaultChaosRate, Usage: "with --chaos: how many faults to draw per session (`N`)"},
	}
}

func kindList() string {
	var names []string
	for _, k := range replayer.FaultKinds() {
		names = append(names, k.String())
	}
	return strings.Join(names, ",")
}

// parseChaos reads --chaos, --chaos-faults and --chaos-rate.
func parseChaos(c *cli.Context) (replayer.Chaos, error) {
	var ch replayer.Chaos
	if !c.IsSet("chaos") {
		if c.IsSet("chaos-faults") || c.IsSet("chaos-rate") {
			return ch, usageErr("mcpvcr replay --listen 127.0.0.1:0 --chaos 7 --chaos-faults cut,expire", "--chaos-faults and --chaos-rate need --chaos SEED")
		}
		return ch, nil
	}
	seed, err := strconv.ParseUint(c.String("chaos"), 10, 64)
	if err != nil {
		return ch, usageErr("--chaos 7 (any number; the same number draws the same faults)", "--chaos %q is not a seed (a number from 0)", c.String("chaos"))
	}
	kinds, err := args.ParseFaultKinds(c.String("chaos-faults"))
	if err != nil {
		return ch, usageErr("--chaos-faults "+kindList(), "--chaos-faults %q: %w", c.String("chaos-faults"), err)
	}
	if c.Int("chaos-rate") < 1 {
		return ch, usageErr("--chaos-rate 3", "--chaos-rate %d: draw at least 1 fault per session", c.Int("chaos-rate"))
	}
	return replayer.Chaos{Seed: seed, On: true, Kinds: kinds, Rate: c.Int("chaos-rate")}, nil
}

// announceChaos says on stderr, when chaos is on, what it will draw.
func announceChaos(c *cli.Context, e *env, chaos replayer.Chaos) {
	if !chaos.On {
		return
	}
	kinds := c.String("chaos-faults")
	if kinds == "" {
		kinds = "all"
	}
	fmt.Fprintf(e.stderr, "mcpvcr: chaos seed %d, kinds %s, %d per session: each injected fault is named on stderr as it happens, judged at exit\n", chaos.Seed, kinds, chaos.Rate)
}

// chaosCommand is the command line that replays this run: replay's
// arguments and every flag given, seed included, with addr as the listen
// address ("" over stdio).
func chaosCommand(c *cli.Context, addr string) string {
	parts := []string{"mcpvcr", "replay"}
	if a := c.Args().First(); a != "" {
		parts = append(parts, a)
	}
	parts = append(parts, "--cassette", shellWord(c.String("cassette")))
	if addr != "" {
		parts = append(parts, "--listen", shellWord(addr))
	}
	for _, f := range c.Command.Flags {
		name := f.Names()[0]
		if name == "cassette" || name == "listen" || name == "verbose" || !c.IsSet(name) {
			continue
		}
		switch f.(type) {
		case *cli.BoolFlag:
			parts = append(parts, "--"+name+"="+strconv.FormatBool(c.Bool(name)))
		case *cli.StringSliceFlag:
			for _, v := range c.StringSlice(name) {
				parts = append(parts, "--"+name, shellWord(v))
			}
		default:
			parts = append(parts, "--"+name, shellWord(fmt.Sprint(c.Value(name))))
		}
	}
	return strings.Join(parts, " ")
}

// shellWord quotes s for a POSIX shell when it needs it.
func shellWord(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:,=@+", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
