package verify

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/mcpvcr/mcpvcr/diff"
	"github.com/mcpvcr/mcpvcr/store"
)

// Labels the expectation workflow keeps on sessions, besides
// diff.NoiseLabel.
const (
	// LabelVerifyOf marks a verify run with the session it verified.
	LabelVerifyOf = store.LabelVerifyOf
	// LabelSupersededBy marks an expectation that Options.Update replaced
	// with the session it names.
	LabelSupersededBy = store.LabelSupersededBy
	// LabelSupersedes marks the session Options.Update made the
	// expectation with the session it replaced.
	LabelSupersedes = store.LabelSupersedes
)

// exitStopped is the exit code of a stdio server verify stopped itself.
const exitStopped = -2

// UnverifiableError reports a session that could not be verified against
// the target: the recording cannot be driven, or the server did not
// answer or speaks another revision. Err is the Verifier's error.
type UnverifiableError struct {
	Session int64
	Target  string
	Err     error
	// ExitCode is the stdio server's exit code, -1 if unknown, -2 when
	// verify stopped the server itself (it did not exit once its stdin
	// closed).
	ExitCode int
	// Stderr holds the last lines the stdio server wrote to stderr.
	Stderr string
}

// Error explains why the session could not be verified.
func (e *UnverifiableError) Error() string {
	if errors.Is(e.Err, ErrNoClientFrames) || errors.Is(e.Err, ErrUnsupported) {
		return fmt.Sprintf("session %d: %v", e.Session, e.Err)
	}
	msg := fmt.Sprintf("cannot verify session %d against %s: %v", e.Session, e.Target, e.Err)
	switch {
	case e.ExitCode == exitStopped && errors.Is(e.Err, ErrNoAnswer):
		msg += " (the server was still running; verify stopped it)"
	case e.ExitCode >= 0 && errors.Is(e.Err, ErrNoAnswer):
		msg += fmt.Sprintf(" (the server exited with code %d)", e.ExitCode)
	}
	if e.Stderr != "" {
		msg += "; the server's last words on stderr:\n" + indentLines(e.Stderr, "  ")
	}
	return msg
}

// Unwrap returns the Verifier's error.
func (e *UnverifiableError) Unwrap() error { return e.Err }

// Options configure Cassette.
type Options struct {
	// Session is the session to verify. If 0, every session recorded over
	// the target's kind of transport (stdio or HTTP) is, except verify
	// runs and expectations Update replaced.
	Session int64
	// Target is the live server. Required.
	Target Target
	// Ignore adds to the noise stored with each session.
	Ignore diff.Noise
	// Learn runs the target twice first and learns every path that differs
	// between the runs as noise, except where a run did not keep the
	// recorded causal order (those differences the runner may have made).
	// The paths are written to Progress and applied to this comparison;
	// they are stored with the session only if Save is set.
	Learn bool
	Save  bool
	// Update makes the run the expectation for later runs.
	Update bool
	// Timeout bounds the wait for each answer. If 0, DefaultTimeout.
	Timeout time.Duration
	// The write guard (see WriteGuard) is on when the target is Remote
	// or ReadOnly is set, unless AllowWrites is: it keeps tool calls that
	// may write from being sent, except to the tools AllowTools names.
	AllowWrites bool
	AllowTools  []string
	ReadOnly    bool
	// Logger receives diagnostics. If nil, nothing is logged.
	Logger *slog.Logger
	// Progress receives a line for each step people want to hear of: a
	// session replaced by Update, the noise learned, a new expectation.
	// If nil, they are discarded.
	Progress io.Writer
}

