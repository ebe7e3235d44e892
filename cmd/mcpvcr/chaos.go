package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mcpvcr/mcpvcr/chaos"
	"github.com/mcpvcr/mcpvcr/internal/args"
	"github.com/mcpvcr/mcpvcr/internal/outfile"
	"github.com/mcpvcr/mcpvcr/internal/termtext"
	"github.com/mcpvcr/mcpvcr/replayer"
	"github.com/mcpvcr/mcpvcr/store"
	"github.com/mcpvcr/mcpvcr/view"
)

// chaosFlags are replay's chaos options.
func chaosFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "chaos", Usage: "draw faults from `SEED` (a number) at places in each recorded session, inject them, and judge what the client does next; the same seed and client behaviour give the same faults (stdio: delay and late-result only)"},
		&cli.StringFlag{Name: "chaos-faults", Usage: "with --chaos: the fault `KINDS` to draw from, comma-separated (default all but " + optInList() + ", drawn only when named): " + kindList()},
		&cli.IntFlag{Name: "chaos-rate", Value: chaos.DefaultRate, Usage: "with --chaos: how many faults to draw per session (`N`)"},
		&cli.StringFlag{Name: "chaos-report", Usage: "with --chaos: at exit (Ctrl-C included), also write the HTML report of the run to `FILE`: the sessions' timelines with each fault marked and judged; created 0600, written whole or not at all, never the cassette itself"},
	}
}

// optInList names the kinds drawn only when --chaos-faults names them.
func optInList() string {
	var names []string
	for _, k := range chaos.FaultKinds() {
		if chaos.OptIn(k) {
			names = append(names, k.String())
		}
	}
	return strings.Join(names, " and ")
}

func kindList() string {
	var names []string
	for _, k := range chaos.FaultKinds() {
		names = append(names, k.String())
	}
	return strings.Join(names, ",")
}

// parseChaos reads --chaos, --chaos-faults and --chaos-rate: the chaos
// Hook of the run, nil without --chaos.
func parseChaos(c *cli.Context) (*chaos.Hook, error) {
	var ch *chaos.Hook
	if !c.IsSet("chaos") {
		if c.IsSet("chaos-faults") || c.IsSet("chaos-rate") || c.IsSet("chaos-report") {
			return ch, usageErr("mcpvcr replay --listen 127.0.0.1:0 --chaos 7 --chaos-faults cut,expire", "--chaos-faults, --chaos-rate and --chaos-report need --chaos SEED")
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
	if err := checkChaosReport(c); err != nil {
		return ch, err
	}
	return chaos.New(chaos.Config{Seed: seed, Kinds: kinds, Rate: c.Int("chaos-rate")}, nil), nil
}

// plugChaos makes h, if not nil, srv's Hook, logging where srv does.
func plugChaos(srv *replayer.Server, h *chaos.Hook) {
	if h == nil {
		return
	}
	h.Logger = srv.Logger
	srv.Hook = h
}

// chaosOf returns the chaos Hook of srv, nil when chaos is off.
func chaosOf(srv *replayer.Server) *chaos.Hook {
	h, _ := srv.Hook.(*chaos.Hook)
	return h
}

// writeChaos writes the chaos report of srv to out (see chaos.Hook.Write)
// and reports whether no verdict failed; true when chaos is off.
func writeChaos(srv *replayer.Server, out io.Writer, command string) bool {
	if h := chaosOf(srv); h != nil {
		return h.Write(out, command)
	}
	return true
}

// announceChaos says on stderr, when chaos is on, what it will draw.
func announceChaos(c *cli.Context, e *env, chaos *chaos.Hook) {
	if chaos == nil {
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

// checkChaosReport refuses, before replay serves, a --chaos-report that
// names the cassette or lies in a folder that does not exist: the report
// is written only at exit.
func checkChaosReport(c *cli.Context) error {
	p := c.String("chaos-report")
	if p == "" {
		return nil
	}
	if errors.Is(outfile.Check(p, cassettePath(c)), outfile.ErrInput) {
		return usageErr("name another file with --chaos-report: a report is never the cassette it reads (nor its -wal or -shm)",
			"--chaos-report %s would overwrite the cassette %s", p, cassettePath(c))
	}
	if fi, err := os.Stat(filepath.Dir(p)); err != nil || !fi.IsDir() {
		return usageErr("name a file in a folder that exists, such as --chaos-report chaos.html", "--chaos-report %s: no folder %s", p, filepath.Dir(p))
	}
	return nil
}

// writeChaosReport writes the HTML report of the chaos run srv served to
// --chaos-report's file, if given, and says so on stderr. It reads the
// recorded sessions from db even when the run's ctx was cancelled by
// Ctrl-C: the report is what the run leaves behind.
func writeChaosReport(c *cli.Context, e *env, db *store.DB, srv *replayer.Server, command string) error {
	p := c.String("chaos-report")
	if p == "" || chaosOf(srv) == nil {
		return nil
	}
	ch := chaosPage(srv, command)
	f, err := createOutput(p, cassettePath(c))
	if err != nil {
		return err
	}
	defer f.Abort()
	ctx := context.WithoutCancel(c.Context)
	var ids []int64
	if len(ch.Faults) == 0 { // no fault placed: the page shows the sessions replay was given
		ids, err = servedSessions(ctx, c, db)
	}
	if err == nil {
		err = view.ExportChaosHTML(ctx, db, f, ch, ids...)
	}
	if err != nil {
		return failErr(fmt.Errorf("write the chaos report %s: %w", p, err), "")
	}
	if err := f.Commit(); err != nil {
		return failErr(err, "check that the folder of "+p+" is writable")
	}
	fmt.Fprintf(e.stderr, "chaos: report written to %s\n", termtext.Text(p))
	return nil
}

// servedSessions are the sessions replay was given: the SESSION argument,
// or every HTTP session of the cassette (every stdio one, over stdio).
func servedSessions(ctx context.Context, c *cli.Context, db *store.DB) ([]int64, error) {
	id, err := sessionArg(c, 0)
	if err != nil {
		return nil, err
	}
	if c.String("listen") == "" {
		return args.Select(ctx, db, id, store.Stdio)
	}
	return args.Select(ctx, db, id, store.StreamableHTTP, store.LegacySSE)
}

// chaosPage is the chaos run of srv as the HTML report shows it: the
// faults injected with their verdicts, then those not reached.
func chaosPage(srv *replayer.Server, command string) view.Chaos {
	h := chaosOf(srv)
	ch := view.Chaos{Seed: h.Seed, Rate: h.Rate, Command: command, Faults: []view.ChaosFault{}}
	if ch.Rate <= 0 {
		ch.Rate = chaos.DefaultRate
	}
	for _, k := range h.Kinds {
		ch.Kinds = append(ch.Kinds, k.String())
	}
	add := func(r chaos.Result, verdict string) {
		ch.Faults = append(ch.Faults, view.ChaosFault{Session: r.Session, Kind: r.Kind.String(), Stream: r.Stream, Event: r.Event, Seq: r.Seq,
			Request: r.Request, Where: r.Where(), What: r.Fault.String(), Did: r.Did, Verdict: verdict})
	}
	for _, r := range h.Results() {
		add(r, r.Verdict.String())
	}
	for _, r := range h.NotReached() {
		add(r, view.VerdictNotReached)
	}
	return ch
}
