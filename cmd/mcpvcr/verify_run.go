package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mcpvcr/mcpvcr/recorder"
	"github.com/mcpvcr/mcpvcr/replayer"
	"github.com/mcpvcr/mcpvcr/store"
)

// Shutting down a verified stdio server: after its stdin closes it has
// stopGrace to exit, then gets SIGTERM, then after killGrace SIGKILL.
const (
	stopGrace = 5 * time.Second
	killGrace = 3 * time.Second
)

// liveRun is one run of the recorded client side against a live server,
// recorded as a session.
type liveRun struct {
	sessionID int64 // the recorded run; 0 if none was created
	vr        *replayer.VerifyRun
	err       error  // the Verifier's error, if the server could not be verified
	exitCode  int    // stdio: the server's exit code, -1 if unknown
	stderr    string // stdio: the last lines the server wrote to stderr
}

// target is the live server: a command (stdio) or a URL (HTTP).
type target struct {
	argv     []string
	upstream *url.URL
	header   http.Header
}

// String is the command line or the URL.
func (t target) String() string {
	if t.upstream != nil {
		return t.upstream.String()
	}
	return strings.Join(t.argv, " ")
}

// run sends rec to the live server once, recording the run in db as a
// session named name. An error means the run could not happen at all
// (the server did not start); a server that could not be verified is
// reported in liveRun.err.
func (t target) run(ctx context.Context, e *env, db *store.DB, v *replayer.Verifier, name string) (*liveRun, error) {
	if t.upstream != nil {
		return t.runHTTP(ctx, e, db, v, name)
	}
	return t.runStdio(ctx, e, db, v, name)
}

func (t target) runStdio(ctx context.Context, e *env, db *store.DB, v *replayer.Verifier, name string) (*liveRun, error) {
	argv := t.argv
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, failErr(fmt.Errorf("start server %q: %w", argv[0], err), "")
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, failErr(fmt.Errorf("start server %q: %w", argv[0], err), "")
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, failErr(fmt.Errorf("start server %q: %w", argv[0], err), "")
	}
	if err := cmd.Start(); err != nil {
		return nil, failErr(fmt.Errorf("the server did not start: %w", err), "check that the command after -- runs on its own: "+t.String())
	}
	stop := newStopper(cmd)
	defer stop.cancel()

	// The Verifier is the client: it writes to toServer and reads
	// fromServer; the recorder forwards both ways and records.
	toServerR, toServerW := io.Pipe()
	fromServerR, fromServerW := io.Pipe()
	tail := &tailWriter{max: 20}
	rec := &recorder.Stdio{
		Sink:    db,
		Session: store.Session{Name: name, Upstream: strings.Join((&recorder.Redactor{}).Args(argv), " ")},
		Stderr:  tail,
		Logger:  e.logger,
	}
	type recorded struct {
		res *recorder.StdioResult
		err error
	}
	done := make(chan recorded, 1)
	rctx := context.WithoutCancel(ctx)
	go func() {
		client := struct {
			io.Reader
			io.Writer
		}{toServerR, fromServerW}
		res, err := rec.Run(rctx, client, pipePair{stdout, stdin}, stderr)
		// The server's output has ended: unblock the Verifier.
		toServerR.CloseWithError(errors.New("the server is gone"))
		fromServerW.Close()
		done <- recorded{res, err}
	}()
	pipe := &verifierPipe{r: fromServerR, w: toServerW, onClose: stop.start}
	vr, verr := v.RunStdio(ctx, pipe)
	pipe.Close() // in case the Verifier stopped before closing it
	r := <-done
	waitErr := cmd.Wait()
	stop.cancel()
	code := exitCode(cmd, waitErr)
	if r.err != nil {
		return nil, failErr(fmt.Errorf("record the verify run: %w", r.err), "")
	}
	r.res.End(rctx, code)
	if r.res.Err != nil {
		return nil, failErr(fmt.Errorf("record the verify run: %w", r.res.Err), "free disk space or choose another --cassette")
	}
	return &liveRun{sessionID: r.res.SessionID, vr: vr, err: verr, exitCode: code, stderr: tail.String()}, nil
}

