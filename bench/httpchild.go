package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/mcpvcr/mcpvcr/internal/procs"
	"github.com/mcpvcr/mcpvcr/recorder"
	"github.com/mcpvcr/mcpvcr/replayer"
	"github.com/mcpvcr/mcpvcr/store"
)

// The HTTP loads run every server and proxy as a process of its own, as
// they run in use: mcpvcr record and replay are processes, and so are the
// servers and proxies they are compared with. In one process, the Go
// scheduler would decide who runs: a proxy goroutine that never blocks
// keeps the client's goroutine waiting for a P, and the client would see
// an SSE answer's first event only once the proxy paused, near the end of
// the answer, in every mode. The kernel schedules processes on wake-ups.

// child is a peer process of this program serving HTTP on loopback: the
// minimal server (http-peer), the passthrough proxy (http-pass), the
// recorder (http-record) or the replayer (http-replay). It says
// "listening URL" on stdout; on "flush" on stdin it commits what it has
// recorded and says "flushed", and on "close" it shuts down (closing its
// cassette) and says "closed".
type child struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines *bufio.Scanner
	url   string
}

// childProfile, when set, makes every child write a CPU profile to it,
// suffixed with the child's kind and a count: -cpuprofile F writes
// F.http-record.3 and so on besides F.
var (
	childProfile string
	children     int
)

// startChild starts this program as peer kind with args and waits until
// it listens.
func startChild(ctx context.Context, self, kind string, args ...string) (*child, error) {
	args = append([]string{"-peer", kind}, args...)
	if recordOptions.LowPriority {
		args = append(args, "-low-writer")
	}
	if fixedProcs {
		args = append(args, "-fixed-procs")
	}
	if childProfile != "" {
		children++
		args = append(args, "-cpuprofile", fmt.Sprintf("%s.%s.%d", childProfile, kind, children))
	}
	cmd := exec.CommandContext(ctx, self, args...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", kind, err)
	}
	c := &child{cmd: cmd, stdin: stdin, lines: bufio.NewScanner(stdout)}
	if !c.lines.Scan() {
		c.kill()
		return nil, fmt.Errorf("%s said nothing: %v", kind, c.lines.Err())
	}
	u, ok := strings.CutPrefix(c.lines.Text(), "listening ")
	if !ok {
		c.kill()
		return nil, fmt.Errorf("%s said %q", kind, c.lines.Text())
	}
	c.url = u
	return c, nil
}

// close asks the child to shut down, waits for it to say so, and returns
// the CPU time it used up to then. The child exits once stdin closes.
func (c *child) close() (time.Duration, error) {
	if err := c.stop(); err != nil {
		c.kill()
		return 0, err
	}
	cpu, err := c.cpu()
	return cpu, errors.Join(err, c.wait())
}

// flush asks the child to commit what it has recorded, if it records,
// and waits for it to say so: a run of a child that lives on is given the
// CPU time of its recording work (see longLived).
func (c *child) flush() error { return c.ask("flush", "flushed") }

// stop asks the child to shut down and waits for it to say so; it is
// still running then, for /proc to tell about it.
func (c *child) stop() error { return c.ask("close", "closed") }

// ask writes line to the child's stdin and waits for its answer, want.
func (c *child) ask(line, want string) error {
	if _, err := io.WriteString(c.stdin, line+"\n"); err != nil {
		return err
	}
	if !c.lines.Scan() || c.lines.Text() != want {
		return fmt.Errorf("%s did not answer %q with %q: %q %v", c.cmd.Args[2], line, want, c.lines.Text(), c.lines.Err())
	}
	return nil
}

// wait lets the child exit and waits for it.
func (c *child) wait() error {
	c.stdin.Close()
	if err := c.cmd.Wait(); err != nil {
		return fmt.Errorf("%s: %w", c.cmd.Args[2], err)
	}
	return nil
}

