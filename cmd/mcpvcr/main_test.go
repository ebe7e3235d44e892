package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// mcpvcrBin is the mcpvcr binary built for this test run.
var mcpvcrBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mcpvcr-cmd-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// A binary built with -race sleeps a second as it exits (GORACE
	// atexit_sleep_ms, 1000 by default) so that other threads may finish
	// printing a report; the tests run it hundreds of times. Without the
	// sleep a race is still reported when it happens and the process
	// still exits 66, which fails the test that ran it.
	if g := os.Getenv("GORACE"); !strings.Contains(g, "atexit_sleep_ms") {
		os.Setenv("GORACE", strings.TrimSpace(g+" atexit_sleep_ms=0"))
	}
	// The tests wait on processes, peers and networks far more than on
	// the CPU: run more of them at once than go test's default of one
	// per CPU, unless -parallel says how many.
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		_ = flag.Set("test.parallel", fmt.Sprint(testParallel))
	}
	// httptest.Server.Close closes the idle connections of
	// http.DefaultTransport, those of every test in the process. A client
	// of a test running beside it that had just taken one for a POST saw
	// it break ("http: CloseIdleConnections called"; no POST is retried):
	// TestOAuth/Headless/ApprovesAtOnce failed so once. The tests' clients
	// without one of their own go through a transport Close cannot reach.
	baseTransport = http.DefaultTransport.(*http.Transport)
	http.DefaultTransport = keepIdle{baseTransport}
	mcpvcrBin = filepath.Join(dir, "mcpvcr")
	out, err := exec.Command("go", "build", "-race", "-o", mcpvcrBin, ".").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "build mcpvcr: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// baseTransport is the standard library's http.DefaultTransport, which
// TestMain wraps in keepIdle; clone it for a transport of a test's own.
var baseTransport *http.Transport

// keepIdle is a RoundTripper that httptest.Server.Close does not make
// close its idle connections (it lacks CloseIdleConnections).
type keepIdle struct{ t *http.Transport }

func (k keepIdle) RoundTrip(r *http.Request) (*http.Response, error) { return k.t.RoundTrip(r) }

// testParallel is how many parallel tests run at once by default.
const testParallel = 4

// parallel runs t beside the package's other parallel tests, except when
// re-recording the cassettes (-recassette), which rewrites files that
// other tests read. Tests whose outcome depends on how soon a client acts
// stay sequential, and so run first, alone: the cancellation tests
// (replay gives a client CancelGrace to cancel where the recorded one
// did), the concurrent OAuth clients (their dances are told apart partly
// by connection reuse), and a test that sets an environment variable.
func parallel(t *testing.T) {
	t.Helper()
	if !*recassette {
		t.Parallel()
	}
}

// testCtx returns a context bounded well inside the test timeout.
func testCtx(tb testing.TB) context.Context {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	tb.Cleanup(cancel)
	return ctx
}

// result is what one mcpvcr run printed and returned.
type result struct {
	code           int
	stdout, stderr string
}

// mcpvcr runs the binary to completion with stdin.
func mcpvcr(tb testing.TB, stdin string, args ...string) result {
	tb.Helper()
	return runMcpvcr(tb, strings.NewReader(stdin), nil, args...)
}

// runMcpvcr runs the binary to completion with stdin (none if nil) and
// env added to this process's environment (none if nil).
func runMcpvcr(tb testing.TB, stdin io.Reader, env []string, args ...string) result {
	tb.Helper()
	cmd := exec.Command(mcpvcrBin, args...)
	cmd.Stdin = stdin
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			tb.Fatalf("run mcpvcr %v: %v", args, err)
		}
		code = ee.ExitCode()
	}
	return result{code, out.String(), errb.String()}
}

// serving is an mcpvcr process that serves HTTP until stopped.
type serving struct {
	cmd    *exec.Cmd
	URL    string // the URL it told the user to point the client at
	stderr *syncBuffer
	done   chan struct{}
	code   int
}

// startServing starts mcpvcr with args (which include --listen
// 127.0.0.1:0) and waits until it says where it listens.
func startServing(tb testing.TB, args ...string) *serving {
	tb.Helper()
	return startServingBin(tb, mcpvcrBin, args...)
}

