package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mcpvcr/mcpvcr/store"
)

// startSessions are the cassette sizes, in sessions of genFrames frames,
// of the replay start rows; quickStartSessions with -quick.
var (
	startSessions      = []int{100, 10000}
	quickStartSessions = []int{100, 1000}
)

// startResult is what the replay start runs of one cassette measured:
// medians over the rounds.
type startResult struct {
	sessions int
	// transport is "" for stdio under the tolerant default, else what
	// the rows name after "replay start": http, sse, or stdio and rules.
	transport string
	listen    time.Duration // HTTP: from starting mcpvcr to its listening line
	first     time.Duration // from starting mcpvcr to the first answer
	peak      int64         // mcpvcr's peak RSS (VmHWM) once it answered
}

// buildMcpvcr builds the mcpvcr command into dir and returns its path.
func buildMcpvcr(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "mcpvcr")
	out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/mcpvcr/mcpvcr/cmd/mcpvcr").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build mcpvcr: %w\n%s", err, out)
	}
	return bin, nil
}

// genDB writes a generated cassette of n sessions (see genCassette) into
// a new SQLite cassette at path, through store's JSONL import as mcpvcr
// import does.
func genDB(ctx context.Context, path string, n int) error {
	db, err := store.Open(ctx, path)
	if err != nil {
		return err
	}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(genCassette(pw, n, genFrames)) }()
	_, err = db.Import(ctx, pr)
	pr.CloseWithError(errors.New("import stopped"))
	return errors.Join(err, db.Close())
}

// startRules are the matching rules of the stdio replay start rows, by
// row label: the tolerant default, and exact matching with an --ignore
// rule (the generated calls have no "when" argument: it changes nothing
// but the rules replay runs under).
var startRules = []struct {
	label string
	args  []string
}{
	{"", nil},
	{"stdio exact+ignore", []string{"--match", "exact", "--ignore", "tools/call:params.arguments.when"}},
}

// replayStart measures mcpvcr replay --stdio, without SESSION, of a
// generated cassette of n sessions, under each of startRules: one
// untimed run (which may build what the cassette lacks), then rounds
// runs, each a new process answering one initialize. It returns one
// result per rule set.
func replayStart(ctx context.Context, bin, dir string, n, rounds int, log io.Writer) ([]startResult, error) {
	path := filepath.Join(dir, fmt.Sprintf("start-%d.db", n))
	defer removeCassette(path)
	fmt.Fprintf(log, "replay start: generating a cassette of %d sessions of %d frames\n", n, genFrames)
	if err := genDB(ctx, path, n); err != nil {
		return nil, fmt.Errorf("generate %d sessions: %w", n, err)
	}
	var out []startResult
	for _, rules := range startRules {
		res := startResult{sessions: n, transport: rules.label}
		var firsts []time.Duration
		var peaks []int64
		for i := range rounds + 1 {
			fmt.Fprintf(log, "replay start: %d sessions %v, round %d\n", n, rules.args, i)
			first, peak, err := startRun(ctx, bin, path, rules.args...)
			if err != nil {
				return nil, fmt.Errorf("%d sessions %v: %w", n, rules.args, err)
			}
			if i > 0 {
				firsts, peaks = append(firsts, first), append(peaks, peak)
			}
		}
		slices.Sort(firsts)
		slices.Sort(peaks)
		res.first, res.peak = firsts[len(firsts)/2], peaks[len(peaks)/2]
		out = append(out, res)
	}
	return out, nil
}

// startTimeout bounds one replay start run.
const startTimeout = 2 * time.Minute

// startRun starts mcpvcr replay --stdio on cassette, with args, sends the generated
// sessions' initialize and returns the time from starting the process to
// the answer, and the process's peak RSS at that moment. The answer must
// be the recorded one.
func startRun(ctx context.Context, bin, cassette string, args ...string) (time.Duration, int64, error) {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"replay", "--stdio", "--cassette", cassette}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return 0, 0, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return 0, 0, err
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, 0, err
	}
	defer cmd.Wait()
	defer stdin.Close()
	if _, err := io.WriteString(stdin, genInitialize+"\n"); err != nil {
		return 0, 0, fmt.Errorf("send initialize: %w", err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	first := time.Since(start)
	if err != nil {
		return 0, 0, fmt.Errorf("read the answer to initialize: %w\n%s", err, stderr.String())
	}
	if got := strings.TrimSpace(line); got != genInitResult {
		return 0, 0, fmt.Errorf("answer to initialize = %s; want the recorded %s\n%s", got, genInitResult, stderr.String())
	}
	peak, err := procStatus(cmd.Process.Pid, "VmHWM")
	if err != nil {
		return 0, 0, err
	}
	stdin.Close()
	_, _ = io.Copy(io.Discard, stdout)
	if err := cmd.Wait(); err != nil {
		return 0, 0, fmt.Errorf("mcpvcr replay: %w\n%s", err, stderr.String())
	}
	return first, peak, nil
}

// addStart adds the replay start rows of one transport: for each
// cassette the time to listen (HTTP), to the first answer and the peak
// RSS, with the targets: every cassette within 2× of the first
// (smallest) one's times, and under 64 MB.
func (t *table) addStart(rs []startResult) {
	for _, r := range rs {
		name := fmt.Sprintf("replay start %s", fmtCount(r.sessions))
		if r.transport != "" {
			name = fmt.Sprintf("replay start %s %s", r.transport, fmtCount(r.sessions))
		}
		timed := func(metric string, d, base time.Duration) row {
			x := row{load: name, conc: "1", metric: metric, rec: "-", rep: "-", target: "-"}
			for m := range numModes {
				x.vals[m] = "-"
			}
			x.vals[modeReplay] = fmtDur(d)
			if r.sessions != rs[0].sessions {
				q := ratio(float64(d), float64(base))
				x.target = t.check(q <= 2, "≤2× of %s (%.3g×)", fmtCount(rs[0].sessions), q)
			}
			return x
		}
		if r.listen > 0 {
			t.rows = append(t.rows, timed("listening", r.listen, rs[0].listen))
		}
		first := timed("first answer", r.first, rs[0].first)
		peak := row{load: name, conc: "1", metric: "peak RSS (VmHWM)", rec: "-", rep: "-"}
		for m := range numModes {
			peak.vals[m] = "-"
		}
		peak.vals[modeReplay] = fmtMB(r.peak)
		peak.target = t.check(r.peak < 64<<20, "<64MB (%.3g×)", float64(r.peak)/(64<<20))
		t.rows = append(t.rows, first, peak)
	}
}

// fmtCount prints a session count: "100 sessions", "10k sessions".
func fmtCount(n int) string {
	if n >= 1000 && n%1000 == 0 {
		return fmt.Sprintf("%dk sessions", n/1000)
	}
	return fmt.Sprintf("%d sessions", n)
}

// writeGenCassette writes a generated cassette of n sessions over
// transport (stdio, http or sse) as JSONL to path ("-" for stdout), for
// tests and profiling outside the bench.
func writeGenCassette(path string, n int, transport string) error {
	gen := func(w io.Writer) error { return genCassette(w, n, genFrames) }
	switch transport {
	case "", "stdio":
	case "http", "sse", "http modern", "http refused":
		gen = func(w io.Writer) error { return genHTTPCassette(w, n, httpGenFrames, transport) }
	default:
		return fmt.Errorf("-gen-transport %q is not stdio, http, sse, \"http modern\" or \"http refused\"", transport)
	}
	if path == "-" {
		return gen(os.Stdout)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := gen(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
