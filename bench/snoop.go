package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// mcpsnoop is another MCP recording proxy, measured as a further mode in
// the same rounds when -mcpsnoop names its binary (build it outside this
// module; see docs/performance.md). Its HTTP proxy is
//
//	mcpsnoop http --target URL --listen 127.0.0.1:PORT
//
// and its stdio shim mcpsnoop --trace-file FILE -- SERVER-COMMAND. Both
// keep a JSONL trace of every frame under MCPSNOOP_HOME, which the bench
// points at a directory of its own, and say on stderr when they dropped
// frames from it ("dropped N envelope(s) under load"). A run through
// mcpsnoop does not fail on a stream it cuts: the frames the client did
// not get, and those missing from its trace, are counted as lost.
type snoopPeer struct {
	bin  string // the mcpsnoop binary
	home string // its MCPSNOOP_HOME
	runs int    // counts runs, to name trace files
}

// snoop is the mcpsnoop peer, nil without -mcpsnoop.
var snoop *snoopPeer

// newSnoopPeer checks that bin runs and gives it a home under dir.
func newSnoopPeer(ctx context.Context, bin, dir string) (*snoopPeer, error) {
	abs, err := filepath.Abs(bin)
	if err != nil {
		return nil, err
	}
	out, err := exec.CommandContext(ctx, abs, "--version").CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("-mcpsnoop %s: %w: %s (build it with go build ./cmd/mcpsnoop in a checkout of kerlenton/mcpsnoop)", bin, err, out)
	}
	home := filepath.Join(dir, "mcpsnoop")
	if err := os.MkdirAll(home, 0o700); err != nil {
		return nil, err
	}
	return &snoopPeer{bin: abs, home: home}, nil
}

// command returns mcpsnoop run with args, in its home, with no config
// file of ours around it.
func (s *snoopPeer) command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, s.bin, args...)
	cmd.Dir = s.home
	cmd.Env = append(os.Environ(), "MCPSNOOP_HOME="+s.home)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	return cmd
}

// snoopErr reads an mcpsnoop process's stderr to its end: it counts the
// frames mcpsnoop says it dropped from its trace, drops its greeting, and
// passes anything else on to the bench's stderr.
type snoopErr struct {
	dropped int
	done    chan struct{}
}

// readSnoopErr starts reading r, an mcpsnoop process's stderr; wait
// waits for its end.
func readSnoopErr(r io.Reader) *snoopErr {
	e := &snoopErr{done: make(chan struct{})}
	go func() {
		defer close(e.done)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			line := sc.Text()
			if rest, ok := strings.CutPrefix(line, "mcpsnoop: dropped "); ok {
				n, _, _ := strings.Cut(rest, " ")
				if k, err := strconv.Atoi(n); err == nil {
					e.dropped += k
					continue
				}
			}
			if strings.HasPrefix(line, "mcpsnoop: proxying ") || strings.HasPrefix(line, "mcpsnoop: tracing ") {
				continue
			}
			fmt.Fprintln(os.Stderr, line)
		}
		_, _ = io.Copy(io.Discard, r)
	}()
	return e
}

// wait waits for stderr's end and returns the frames dropped.
func (e *snoopErr) wait() int {
	<-e.done
	return e.dropped
}

// runHTTP runs the load through a new mcpsnoop HTTP proxy in front
// of upstream and stops it after. The run's cpu is the CPU time the
// proxy used from listening to its exit (writing its trace included).
func (s *snoopPeer) runHTTP(ctx context.Context, c *http.Client, upstream, tool string, n, conc int) (run, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return run{}, err
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := s.command(ctx, "http", "--target", upstream, "--listen", addr)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return run{}, err
	}
	if err := cmd.Start(); err != nil {
		return run{}, fmt.Errorf("start mcpsnoop: %w", err)
	}
	serr := readSnoopErr(stderr)
	stop := func() error {
		cmd.Process.Signal(syscall.SIGTERM)
		serr.wait()
		return cmd.Wait()
	}
	if err := awaitListen(ctx, addr); err != nil {
		stop()
		return run{}, fmt.Errorf("mcpsnoop http: %w", err)
	}
	cpu0, err := procCPU(cmd.Process.Pid)
	if err != nil {
		stop()
		return run{}, err
	}
	r, err := runHTTPLossy(ctx, c, "http://"+addr+"/mcp", tool, n, conc)
	c.CloseIdleConnections()
	if serr := stop(); serr != nil && !isSignalExit(serr) {
		err = errors.Join(err, fmt.Errorf("mcpsnoop http: %w", serr))
	}
	if err != nil {
		return run{}, err
	}
	if st := cmd.ProcessState; st != nil {
		r.cpu = st.UserTime() + st.SystemTime() - cpu0
	}
	r.lost += serr.dropped
	return r, nil
}

// isSignalExit tells whether err is the exit of a process ended by the
// SIGTERM that stops it.
func isSignalExit(err error) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGTERM
}

// awaitListen dials addr until it accepts a connection: mcpsnoop says
// nothing once it listens.
func awaitListen(ctx context.Context, addr string) error {
	deadline := time.Now().Add(10 * time.Second)
	for wait := time.Millisecond; ; wait = min(2*wait, 50*time.Millisecond) {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			conn.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not listening on %s after 10s: %w", addr, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
	}
}

// openStdio starts the stdio peer behind an mcpsnoop shim, tracing into
// a file of its own, and connects a client to the shim.
func (s *snoopPeer) openStdio(ctx context.Context, self string, lost *int) (*conn, error) {
	s.runs++
	trace := filepath.Join(s.home, fmt.Sprintf("stdio-%d.jsonl", s.runs))
	cmd := s.command(ctx, "--trace-file", trace, "--", self, "-peer", "stdio")
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start mcpsnoop: %w", err)
	}
	serr := readSnoopErr(stderr)
	return &conn{w: in, r: out, finish: func() error {
		in.Close()
		_, _ = io.Copy(io.Discard, out)
		*lost += serr.wait()
		if err := cmd.Wait(); err != nil {
			return fmt.Errorf("mcpsnoop: %w", err)
		}
		return nil
	}}, nil
}
