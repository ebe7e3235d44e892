package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mcpvcr/mcpvcr/diff"
	"github.com/mcpvcr/mcpvcr/internal/args"
	"github.com/mcpvcr/mcpvcr/store"
	"github.com/mcpvcr/mcpvcr/verify"
	"github.com/mcpvcr/mcpvcr/view"
)

func verifyCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "verify",
		Usage:     "send a recorded session to a live server and report how its answers changed",
		ArgsUsage: "[SESSION] (-- SERVER_COMMAND [ARGS...] | --upstream URL)",
		Description: "Sends the client side of a recorded session to a live server, over the transport and at the\n" +
			"protocol revision it was recorded with, answers the server's own requests (sampling,\n" +
			"elicitation, roots) as the client did, records the run as a new session, and compares every\n" +
			"answer with the recorded one. Exit 0: no differences; 1: differences (or the server went away\n" +
			"mid-run: the requests it did not answer are listed); 3: the server could not be verified\n" +
			"(it did not start, never answered, or speaks another revision).\n\n" +
			"   mcpvcr verify 3 -- ./my-server-v2              # stdio\n" +
			"   mcpvcr verify 3 --upstream http://127.0.0.1:3001/mcp\n" +
			"   mcpvcr verify 3 --learn -- ./my-server-v1      # see the noise of the old release: two runs\n" +
			"   mcpvcr verify 3 --learn --save -- ./my-server-v1   # and store it with the session\n\n" +
			"Without SESSION every recorded session (not earlier verify runs) is verified.\n\n" +
			"Noise that never counts: ids, session ids, progress tokens, cursors, requestState, timestamps,\n" +
			"UUIDs, SSE event ids, the order of notifications and of tools/prompts/resources lists. JSON in\n" +
			"text content is compared as JSON. --learn runs the old release twice (the server you name is\n" +
			"the old release), prints every path that differs between those two runs and applies them to this\n" +
			"report; --save stores them with the session, for all later verify and diff runs. A run that did\n" +
			"not keep the recorded order teaches nothing from that frame on: a stored path is never\n" +
			"reported again, so only differences between two faithful live runs are learned.\n" +
			"--update makes this run the expectation: verify SESSION then\n" +
			"compares with the new run, which also replays like any session.\n\n" +
			"Write guard: verify sends recorded traffic to a live server, which may be a shared staging\n" +
			"server with real data. When the server is not one verify started and not on loopback, a\n" +
			"tools/call is not sent if the live tools/list (else the recorded one) marks its tool as possibly\n" +
			"writing: annotations.readOnlyHint absent or false, or destructiveHint true. Each such call is\n" +
			"reported as skipped, with a count, and does not change the exit code (--fail-on-skip: exit 1).\n" +
			"--allow-writes sends them all, --allow-writes=TOOL one tool's (repeatable); --read-only guards\n" +
			"a local server too.\n\n" +
			"--ignore " + diff.PathSyntax,
		Flags: []cli.Flag{
			cassetteFlag(),
			&cli.StringFlag{Name: "upstream", Usage: "verify over HTTP: the live server's MCP endpoint `URL`", EnvVars: []string{"MCPVCR_UPSTREAM"}},
			&cli.StringSliceFlag{Name: "ignore", Usage: "do not count differences at `PATH` (repeatable; syntax above)"},
			&cli.BoolFlag{Name: "learn", Usage: "run the server twice first and print the paths that differ between the runs (noise)"},
			&cli.BoolFlag{Name: "save", Usage: "with --learn: store the noise learned with the session"},
			&cli.BoolFlag{Name: "update", Usage: "make this run the expectation for later verify runs"},
			&cli.BoolFlag{Name: "keep", Usage: "keep each live run in the cassette as a session (labelled mcpvcr.verify-of; ls --all lists them); by default a run is deleted once its report is written"},
			formatFlag(),
			outputFlag(),
			&cli.DurationFlag{Name: "timeout", Value: verify.DefaultTimeout, Usage: "wait this `DURATION` for each answer", EnvVars: []string{"MCPVCR_TIMEOUT"}},
			&cli.StringSliceFlag{Name: "header", Usage: "HTTP: send this `NAME: VALUE` header too, such as a credential the recording redacted (repeatable)"},
			&cli.GenericFlag{Name: "allow-writes", Value: &allowWrites{}, Usage: "send tool calls that may write: all of them, or with =`TOOL` only that tool's (repeatable)"},
			&cli.BoolFlag{Name: "read-only", Usage: "apply the write guard to a server verify starts or one on loopback too"},
			&cli.BoolFlag{Name: "fail-on-skip", Usage: "exit 1 when the write guard skipped a tool call"},
		},
		Action: func(c *cli.Context) error {
			id, argv, err := verifyArgs(c)
			if err != nil {
				return err
			}
			t, err := verifyTarget(c, argv)
			if err != nil {
				return err
			}
			format, extra, err := reportFlags(c)
			if err != nil {
				return err
			}
			db, err := openForRead(c)
			if err != nil {
				return err
			}
			defer db.Close()
			if err := checkOutput(c); err != nil {
				return err // before any traffic is sent
			}
			aw := c.Generic("allow-writes").(*allowWrites)
			before, err := lastSession(c.Context, db)
			if err != nil {
				return failErr(fmt.Errorf("read the cassette: %w", err), "")
			}
			if !c.Bool("keep") && !c.Bool("update") {
				// Runs are deleted even when verify fails: a check leaves
				// the cassette as it found it.
				defer dropRuns(context.WithoutCancel(c.Context), e, db, before)
			}
			reports, err := verify.Cassette(c.Context, db, verify.Options{Session: id, Target: t, Ignore: extra,
				Learn: c.Bool("learn"), Save: c.Bool("save"), Update: c.Bool("update"), Timeout: c.Duration("timeout"), Logger: e.logger, Progress: e.stderr,
				AllowWrites: aw.all, AllowTools: aw.tools, ReadOnly: c.Bool("read-only")})
			if err != nil {
				return verifyErr(c, id, t, err)
			}
			if err := writeReports(c.Context, c, e, db, cassettePath(c), format, reports...); err != nil {
				return err
			}
			for _, r := range reports {
				if r.Differs() && !c.Bool("update") {
					return errDiffer
				}
			}
			for _, r := range reports {
				if r.Skipped() > 0 && c.Bool("fail-on-skip") {
					return errDiffer
				}
			}
			return nil
		},
	}
}

