package mcpvcrtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mcpvcr/mcpvcr/replayer"
)

// serveEnv carries a child's replay, as JSON, from Command to Main.
const serveEnv = "MCPVCR_TEST_SERVE"

// mainRan is set by Main in the test process: Command needs it.
var mainRan atomic.Bool

// childConfig is what Command hands to the test binary it starts.
type childConfig struct {
	Cassette string        `json:"cassette"`
	Sessions []int64       `json:"sessions,omitempty"`
	Rules    []string      `json:"rules,omitempty"`
	Pace     float64       `json:"pace,omitempty"`
	Wait     time.Duration `json:"wait,omitempty"`
	Report   string        `json:"report"`
}

// childReport is what the child leaves for the test at exit.
type childReport struct {
	Summary string `json:"summary"`
	OK      bool   `json:"ok"`
	Err     string `json:"err,omitempty"`
}

// Main lets the test binary be the replayed server that Command starts, the
// way the MCP Go SDK's own tests serve from their test binary. Call it from
// TestMain in each package that uses Command:
//
//	func TestMain(m *testing.M) { mcpvcrtest.Main(m) }
//
// Started by Command, Main replays on stdin and stdout and exits (1 when the
// client sent traffic the cassette does not match); otherwise it runs the
// tests (m.Run) and exits with their status. Main does not return.
func Main(m *testing.M) {
	if cfg := os.Getenv(serveEnv); cfg != "" {
		os.Exit(serveChild(cfg, os.Stdin, os.Stdout, os.Stderr))
	}
	mainRan.Store(true)
	os.Exit(m.Run())
}

// Command returns a command that serves cassette's stdio sessions on its
// stdin and stdout, for mcp.CommandTransport or any client that starts its
// server as a process. The command is the test binary itself, so the
// package's TestMain must call Main; Command fails t if it did not. Clock
// does not reach the child: use Transport to control time.
//
// The caller (or mcp.CommandTransport) starts and waits for the command; its
// stderr is kept and logged if the replay fails. At t.Cleanup, a child still
// running (a client that never closed) is killed, and t fails with the
// replayer's diff for each client frame that matched nothing.
func Command(t testing.TB, cassette string, opts ...Option) *exec.Cmd {
	t.Helper()
	c := newConfig(opts)
	if !mainRan.Load() {
		t.Fatalf("mcpvcrtest.Command: the test binary cannot serve: TestMain does not call mcpvcrtest.Main\ntry: func TestMain(m *testing.M) { mcpvcrtest.Main(m) }")
	}
	if len(c.beforeReplay) > 0 {
		t.Fatalf("mcpvcrtest.Command: BeforeReplay hooks cannot reach the child process that replays\ntry: mcpvcrtest.Transport(t, cassette, mcpvcrtest.BeforeReplay(fn)) replays stdio sessions in memory")
	}
	if c.clock != nil {
		t.Fatalf("mcpvcrtest.Command: Clock cannot reach the child process that replays\ntry: mcpvcrtest.Transport, which replays in this process")
	}
	recs := load(t, cassette, c, "Command", stdioTransports...)
	newServer(t, recs, c, "Command") // checks the options as the child will
	abs, err := filepath.Abs(cassette)
	if err != nil {
		t.Fatalf("mcpvcrtest.Command: %v", err)
	}
	report := filepath.Join(t.TempDir(), "report.json")
	cfg, err := json.Marshal(childConfig{Cassette: abs, Sessions: c.sessions, Rules: c.rules, Pace: c.pace, Wait: c.wait, Report: report})
	if err != nil {
		t.Fatalf("mcpvcrtest.Command: %v", err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatalf("mcpvcrtest.Command: the test binary: %v", err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), serveEnv+"="+string(cfg))
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	t.Cleanup(func() {
		rep, err := os.ReadFile(report)
		if errors.Is(err, os.ErrNotExist) {
			if cmd.Process != nil {
				// Still serving a client that never closed: end it. Who
				// started it waits for it.
				_ = cmd.Process.Signal(syscall.SIGTERM)
			}
			return
		}
		if err != nil {
			t.Errorf("mcpvcrtest.Command: read the replay's report: %v", err)
			return
		}
		var r childReport
		if err := json.Unmarshal(rep, &r); err != nil {
			t.Errorf("mcpvcrtest.Command: read the replay's report: %v", err)
			return
		}
		if r.Err != "" {
			t.Errorf("mcpvcrtest.Command: replay: %s\nstderr:\n%s", r.Err, stderr.String())
		}
		if !r.OK {
			t.Errorf("mcpvcrtest.Command: the client sent traffic that %s does not match (answered with JSON-RPC error %d):\n%s", cassette, replayer.NoMatchCode, r.Summary)
		}
	})
	return cmd
}

// serveChild replays cfg on stdin and stdout, in the child Command started,
// and returns its exit code.
func serveChild(cfg string, stdin io.Reader, stdout io.Writer, stderr io.Writer) int {
	var c childConfig
	if err := json.Unmarshal([]byte(cfg), &c); err != nil {
		fmt.Fprintf(stderr, "mcpvcrtest: %s: %v\n", serveEnv, err)
		return 3
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep := childReport{OK: true}
	code := func() int {
		recs, err := loadFile(c.Cassette, c.Sessions)
		if err == nil {
			recs, err = over(recs, c.Cassette, stdioTransports...)
		}
		if err != nil {
			rep.Err = err.Error()
			return 3
		}
		mt, err := matchRules(c.Rules, recs)
		if err != nil {
			rep.Err = err.Error()
			return 3
		}
		srv := &replayer.Server{Recordings: recs, Pace: c.Pace, Match: mt, Wait: c.Wait,
			Logger: slog.New(slog.NewTextHandler(stderr, nil))}
		defer srv.Close()
		r, err := srv.ServeStdio(ctx, struct {
			io.Reader
			io.Writer
		}{stdin, stdout})
		if err != nil {
			rep.Err = err.Error()
			return 3
		}
		var b bytes.Buffer
		goHints(r).WriteSummary(&b)
		rep.Summary, rep.OK = b.String(), r.OK()
		if !r.OK() {
			return 1
		}
		return 0
	}()
	out, _ := json.Marshal(rep)
	if err := os.WriteFile(c.Report, out, 0o600); err != nil {
		fmt.Fprintf(stderr, "mcpvcrtest: write the report: %v\n", err)
	}
	return code
}

// syncBuffer is a bytes.Buffer safe for the child's stderr copier and
// the cleanup to share.
type syncBuffer struct {
	// mu guards b.
	mu sync.Mutex
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