// kill ends the child at once. After wait it does nothing.
func (c *child) kill() {
	if c.cmd.ProcessState != nil {
		return
	}
	c.cmd.Process.Kill()
	c.cmd.Wait()
}

// cpu returns the CPU time the child has used, in nanoseconds from
// Linux's /proc/PID/task/*/schedstat (0 elsewhere). Threads that have
// exited are not counted; a Go program keeps its threads.
func (c *child) cpu() (time.Duration, error) { return procCPU(c.cmd.Process.Pid) }

// procCPU returns the CPU time process pid has used, from
// /proc/PID/task/*/schedstat (0 where there is none).
func procCPU(pid int) (time.Duration, error) {
	dir := fmt.Sprintf("/proc/%d/task", pid)
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return 0, nil
	}
	var sum time.Duration
	for _, t := range tasks {
		b, err := os.ReadFile(dir + "/" + t.Name() + "/schedstat")
		if err != nil {
			continue // the thread is gone
		}
		f, _, _ := strings.Cut(string(b), " ")
		ns, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s/%s/schedstat: %w", dir, t.Name(), err)
		}
		sum += time.Duration(ns)
	}
	return sum, nil
}

// httpChild runs this program as the peer kind: see child.
func httpChild(kind, upstream, cassette string) error {
	ctx := context.Background()
	var u *url.URL
	if upstream != "" {
		var err error
		if u, err = url.Parse(upstream); err != nil {
			return err
		}
	}
	var h http.Handler
	var closeFn func() error
	var flushFn func() error // for "flush" on stdin: a recorder's cassette
	switch kind {
	case "http-peer":
		h = httpPeer{}
	case "http-pass":
		h = passthrough(u)
	case "http-record":
		// As mcpvcr record runs it (cmd/mcpvcr/record_http.go).
		var active func(int)
		if !fixedProcs {
			if fit := procs.New(); fit != nil {
				active = fit.Active
			}
		}
		if discard {
			rec := &recorder.HTTP{Upstream: u, Sink: &discardSink{}, Active: active}
			h = rec
			closeFn = func() error { return rec.Close(ctx) }
			break
		}
		db, err := store.OpenWith(ctx, cassette, recordOptions)
		if err != nil {
			return err
		}
		rec := &recorder.HTTP{Upstream: u, Sink: db, Active: active}
		h = rec
		closeFn = func() error { return errors.Join(rec.Close(ctx), db.Close()) }
		flushFn = func() error { return db.Flush(ctx) }
	case "http-replay":
		rs, err := replayServer(ctx, cassette)
		if err != nil {
			return err
		}
		h = rs
		closeFn = func() error {
			rs.Close()
			for _, rep := range rs.Reports() {
				if !rep.OK() {
					return fmt.Errorf("replay: %d unmatched frames", len(rep.Mismatches))
				}
			}
			return nil
		}
	default:
		return fmt.Errorf("unknown peer %q", kind)
	}
	s, err := serve(h)
	if err != nil {
		return err
	}
	fmt.Printf("listening %s\n", s.url)
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() && in.Text() != "close" {
		if in.Text() != "flush" {
			continue
		}
		if flushFn != nil {
			if err := flushFn(); err != nil {
				return err
			}
		}
		fmt.Println("flushed")
	}
	s.close(ctx)
	if closeFn != nil {
		if err := closeFn(); err != nil {
			return err
		}
	}
	fmt.Println("closed")
	_, _ = io.Copy(io.Discard, os.Stdin)
	return nil
}

// replayServer serves the newest session of the cassette at path.
func replayServer(ctx context.Context, path string) (*replayer.Server, error) {
	db, err := store.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	ss, err := db.Sessions(ctx)
	if err != nil {
		return nil, err
	}
	if len(ss) == 0 {
		return nil, errors.New("nothing recorded to replay")
	}
	recs, err := db.Recordings(ctx, ss[len(ss)-1].ID)
	if err != nil {
		return nil, err
	}
	return &replayer.Server{Recordings: recs}, nil
}
