package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mcpvcr/mcpvcr/replayer"
	"github.com/mcpvcr/mcpvcr/store"
)

// Labels verify keeps on sessions, besides replayer.NoiseLabel.
const (
	// verifyOfLabel marks a verify run with the session it verified.
	verifyOfLabel = "mcpvcr.verify-of"
	// supersededLabel marks an expectation that verify --update replaced
	// with the session it names.
	supersededLabel = "mcpvcr.superseded-by"
	// supersedesLabel marks the session verify --update made the
	// expectation with the session it replaced.
	supersedesLabel = "mcpvcr.supersedes"
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
			"   mcpvcr verify 3 --learn -- ./my-server-v1      # learn the noise of the old release first\n\n" +
			"Without SESSION every recorded session (not earlier verify runs) is verified.\n\n" +
			"Noise that never counts: ids, session ids, progress tokens, cursors, requestState, timestamps,\n" +
			"UUIDs, SSE event ids, the order of notifications and of tools/prompts/resources lists. JSON in\n" +
			"text content is compared as JSON. --learn runs the old release twice (the server you name is\n" +
			"the old release) and stores every path that differs between those runs with the session, for\n" +
			"all later verify and diff runs. --update makes this run the expectation: verify SESSION then\n" +
			"compares with the new run, which also replays like any session.\n\n" +
			"--ignore " + replayer.PathSyntax,
		Flags: []cli.Flag{
			cassetteFlag(),
			&cli.StringFlag{Name: "upstream", Usage: "verify over HTTP: the live server's MCP endpoint `URL`"},
			&cli.StringSliceFlag{Name: "ignore", Usage: "do not count differences at `PATH` (repeatable; syntax above)"},
			&cli.BoolFlag{Name: "learn", Usage: "run the server twice first and store the paths that differ between the runs as noise"},
			&cli.BoolFlag{Name: "update", Usage: "make this run the expectation for later verify runs"},
			&cli.StringFlag{Name: "format", Value: "text", Usage: "report `FORMAT`: text, json, junit or html (both sessions, the differences marked)"},
			&cli.DurationFlag{Name: "timeout", Value: replayer.DefaultVerifyTimeout, Usage: "wait this `DURATION` for each answer"},
			&cli.StringSliceFlag{Name: "header", Usage: "HTTP: send this `NAME: VALUE` header too, such as a credential the recording redacted (repeatable)"},
		},
		Action: func(c *cli.Context) error { return verify(c, e) },
	}
}