// Cassette verifies sessions of db against a live server and returns one
// comparison per session, old (the expectation) against new (the run).
// Each run is recorded into db as a session labelled LabelVerifyOf; a
// session replaced by Update is verified against its replacement. db may
// be a temporary import of a JSONL export (see store.OpenFile): runs are
// then lost at Close, and Learn and Update fail with ErrTemporary.
func Cassette(ctx context.Context, db *store.DB, o Options) ([]*diff.Report, error) {
	if db.Temporary() && ((o.Learn && o.Save) || o.Update) {
		return nil, ErrTemporary
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	ids, err := sessionsToVerify(ctx, db, o)
	if err != nil {
		return nil, err
	}
	var reports []*diff.Report
	for _, id := range ids {
		r, err := verifyOne(ctx, db, id, &o)
		if err != nil {
			return nil, err
		}
		if db.Temporary() {
			r.Notes = append(r.Notes, "the run was not kept: the cassette is a JSONL export")
		}
		reports = append(reports, r)
	}
	return reports, nil
}

// otherTransport is an error that is both ErrNoSessions and
// ErrWrongTransport: the cassette holds sessions, of the other transport.
type otherTransport string

func (e otherTransport) Error() string   { return string(e) }
func (e otherTransport) Unwrap() []error { return []error{ErrNoSessions, ErrWrongTransport} }

// sessionsToVerify returns o.Session, or every session recorded over the
// target's kind of transport that is neither a verify run nor replaced.
func sessionsToVerify(ctx context.Context, db *store.DB, o Options) ([]int64, error) {
	if o.Session != 0 {
		if _, err := db.Session(ctx, o.Session); err != nil {
			return nil, err // it names the session
		}
		return []int64{o.Session}, nil
	}
	all, err := db.Sessions(ctx)
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	var ids []int64
	others := 0 // sessions of the other kind of transport
	for _, s := range all {
		if s.Labels[LabelVerifyOf] != "" || s.Labels[LabelSupersededBy] != "" {
			continue
		}
		if (s.Transport == store.Stdio) == (o.Target.URL == nil) {
			ids = append(ids, s.ID)
		} else {
			others++
		}
	}
	if len(ids) == 0 {
		kind, other := "stdio", "HTTP"
		if o.Target.URL != nil {
			kind, other = "HTTP", "stdio"
		}
		if others > 0 {
			// The user gave the other kind of target: say which to give.
			return nil, otherTransport(fmt.Sprintf("no sessions to verify: the cassette holds no %s sessions; its %d were recorded over %s", kind, others, other))
		}
		return nil, fmt.Errorf("%w: the cassette holds no %s sessions", ErrNoSessions, kind)
	}
	return ids, nil
}

// Expectation follows Update's replacements from session id to the
// session that is its expectation now.
func Expectation(ctx context.Context, db *store.DB, id int64) (store.Session, error) {
	s, err := db.Session(ctx, id)
	for hops := 0; err == nil && s.Labels[LabelSupersededBy] != "" && hops < 1000; hops++ {
		next, perr := strconv.ParseInt(s.Labels[LabelSupersededBy], 10, 64)
		if perr != nil {
			break
		}
		s, err = db.Session(ctx, next)
	}
	return s, err
}

// verifyOne verifies one session and returns the comparison.
func verifyOne(ctx context.Context, db *store.DB, id int64, o *Options) (*diff.Report, error) {
	exp, err := Expectation(ctx, db, id)
	if err != nil {
		return nil, fmt.Errorf("session %d: %w", id, err)
	}
	if exp.ID != id {
		fmt.Fprintf(o.Progress, "mcpvcr: session %d was replaced by session %d (verify --update); verifying against %d\n", id, exp.ID, exp.ID)
	}
	if err := checkTransport(exp, o.Target); err != nil {
		return nil, err
	}
	want, err := db.Recording(ctx, exp.ID)
	if err != nil {
		return nil, err
	}
	v := &Verifier{Recording: want, Timeout: o.Timeout, Logger: o.Logger}
	if !o.AllowWrites && (o.ReadOnly || Remote(o.Target.URL)) {
		v.Guard = &WriteGuard{Allow: o.AllowTools}
	}
	if err := v.prepare(); err != nil {
		return nil, &UnverifiableError{Session: exp.ID, Target: o.Target.String(), Err: err, ExitCode: -1}
	}
	noise, err := diff.SessionNoise(exp)
	if err != nil {
		return nil, err
	}
	name := fmt.Sprintf("verify of session %d", exp.ID)
	var (
		run *liveRun
		got *store.Recording
	)
	if o.Learn {
		var learned diff.Noise
		learned, run, got, err = learnNoise(ctx, db, v, o, name)
		if err != nil {
			return nil, err
		}
		noise = noise.With(learned)
		for _, p := range learned.Paths {
			fmt.Fprintf(o.Progress, "mcpvcr: noise: %s\n", p)
		}
		if !o.Save {
			fmt.Fprintf(o.Progress, "mcpvcr: would learn %d noise path(s) for session %d; nothing stored: add --save to store them\n", len(learned.Paths), exp.ID)
		} else {
			exp.Labels = withLabel(exp.Labels, diff.NoiseLabel, noise.String())
			if err := db.UpdateSession(ctx, &exp); err != nil {
				return nil, fmt.Errorf("store the noise mask: %w", err)
			}
			fmt.Fprintf(o.Progress, "mcpvcr: learned %d noise path(s); session %d now ignores %d path(s)\n", len(learned.Paths), exp.ID, len(noise.Paths))
		}
	} else {
		run, got, err = runOnce(ctx, db, v, o, name, exp)
		if err != nil {
			return nil, err
		}
	}
	report := diff.Compare(want, got, noise.With(o.Ignore))
	run.vr.Annotate(report)
	if run.vr.ServerGone != nil && run.exitCode >= 0 {
		report.Notes = append(report.Notes, fmt.Sprintf("the server exited with code %d", run.exitCode))
	}
	if o.Update {
		if err := accept(ctx, db, exp, want, got, noise, run, o); err != nil {
			return nil, err
		}
	}
	return report, nil
}

// checkTransport makes sure the live server is reached as the session
// was recorded.
func checkTransport(s store.Session, t Target) error {
	switch {
	case s.Transport == store.Stdio && t.URL != nil:
		return fmt.Errorf("session %d was recorded over stdio: give the server command, not a URL: %w", s.ID, ErrWrongTransport)
	case s.Transport != store.Stdio && t.URL == nil:
		return fmt.Errorf("session %d was recorded over %s: give the server's URL, not a command: %w", s.ID, s.Transport, ErrWrongTransport)
	}
	return nil
}

// runOnce runs the live server once and loads the recorded run. A server
// that could not be verified is an *UnverifiableError, and its run is
// deleted.
func runOnce(ctx context.Context, db *store.DB, v *Verifier, o *Options, name string, exp store.Session) (*liveRun, *store.Recording, error) {
	run, err := o.Target.run(ctx, o, db, v, name)
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
		return nil, nil, &UnverifiableError{Session: exp.ID, Target: o.Target.String(), Err: cause, ExitCode: run.exitCode, Stderr: run.stderr}
	}
	err = db.Flush(ctx)
	var s store.Session
	if err == nil {
		s, err = db.Session(ctx, run.sessionID)
	}
	if err == nil {
		s.Labels = withLabel(s.Labels, LabelVerifyOf, strconv.FormatInt(exp.ID, 10))
		err = db.UpdateSession(ctx, &s)
	}
	if err == nil {
		err = db.Flush(ctx)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("save the verify run: %w", err)
	}
	got, err := db.Recording(ctx, run.sessionID)
	if err != nil {
		return nil, nil, err
	}
	return run, got, nil
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
func learnNoise(ctx context.Context, db *store.DB, v *Verifier, o *Options, name string) (diff.Noise, *liveRun, *store.Recording, error) {
	exp := v.Recording.Session
	var (
		runs [2]*liveRun
		recs [2]*store.Recording
	)
	for i := range runs {
		run, got, err := runOnce(ctx, db, v, o, name, exp)
		if err != nil {
			return diff.Noise{}, nil, nil, err
		}
		if run.vr.ServerGone != nil {
			return diff.Noise{}, nil, nil, fmt.Errorf("%w: the server went away during run %d: %w", ErrNotLearned, i+1, run.vr.ServerGone)
		}
		runs[i], recs[i] = run, got
	}
	if err := db.DeleteSession(ctx, recs[0].Session.ID); err != nil {
		return diff.Noise{}, nil, nil, fmt.Errorf("%w: %w", ErrNotLearned, err)
	}
	learned := diff.Learn(v.Recording, recs[0], recs[1])
	var from int64
	for i, rec := range recs {
		if seq, why := disorder(v.plan.model, rec); seq != 0 && (from == 0 || seq < from) {
			from = seq
			fmt.Fprintf(o.Progress, "mcpvcr: run %d did not keep the recorded order at seq %d (%s): nothing is learned from there on\n", i+1, seq, why)
		}
	}
	learned, _ = untainted(learned, from)
	return learned, runs[1], recs[1], nil
}

// accept makes the run the expectation for session exp.
func accept(ctx context.Context, db *store.DB, exp store.Session, want, got *store.Recording, noise diff.Noise, run *liveRun, o *Options) error {
	if run.vr.ServerGone != nil {
		return fmt.Errorf("%w of session %d: the server went away during the run", ErrNotUpdated, exp.ID)
	}
	next := got.Session
	delete(next.Labels, LabelVerifyOf)
	next.Labels = withLabel(next.Labels, LabelSupersedes, strconv.FormatInt(exp.ID, 10))
	if mask := noise.Rescope(want, got); len(mask.Paths) > 0 {
		next.Labels[diff.NoiseLabel] = mask.String()
	}
	next.Name = exp.Name
	exp.Labels = withLabel(exp.Labels, LabelSupersededBy, strconv.FormatInt(next.ID, 10))
	for _, s := range []*store.Session{&next, &exp} {
		if err := db.UpdateSession(ctx, s); err != nil {
			return fmt.Errorf("update the expectation: %w", err)
		}
	}
	fmt.Fprintf(o.Progress, "mcpvcr: session %d is now the expectation in place of session %d\n", next.ID, exp.ID)
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
