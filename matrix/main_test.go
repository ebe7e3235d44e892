package matrix

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// mcpvcrBin is the mcpvcr binary built for this test run, with -race.
var mcpvcrBin string

var fullFlag = flag.Bool("matrix.full", false, "run the whole matrix (also MATRIX_FULL=1); without it, a cheap slice")

var verifyRuns = flag.Int("matrix.verify-runs", 0, "how many verify runs P4 makes per cell (default 20 in the full matrix, 2 in the slice)")

var (
	maxCuts    = flag.Int("matrix.cuts", 0, "at most this many --cut points per cell for P3 (default: every one in the full matrix, the middle of the longest stream in the slice)")
	chaosSeeds = flag.Int("matrix.chaos-seeds", 0, "how many chaos seeds P3 runs per cell (default 5 in the full matrix, 1 in the slice)")
)

// full reports whether the whole matrix runs.
func full() bool { return *fullFlag || os.Getenv("MATRIX_FULL") == "1" }

func TestMain(m *testing.M) {
	goProcessMain() // when this process is the Go SDK client process
	flag.Parse()
	dir, err := os.MkdirTemp("", "mcpvcr-matrix-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// A -race binary sleeps a second at exit by default (GORACE
	// atexit_sleep_ms); a race still exits 66, failing its cell.
	if g := os.Getenv("GORACE"); !strings.Contains(g, "atexit_sleep_ms") {
		os.Setenv("GORACE", strings.TrimSpace(g+" atexit_sleep_ms=0"))
	}
	mcpvcrBin = filepath.Join(dir, "mcpvcr")
	out, err := exec.Command("go", "build", "-race", "-o", mcpvcrBin, "../cmd/mcpvcr").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "build mcpvcr: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// result is what one mcpvcr run printed and returned.
type result struct {
	code           int
	stdout, stderr string
}

// mcpvcr runs the binary to completion.
func mcpvcr(tb testing.TB, args ...string) result {
	tb.Helper()
	cmd := exec.Command(mcpvcrBin, args...)
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

// serving is an mcpvcr process serving HTTP until stopped.
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
	s := &serving{cmd: exec.Command(mcpvcrBin, args...), stderr: &syncBuffer{}, done: make(chan struct{})}
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
