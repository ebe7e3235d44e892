package mcptest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// Bounds on child processes started by [StartServer] and [EverythingHTTP].
const (
	// readyTimeout bounds how long a child may take to say it is ready.
	readyTimeout = 30 * time.Second
	// stopTimeout bounds how long a child may take to exit after SIGINT
	// before it is killed.
	stopTimeout = 5 * time.Second
	// tailLines is how many of a child's last output lines a failure shows.
	tailLines = 40
)

// StartServer starts the test server program (see [BuildServer]) with args,
// which must select an HTTP transport ("-transport", "http" or "sse"), waits
// until it prints its "listening on URL" line and returns URL: the MCP
// endpoint (path /mcp) or the SSE endpoint (path /sse). The process is
// stopped when the test ends. It fails tb if the program does not start.
func StartServer(tb testing.TB, args ...string) string {
	tb.Helper()
	return StartServerEnv(tb, nil, args...)
}

// BlockingCancelNotify is the Go SDK's compatibility setting (for
// [StartServerEnv]) with which a server sends its notifications/cancelled
// for a request of its own before the call returns. By default the SDK
// sends it from a goroutine; over Streamable HTTP it goes on the stream of
// the client request the server's request was made for, and when the tool
// answers first that stream is gone and the SDK drops the notification.
const BlockingCancelNotify = "MCPGODEBUG=blockingcancelnotify=1"

// StartServerEnv is [StartServer] with env ("KEY=value") added to the
// program's environment.
func StartServerEnv(tb testing.TB, env []string, args ...string) string {
	tb.Helper()
	cmd := exec.Command(BuildServer(tb), args...)
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	m, err := startChild(tb, cmd, regexp.MustCompile(`^listening on (http://\S+)$`))
	if err != nil {
		tb.Fatal(err)
	}
	return m[1]
}

// startChild starts cmd, waits until a line of its stdout or stderr matches
// ready, and returns the match's submatches. The child is interrupted, and
// killed if it lingers, when the test ends. It returns an error if the
// child cannot start, or exits or stays silent for readyTimeout first.
func startChild(tb testing.TB, cmd *exec.Cmd, ready *regexp.Regexp) ([]string, error) {
	tb.Helper()
	out := &lineWatcher{ready: ready, matched: make(chan []string, 1)}
	cmd.Stdout = out
	cmd.Stderr = out
	cmd.WaitDelay = stopTimeout
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		close(exited)
	}()
	tb.Cleanup(func() {
		select {
		case <-exited:
			return
		default:
		}
		cmd.Process.Signal(os.Interrupt)
		t := time.NewTimer(stopTimeout)
		defer t.Stop()
		select {
		case <-exited:
		case <-t.C:
			cmd.Process.Kill()
			<-exited
		}
	})

	t := time.NewTimer(readyTimeout)
	defer t.Stop()
	select {
	case m := <-out.matched:
		return m, nil
	case <-exited:
		return nil, &exitError{cmd.Path, waitErr, out.tail()}
	case <-t.C:
		return nil, fmt.Errorf("%s not ready after %v\n%s", cmd.Path, readyTimeout, out.tail())
	}
}

// An exitError reports a child that exited before it was ready.
type exitError struct {
	path   string
	err    error
	output string
}

func (e *exitError) Error() string {
	return fmt.Sprintf("%s exited before it was ready: %v\n%s", e.path, e.err, e.output)
}

// A lineWatcher is the stdout and stderr of a child: it keeps the last
// lines for diagnostics and reports the first line matching ready.
type lineWatcher struct {
	ready   *regexp.Regexp
	matched chan []string // buffered; receives the first match only

	// guards partial, lines and seen
	mu      sync.Mutex
	partial []byte
	lines   []string
	seen    bool
}

func (w *lineWatcher) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.partial = append(w.partial, p...)
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			break
		}
		line := strings.TrimRight(string(w.partial[:i]), "\r")
		w.partial = w.partial[i+1:]
		w.lines = append(w.lines, line)
		if len(w.lines) > tailLines {
			w.lines = w.lines[1:]
		}
		if m := w.ready.FindStringSubmatch(line); m != nil && !w.seen {
			w.seen = true
			w.matched <- m
		}
	}
	return len(p), nil
}

func (w *lineWatcher) tail() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Join(append(w.lines, string(w.partial)), "\n")
}
