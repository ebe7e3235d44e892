package recorder

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Command records a stdio session with a server it runs as a child
// process: the process plumbing that mcpvcr record and verify share. The
// child gets its own process group, so that a terminal's signals reach it
// only through Signals.
//
// The zero value is not usable: Argv and Recorder.Sink must be set.
type Command struct {
	// Argv is the server command line. Required.
	Argv []string
	// Recorder records the session. If its Session.Upstream is empty, the
	// command line is recorded, with Redactor applied.
	Recorder Stdio
	// Redactor hides credentials in the recorded command line, and secret
	// JSON members in the frames when Recorder has no Redactor. If nil,
	// the default rules apply.
	Redactor *Redactor
	// Signals, if not nil, are forwarded to the server until it exits.
	Signals <-chan os.Signal
	// StopGrace, if positive, is how long the server may run on once its
	// stdin is closed; then it gets SIGTERM, and KillGrace later SIGKILL.
	// If zero, the server decides when it exits.
	StopGrace, KillGrace time.Duration
}

// CommandResult is what a Command run produced.
type CommandResult struct {
	// SessionID is the recorded session.
	SessionID int64
	// ExitCode is the server's exit code, 128+N when signal N ended it,
	// -1 when it is unknown.
	ExitCode int
	// Signal is the last signal forwarded to the server from Signals, nil
	// when none was: with ExitCode 128+N for that signal, the server
	// stopped because whoever started mcpvcr asked it to.
	Signal os.Signal
	// Stopped reports that the server did not exit once its stdin closed
	// and was ended by StopGrace's SIGTERM (or KillGrace's SIGKILL): its
	// exit code is then that signal's, not its own choice.
	Stopped bool
	// Err is the first recording error (a full disk, say): forwarding went
	// on regardless, and the session is incomplete.
	Err error
}

// StartError reports a server that could not be started.
type StartError struct {
	Argv []string
	Err  error
}

// Error names the command and why it did not start.
func (e *StartError) Error() string {
	return fmt.Sprintf("the server did not start: %v", e.Err)
}

// Unwrap returns the cause.
func (e *StartError) Unwrap() error { return e.Err }

// Run starts the server, forwards client to its stdin and its stdout to
// client, records the conversation, waits for the server to exit and ends
// the session with its exit code. It returns when the server's output has
// ended and it has exited. A server that cannot start is a *StartError.
// The recording is not cut when ctx is done; cancel it with
// context.WithoutCancel to let the server decide, as mcpvcr record does.
func (c *Command) Run(ctx context.Context, client io.ReadWriter) (*CommandResult, error) {
	if len(c.Argv) == 0 {
		return nil, &StartError{Err: errors.New("no command")}
	}
	cmd := exec.Command(c.Argv[0], c.Argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // signals reach it through us only
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, &StartError{Argv: c.Argv, Err: err}
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, &StartError{Argv: c.Argv, Err: err}
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, &StartError{Argv: c.Argv, Err: err}
	}
	if err := cmd.Start(); err != nil {
		return nil, &StartError{Argv: c.Argv, Err: err}
	}
	stop := &stopper{cmd: cmd, stop: c.StopGrace, kill: c.KillGrace}
	defer stop.cancel()

	fwd := &signalForwarder{cmd: cmd, sigs: c.Signals, quit: make(chan struct{})}
	var wg sync.WaitGroup
	if c.Signals != nil {
		wg.Go(fwd.run)
	}
	defer func() {
		close(fwd.quit)
		wg.Wait()
	}()

	rec := c.Recorder
	if rec.Redactor == nil {
		rec.Redactor = c.Redactor
	}
	if rec.Session.Upstream == "" {
		red := c.Redactor
		if red == nil {
			red = &Redactor{}
		}
		rec.Session.Upstream = strings.Join(red.Args(c.Argv), " ")
	}
	res, runErr := rec.Run(ctx, client, childPipes{Reader: stdout, w: stdin, onClose: stop.start}, stderr)
	if runErr != nil {
		// No session could be created: the server gets its EOF and goes.
		stdin.Close()
		stop.start()
	}
	waitErr := cmd.Wait()
	stop.cancel()
	code := exitCode(cmd, waitErr)
	if runErr != nil {
		return nil, runErr
	}
	res.End(ctx, code)
	return &CommandResult{SessionID: res.SessionID, ExitCode: code, Signal: fwd.last(), Stopped: stop.signalled(), Err: res.Err}, nil
}

// exitCode is the exit code of cmd, whose Wait returned err: 128+N when
// signal N ended it, -1 when it is unknown.
func exitCode(cmd *exec.Cmd, err error) int {
	if cmd.ProcessState == nil {
		return -1
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return -1
	}
	return cmd.ProcessState.ExitCode()
}

// childPipes is the server's stdout and stdin as one io.ReadWriteCloser.
// Close closes stdin, so that the server sees the client's EOF, and then
// calls onClose.
type childPipes struct {
	io.Reader
	w       io.WriteCloser
	onClose func()
}

func (p childPipes) Write(b []byte) (int, error) { return p.w.Write(b) }

func (p childPipes) Close() error {
	err := p.w.Close()
	p.onClose()
	return err
}

// signalForwarder passes signals on to the child until quit is closed.
type signalForwarder struct {
	cmd  *exec.Cmd
	sigs <-chan os.Signal
	quit chan struct{}

	mu  sync.Mutex
	sig os.Signal // the last one forwarded
}

func (f *signalForwarder) run() {
	for {
		select {
		case s := <-f.sigs:
			f.mu.Lock()
			f.sig = s
			f.mu.Unlock()
			_ = f.cmd.Process.Signal(s)
		case <-f.quit:
			return
		}
	}
}

// last returns the last signal forwarded, nil if none was.
func (f *signalForwarder) last() os.Signal {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sig
}

// stopper ends a server that lingers after its stdin closed.
type stopper struct {
	cmd        *exec.Cmd
	stop, kill time.Duration
	once       sync.Once

	mu sync.Mutex // guards timers and done
	// timers are the pending SIGTERM and SIGKILL.
	timers []*time.Timer
	done   bool
	// sent: a timer signalled the server.
	sent bool
}

// signalled reports whether the stopper signalled the server.
func (s *stopper) signalled() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sent
}

// signal sends sig unless cancel came first, and notes that it did.
func (s *stopper) signal(sig os.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return
	}
	s.sent = true
	_ = s.cmd.Process.Signal(sig)
}

// start arms the timers; only the first call counts, and none after
// cancel.
func (s *stopper) start() {
	if s.stop <= 0 {
		return
	}
	s.once.Do(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.done {
			return
		}
		s.timers = append(s.timers,
			time.AfterFunc(s.stop, func() { s.signal(syscall.SIGTERM) }),
			time.AfterFunc(s.stop+s.kill, func() { s.signal(syscall.SIGKILL) }))
	})
}

// cancel disarms the timers.
func (s *stopper) cancel() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.done = true
	for _, t := range s.timers {
		t.Stop()
	}
}