// verifyArgs splits the arguments into the SESSION (0 if absent) and the
// server command.
func verifyArgs(c *cli.Context) (int64, []string, error) {
	args := c.Args().Slice()
	var pos, argv []string
	if i := indexOf(args, "--"); i >= 0 {
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
	var id int64
	if len(pos) == 1 {
		n, err := strconv.ParseInt(pos[0], 10, 64)
		if err != nil || n <= 0 {
			return 0, nil, usageErr("mcpvcr ls to see the sessions and their numbers", "%q is not a session number", pos[0])
		}
		id = n
	}
	return id, argv, nil
}

func indexOf(ss []string, s string) int {
	for i, x := range ss {
		if x == s {
			return i
		}
	}
	return -1
}

func verify(c *cli.Context, e *env) error {
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
	db, persistent, err := openVerifyCassette(c)
	if err != nil {
		return err
	}
	defer db.Close()
	if !persistent && (c.Bool("learn") || c.Bool("update")) {
		return usageErr("mcpvcr import "+cassettePath(c)+" --cassette bug.db, then verify with --cassette bug.db",
			"--learn and --update store into the cassette, and %s is a JSONL export", cassettePath(c))
	}
	ids, err := verifySessions(c, db, id, t)
	if err != nil {
		return err
	}
	var reports []*replayer.DiffReport
	for _, sid := range ids {
		r, err := verifyOne(c, e, db, sid, t, extra)
		if err != nil {
			return err
		}
		if !persistent {
			r.Notes = append(r.Notes, "the run was not kept: "+cassettePath(c)+" is a JSONL export")
		}
		reports = append(reports, r)
	}
	if format == "html" {
		err = writeHTMLReports(c.Context, e.stdout, db, reports)
	} else {
		err = writeReports(e.stdout, format, reports)
	}
	if err != nil {
		return failErr(fmt.Errorf("write the report: %w", err), "")
	}
	for _, r := range reports {
		if r.Differs() && !c.Bool("update") {
			return errDiffer
		}
	}
	return nil
}

// verifyTarget reads the live server from the arguments and flags.
func verifyTarget(c *cli.Context, argv []string) (target, error) {
	up := c.String("upstream")
	switch {
	case up != "" && len(argv) > 0:
		return target{}, usageErr("mcpvcr verify SESSION --upstream URL, or mcpvcr verify SESSION -- COMMAND", "verify takes --upstream or a server command, not both")
	case up == "" && len(argv) == 0:
		return target{}, usageErr("mcpvcr verify SESSION -- SERVER_COMMAND [ARGS...]", "verify needs the live server: a command after --, or --upstream URL")
	case up == "":
		return target{argv: argv}, nil
	}
	u, err := url.Parse(up)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return target{}, usageErr("--upstream http://127.0.0.1:3001/mcp", "--upstream %q is not an http(s) URL", up)
	}
	h := http.Header{}
	for _, kv := range c.StringSlice("header") {
		k, v, ok := strings.Cut(kv, ":")
		if !ok || strings.TrimSpace(k) == "" {
			return target{}, usageErr(`--header "Authorization: Bearer TOKEN"`, "--header %q is not NAME: VALUE", kv)
		}
		h.Add(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	return target{upstream: u, header: h}, nil
}

// reportFlags reads the --format and --ignore flags verify and diff share.
func reportFlags(c *cli.Context) (format string, extra replayer.Noise, err error) {
	format = c.String("format")
	if format != "text" && format != "json" && format != "junit" && format != "html" {
		return "", replayer.Noise{}, usageErr("--format text, json, junit or html", "--format %q is not text, json, junit or html", format)
	}
	extra, err = parseIgnore(c.StringSlice("ignore"))
	return format, extra, err
}

func parseIgnore(paths []string) (replayer.Noise, error) {
	var n replayer.Noise
	for _, s := range paths {
		p, err := replayer.ParsePath(s)
		if err != nil {
			return replayer.Noise{}, usageErr(`--ignore 'result.content[*].text' (see mcpvcr verify --help)`, "%w", err)
		}
		n.Paths = append(n.Paths, p)
	}
	return n, nil
}

// openVerifyCassette opens the cassette, which must exist. It reports
// whether writes persist: a JSONL export is imported into a temporary
// cassette.
func openVerifyCassette(c *cli.Context) (*store.DB, bool, error) {
	db, err := openForRead(c)
	if err != nil {
		return nil, false, err
	}
	f, err := os.Open(cassettePath(c))
	if err != nil {
		db.Close()
		return nil, false, failErr(err, "")
	}
	defer f.Close()
	head := make([]byte, 16)
	n, _ := io.ReadFull(f, head)
	return db, bytes.Equal(head[:n], []byte("SQLite format 3\x00")), nil
}

// verifySessions returns the sessions to verify: id, or every session
// recorded over the target's kind of transport (stdio or HTTP) that is
// neither a verify run nor replaced by --update.
func verifySessions(c *cli.Context, db *store.DB, id int64, t target) ([]int64, error) {
	if id != 0 {
		if _, err := db.Session(c.Context, id); err != nil {
			return nil, failErr(fmt.Errorf("session %d: %w", id, err), "mcpvcr ls --cassette "+cassettePath(c)+" to see the sessions")
		}
		return []int64{id}, nil
	}
	all, err := db.Sessions(c.Context)
	if err != nil {
		return nil, failErr(fmt.Errorf("list sessions: %w", err), "")
	}
	var ids []int64
	for _, s := range all {
		if s.Labels[verifyOfLabel] == "" && s.Labels[supersededLabel] == "" && (s.Transport == store.Stdio) == (t.upstream == nil) {
			ids = append(ids, s.ID)
		}
	}
	if len(ids) == 0 {
		kind, hint := "stdio", "record one first: mcpvcr record -- SERVER_COMMAND"
		if t.upstream != nil {
			kind, hint = "HTTP", "record one first: mcpvcr record --upstream URL"
		}
		return nil, failErr(fmt.Errorf("cassette %s holds no %s sessions to verify", cassettePath(c), kind), hint)
	}
	return ids, nil
}

// expectation follows --update's replacements from session id to the
// session that is its expectation now.
func expectation(ctx context.Context, db *store.DB, id int64) (store.Session, error) {
	s, err := db.Session(ctx, id)
	for hops := 0; err == nil && s.Labels[supersededLabel] != "" && hops < 1000; hops++ {
		next, perr := strconv.ParseInt(s.Labels[supersededLabel], 10, 64)
		if perr != nil {
			break
		}
		s, err = db.Session(ctx, next)
	}
	return s, err
}

// verifyOne verifies one session and returns the comparison.
func verifyOne(c *cli.Context, e *env, db *store.DB, id int64, t target, extra replayer.Noise) (*replayer.DiffReport, error) {
	ctx := c.Context
	exp, err := expectation(ctx, db, id)
	if err != nil {
		return nil, failErr(fmt.Errorf("session %d: %w", id, err), "mcpvcr ls --cassette "+cassettePath(c))
	}
	if exp.ID != id {
		fmt.Fprintf(e.stderr, "mcpvcr: session %d was replaced by session %d (verify --update); verifying against %d\n", id, exp.ID, exp.ID)
	}
	if err := checkTransport(exp, t); err != nil {
		return nil, err
	}
	recs, err := replayer.Load(ctx, db, exp.ID)
	if err != nil {
		return nil, failErr(err, "")
	}
	want := recs[0]
	v := &replayer.Verifier{Recording: want, Timeout: c.Duration("timeout"), Logger: e.logger}
	if err := v.Check(); err != nil {
		return nil, verifyErr(exp, t, err, nil)
	}
	noise, err := replayer.SessionNoise(exp)
	if err != nil {
		return nil, failErr(err, "fix or delete the label with mcpvcr export/import")
	}
	name := fmt.Sprintf("verify of session %d", exp.ID)
	var (
		run *liveRun
		got *replayer.Recording
	)
	if c.Bool("learn") {
		var learned replayer.Noise
		learned, run, got, err = learnNoise(c, e, db, v, t, name)
		if err != nil {
			return nil, err
		}
		noise = noise.With(learned)
		exp.Labels = withLabel(exp.Labels, replayer.NoiseLabel, noise.String())
		if err := db.UpdateSession(ctx, &exp); err != nil {
			return nil, failErr(fmt.Errorf("store the noise mask: %w", err), "")
		}
		fmt.Fprintf(e.stderr, "mcpvcr: learned %d noise path(s); session %d now ignores %d path(s)\n", len(learned.Paths), exp.ID, len(noise.Paths))
	} else {
		run, got, err = verifyRun(c, e, db, v, t, name, exp)
		if err != nil {
			return nil, err
		}
	}
	report := replayer.Diff(want, got, noise.With(extra))
	run.vr.Annotate(report)
	if run.vr.ServerGone != nil && run.exitCode >= 0 {
		report.Notes = append(report.Notes, fmt.Sprintf("the server exited with code %d", run.exitCode))
	}
	if c.Bool("update") {
		if err := acceptRun(ctx, e, db, exp, want, got, noise, run); err != nil {
			return nil, err
		}
	}
	return report, nil
}

// checkTransport makes sure the live server is reached as the session
// was recorded.
func checkTransport(s store.Session, t target) error {
	switch {
	case s.Transport == store.Stdio && t.upstream != nil:
		return usageErr(fmt.Sprintf("mcpvcr verify %d -- SERVER_COMMAND [ARGS...]", s.ID), "session %d was recorded over stdio: give the server command after --, not --upstream", s.ID)
	case s.Transport != store.Stdio && t.upstream == nil:
		return usageErr(fmt.Sprintf("mcpvcr verify %d --upstream URL", s.ID), "session %d was recorded over %s: give the server's URL with --upstream, not a command", s.ID, s.Transport)
	}
	return nil
}

// verifyRun runs the live server once and loads the recorded run. A
// server that could not be verified is an exitFailure error, and its run
// is deleted.
func verifyRun(c *cli.Context, e *env, db *store.DB, v *replayer.Verifier, t target, name string, exp store.Session) (*liveRun, *replayer.Recording, error) {
	ctx := c.Context
	run, err := t.run(ctx, e, db, v, name)
	if err != nil {
		return nil, nil, err
	}
	if run.err != nil || run.sessionID == 0 {
		if run.sessionID != 0 {
			_ = db.DeleteSession(context.WithoutCancel(ctx), run.sessionID)
		}
		cause := run.err
		if cause == nil {
			cause = errors.New("the recording proxy saw no session")
		}
		return nil, nil, verifyErr(exp, t, cause, run)
	}
	err = db.Flush(ctx)
	var s store.Session
	if err == nil {
		s, err = db.Session(ctx, run.sessionID)
	}
	if err == nil {
		s.Labels = withLabel(s.Labels, verifyOfLabel, strconv.FormatInt(exp.ID, 10))
		err = db.UpdateSession(ctx, &s)
	}
	if err == nil {
		err = db.Flush(ctx)
	}
	if err != nil {
		return nil, nil, failErr(fmt.Errorf("save the verify run: %w", err), "")
	}
	recs, err := replayer.Load(ctx, db, run.sessionID)
	if err != nil {
		return nil, nil, failErr(err, "")
	}
	return run, recs[0], nil
}

// verifyErr explains why a server could not be verified.
func verifyErr(s store.Session, t target, err error, run *liveRun) error {
	var re *replayer.RevisionError
	hint := ""
	switch {
	case errors.Is(err, replayer.ErrNoClientFrames):
		return failErr(fmt.Errorf("session %d: %w", s.ID, err), "verify a session in which a client spoke: mcpvcr ls, mcpvcr show SESSION")
	case errors.Is(err, replayer.ErrUnsupported):
		return failErr(fmt.Errorf("session %d: %w", s.ID, err), "verify a session recorded over stdio, Streamable HTTP or HTTP+SSE")
	case errors.As(err, &re):
		hint = fmt.Sprintf("run a server that speaks %s, or record a new session at the revision this one speaks", re.Recorded)
	case errors.Is(err, replayer.ErrNoAnswer):
		hint = "check that the server starts and answers: run " + t.String() + " on its own"
	}
	msg := fmt.Errorf("cannot verify session %d against %s: %w", s.ID, t, err)
	if run != nil && run.exitCode >= 0 && errors.Is(err, replayer.ErrNoAnswer) {
		msg = fmt.Errorf("%w (the server exited with code %d)", msg, run.exitCode)
	}
	if run != nil && run.stderr != "" {
		msg = fmt.Errorf("%w; the server's last words on stderr:\n%s", msg, indentLines(run.stderr, "  "))
	}
	return failErr(msg, hint)
}

func indentLines(s, pre string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i := range lines {
		lines[i] = pre + lines[i]
	}
	return strings.Join(lines, "\n")
}

// learnNoise runs the old release twice and returns the paths that
// differ between the runs, with the second run, which stays as the verify
// run; the first is deleted.
func learnNoise(c *cli.Context, e *env, db *store.DB, v *replayer.Verifier, t target, name string) (replayer.Noise, *liveRun, *replayer.Recording, error) {
	exp := v.Recording.Session
	var (
		runs [2]*liveRun
		recs [2]*replayer.Recording
	)
	for i := range runs {
		run, got, err := verifyRun(c, e, db, v, t, name, exp)
		if err != nil {
			return replayer.Noise{}, nil, nil, err
		}
		if run.vr.ServerGone != nil {
			return replayer.Noise{}, nil, nil, failErr(fmt.Errorf("learn noise: the server went away during run %d: %w", i+1, run.vr.ServerGone),
				"learn with a server release that runs the session to the end")
		}
		runs[i], recs[i] = run, got
	}
	if err := db.DeleteSession(c.Context, recs[0].Session.ID); err != nil {
		return replayer.Noise{}, nil, nil, failErr(fmt.Errorf("learn noise: %w", err), "")
	}
	return replayer.Learn(v.Recording, recs[0], recs[1]), runs[1], recs[1], nil
}

// acceptRun makes the run the expectation for session exp.
func acceptRun(ctx context.Context, e *env, db *store.DB, exp store.Session, want, got *replayer.Recording, noise replayer.Noise, run *liveRun) error {
	if run.vr.ServerGone != nil {
		return &exitError{code: exitDiffer, err: fmt.Errorf("not updating session %d: the server went away during the run", exp.ID),
			hint: "fix the server, then run verify --update again"}
	}
	next := got.Session
	delete(next.Labels, verifyOfLabel)
	next.Labels = withLabel(next.Labels, supersedesLabel, strconv.FormatInt(exp.ID, 10))
	if mask := noise.Rescope(want, got); len(mask.Paths) > 0 {
		next.Labels[replayer.NoiseLabel] = mask.String()
	}
	next.Name = exp.Name
	exp.Labels = withLabel(exp.Labels, supersededLabel, strconv.FormatInt(next.ID, 10))
	for _, s := range []*store.Session{&next, &exp} {
		if err := db.UpdateSession(ctx, s); err != nil {
			return failErr(fmt.Errorf("update the expectation: %w", err), "")
		}
	}
	fmt.Fprintf(e.stderr, "mcpvcr: session %d is now the expectation in place of session %d\n", next.ID, exp.ID)
	return nil
}

// withLabel returns labels (copied) with k set to v.
func withLabel(labels map[string]string, k, v string) map[string]string {
	out := maps.Clone(labels)
	if out == nil {
		out = map[string]string{}
	}
	out[k] = v
	return out
}

func writeReports(w io.Writer, format string, reports []*replayer.DiffReport) error {
	switch format {
	case "json":
		return replayer.WriteJSON(w, reports...)
	case "junit":
		return replayer.WriteJUnit(w, reports...)
	}
	for i, r := range reports {
		if i > 0 {
			if _, err := io.WriteString(w, "\n"); err != nil {
				return err
			}
		}
		if err := r.WriteText(w); err != nil {
			return err
		}
	}
	return nil
}