// startServingBin is startServing for the mcpvcr binary at bin.
func startServingBin(tb testing.TB, bin string, args ...string) *serving {
	tb.Helper()
	s := &serving{cmd: exec.Command(bin, args...), stderr: &syncBuffer{}, done: make(chan struct{})}
	pr, pw := io.Pipe()
	s.cmd.Stderr = io.MultiWriter(s.stderr, pw)
	if err := s.cmd.Start(); err != nil {
		tb.Fatalf("start mcpvcr %v: %v", args, err)
	}
	urlc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if m := urlRE.FindString(sc.Text()); m != "" {
				urlc <- m
				break
			}
		}
		io.Copy(io.Discard, pr)
	}()
	go func() {
		err := s.cmd.Wait()
		pw.Close()
		if ee, ok := err.(*exec.ExitError); ok {
			s.code = ee.ExitCode()
		}
		close(s.done)
	}()
	tb.Cleanup(func() { s.Stop() })
	select {
	case s.URL = <-urlc:
	case <-s.done:
		tb.Fatalf("mcpvcr %v exited %d before listening:\n%s", args, s.code, s.stderr)
	case <-time.After(30 * time.Second):
		tb.Fatalf("mcpvcr %v did not say where it listens:\n%s", args, s.stderr)
	}
	return s
}

var urlRE = regexp.MustCompile(`http://127\.0\.0\.1:[0-9]+[^ ;,]*`)

// Stop interrupts mcpvcr, as Ctrl-C would, and returns its exit code.
func (s *serving) Stop() int {
	select {
	case <-s.done:
		return s.code
	default:
	}
	_ = s.cmd.Process.Signal(os.Interrupt)
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
	return s.code
}

// syncBuffer is a bytes.Buffer safe for concurrent use.
type syncBuffer struct {
	mu sync.Mutex // guards b
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startPiped starts cmd with pipes to its stdin and from its stdout, its
// stderr kept in the buffer it returns.
func startPiped(tb testing.TB, cmd *exec.Cmd) (io.WriteCloser, io.ReadCloser, *syncBuffer) {
	tb.Helper()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	return stdin, stdout, stderr
}

// dumpOnFailure logs the timeline of session 1 of db if the test fails.
func dumpOnFailure(tb testing.TB, db string) {
	tb.Cleanup(func() {
		if tb.Failed() {
			tb.Logf("recording:\n%s", mcpvcr(tb, "", "show", "1", "--cassette", db).stdout)
		}
	})
}

// recordThenReplay runs run against mcpvcr record in front of upstream,
// then against mcpvcr replay of that recording (with replayFlags), and
// requires both runs to give the same result and the replay to exit 0
// with every client frame matched. path is the endpoint's path on the
// replay server ("/mcp", "/sse"); the record URL already carries it. It
// returns the cassette path.
func recordThenReplay[T any](t *testing.T, upstream, path string, replayFlags []string, run func(url string) T) string {
	t.Helper()
	db := filepath.Join(t.TempDir(), "c.db")
	dumpOnFailure(t, db)
	rec := startServing(t, "record", "--cassette", db, "--upstream", upstream, "--listen", "127.0.0.1:0")
	live := run(rec.URL)
	if code := rec.Stop(); code != 0 {
		t.Fatalf("mcpvcr record exited %d:\n%s", code, rec.stderr)
	}
	rep := startServing(t, append([]string{"replay", "--cassette", db, "--listen", "127.0.0.1:0"}, replayFlags...)...)
	replayed := run(rep.URL + path)
	code := rep.Stop()
	if diff := cmp.Diff(live, replayed); diff != "" {
		t.Errorf("replay differs from the live server (-live +replay):\n%s\nreplay stderr:\n%s", diff, rep.stderr)
	}
	if code != 0 || !strings.Contains(rep.stderr.String(), " 0 unmatched") {
		t.Errorf("mcpvcr replay exited %d; want 0 and every client frame matched:\n%s", code, rep.stderr)
	}
	return db
}