// allowWrites is the value of --allow-writes: alone it allows every tool,
// as --allow-writes=TOOL one more tool.
type allowWrites struct {
	all   bool
	tools []string
}

func (a *allowWrites) String() string {
	if a == nil || (!a.all && len(a.tools) == 0) {
		return ""
	}
	if a.all {
		return "true"
	}
	return strings.Join(a.tools, ",")
}

// Set takes "true" (the flag alone), "false", or a tool name.
func (a *allowWrites) Set(s string) error {
	switch s {
	case "true":
		a.all = true
	case "false":
		a.all = false
	case "":
		return errors.New("name a tool: --allow-writes=TOOL")
	default:
		a.tools = append(a.tools, s)
	}
	return nil
}

// IsBoolFlag lets --allow-writes stand alone.
func (a *allowWrites) IsBoolFlag() bool { return true }

// verifyArgs splits the arguments into the SESSION (0 if absent) and the
// server command.
func verifyArgs(c *cli.Context) (int64, []string, error) {
	args := c.Args().Slice()
	var pos, argv []string
	if i := slices.Index(args, "--"); i >= 0 {
		pos, argv = args[:i], args[i+1:]
	} else if len(args) > 0 {
		if _, err := strconv.ParseInt(args[0], 10, 64); err == nil {
			pos, argv = args[:1], args[1:]
		} else {
			argv = args
		}
	}
	if len(pos) > 1 {
		return 0, nil, usageErr("mcpvcr verify [SESSION] -- SERVER_COMMAND [ARGS...]", "verify takes one SESSION, got %q", pos)
	}
	if len(pos) == 0 {
		return 0, argv, nil
	}
	id, err := sessionNumber(pos[0])
	return id, argv, err
}