// verifierPipe is the Verifier's side of the pipes to the recorder.
type verifierPipe struct {
	r       *io.PipeReader
	w       *io.PipeWriter
	onClose func()
}

// Read reads what the server said.
func (p *verifierPipe) Read(b []byte) (int, error) { return p.r.Read(b) }

// Write sends to the server.
func (p *verifierPipe) Write(b []byte) (int, error) { return p.w.Write(b) }

// Close closes the server's stdin and starts the shutdown timers.
func (p *verifierPipe) Close() error {
	err := p.w.Close()
	p.onClose()
	return err
}

// stopper ends a server that lingers after its stdin closed.
type stopper struct {
	cmd  *exec.Cmd
	once sync.Once
	mu   sync.Mutex // guards timers
	// timers are the pending SIGTERM and SIGKILL.
	timers []*time.Timer
}

func newStopper(cmd *exec.Cmd) *stopper { return &stopper{cmd: cmd} }

// start arms the timers; only the first call counts.
func (s *stopper) start() {
	s.once.Do(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.timers = append(s.timers,
			time.AfterFunc(stopGrace, func() { _ = s.cmd.Process.Signal(syscall.SIGTERM) }),
			time.AfterFunc(stopGrace+killGrace, func() { _ = s.cmd.Process.Kill() }))
	})
}

// cancel disarms the timers.
func (s *stopper) cancel() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range s.timers {
		t.Stop()
	}
}

// tailWriter keeps the last max lines written to it. It is safe for
// concurrent use.
type tailWriter struct {
	max   int
	mu    sync.Mutex // guards lines and part
	lines []string
	part  string
}

// Write keeps the lines of p.
func (w *tailWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.part + string(p)
	parts := strings.Split(s, "\n")
	w.part = parts[len(parts)-1]
	w.lines = append(w.lines, parts[:len(parts)-1]...)
	if len(w.lines) > w.max {
		w.lines = w.lines[len(w.lines)-w.max:]
	}
	return len(p), nil
}

// String returns the lines kept.
func (w *tailWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	lines := w.lines
	if w.part != "" {
		lines = append(lines[:len(lines):len(lines)], w.part)
	}
	return strings.Join(lines, "\n")
}

// captureSink passes everything to a Sink and remembers the sessions
// created.
type captureSink struct {
	recorder.Sink
	mu  sync.Mutex // guards ids
	ids []int64
}

// CreateSession creates the session and remembers its id.
func (s *captureSink) CreateSession(ctx context.Context, sess *store.Session) error {
	if err := s.Sink.CreateSession(ctx, sess); err != nil {
		return err
	}
	s.mu.Lock()
	s.ids = append(s.ids, sess.ID)
	s.mu.Unlock()
	return nil
}

func (s *captureSink) first() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.ids) == 0 {
		return 0
	}
	return s.ids[0]
}

func (t target) runHTTP(ctx context.Context, e *env, db *store.DB, v *replayer.Verifier, name string) (*liveRun, error) {
	if err := reachable(t.upstream); err != nil {
		return nil, failErr(fmt.Errorf("the server at %s is not reachable: %w", t.upstream.Redacted(), err), "start the server first, or check --upstream")
	}
	sink := &captureSink{Sink: db}
	rec := &recorder.HTTP{Upstream: t.upstream, Sink: sink, Name: name, Logger: e.logger}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, failErr(fmt.Errorf("listen for the recording proxy: %w", err), "")
	}
	srv := &http.Server{Handler: rec}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	vr, verr := v.RunHTTP(ctx, "http://"+ln.Addr().String()+"/", nil, t.header)
	srv.Close()
	<-served
	rctx := context.WithoutCancel(ctx)
	if err := rec.Close(rctx); err != nil {
		return nil, failErr(fmt.Errorf("record the verify run: %w", err), "free disk space or choose another --cassette")
	}
	return &liveRun{sessionID: sink.first(), vr: vr, err: verr, exitCode: -1}, nil
}