// verifyTarget reads the live server from the arguments and flags.
func verifyTarget(c *cli.Context, argv []string) (verify.Target, error) {
	up := c.String("upstream")
	switch {
	case up != "" && len(argv) > 0:
		return verify.Target{}, usageErr("mcpvcr verify SESSION --upstream URL, or mcpvcr verify SESSION -- COMMAND", "verify takes --upstream or a server command, not both")
	case up == "" && len(argv) == 0:
		return verify.Target{}, usageErr("mcpvcr verify SESSION -- SERVER_COMMAND [ARGS...]", "verify needs the live server: a command after --, or --upstream URL")
	case up == "":
		return verify.Target{Command: argv}, nil
	}
	u, err := parseUpstream(up)
	if err != nil {
		return verify.Target{}, err
	}
	h, err := args.ParseHeaderLines(c.StringSlice("header"))
	var le *args.HeaderLineError
	if errors.As(err, &le) {
		// Say which header, not its value: it may be a token.
		return verify.Target{}, usageErr(`--header "Authorization: Bearer TOKEN"`, "a --header is not \"Name: value\" (it starts %q)", le.Start)
	}
	if h == nil {
		h = http.Header{}
	}
	return verify.Target{URL: u, Header: h}, err
}

// parseUpstream reads an --upstream URL.
func parseUpstream(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, usageErr("--upstream http://127.0.0.1:3001/mcp", "--upstream %q is not an http(s) URL", raw)
	}
	return u, nil
}

// reportFlags reads the --format and --ignore flags verify and diff share.
func reportFlags(c *cli.Context) (format string, extra diff.Noise, err error) {
	format = c.String("format")
	if !slices.Contains(view.ReportFormats, format) {
		return "", diff.Noise{}, usageErr("--format text, json, junit or html", "--format %q is not text, json, junit or html", format)
	}
	for _, s := range c.StringSlice("ignore") {
		p, err := diff.ParsePath(s)
		if err != nil {
			return "", diff.Noise{}, usageErr(`--ignore 'result.content[*].text' (see mcpvcr verify --help)`, "%w", err)
		}
		extra.Paths = append(extra.Paths, p)
	}
	return format, extra, nil
}

func formatFlag() cli.Flag {
	return &cli.StringFlag{Name: "format", Value: "text", Usage: "report `FORMAT`: text, json, junit, sarif (SARIF 2.1.0, for code-scanning views) or html (both sessions, the differences marked)", EnvVars: []string{"MCPVCR_FORMAT"}}
}

// lastSession returns the highest session id in db, 0 when none.
func lastSession(ctx context.Context, db *store.DB) (int64, error) {
	ss, err := db.Sessions(ctx)
	if err != nil {
		return 0, err
	}
	var last int64
	for _, s := range ss {
		last = max(last, s.ID)
	}
	return last, nil
}

// dropRuns deletes the verify runs recorded after session after: those
// still labelled as a run (a run --update made the expectation is not).
func dropRuns(ctx context.Context, e *env, db *store.DB, after int64) {
	ss, err := db.Sessions(ctx)
	if err != nil {
		fmt.Fprintf(e.stderr, "mcpvcr: warning: the verify runs could not be listed to delete them: %v\n", err)
		return
	}
	for _, s := range ss {
		if s.ID > after && s.Labels[verify.LabelVerifyOf] != "" {
			if err := db.DeleteSession(ctx, s.ID); err != nil {
				fmt.Fprintf(e.stderr, "mcpvcr: warning: verify run %d could not be deleted: %v\n", s.ID, err)
			}
		}
	}
}
