package verify

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/mcpvcr/mcpvcr/internal/upstream"
	"github.com/mcpvcr/mcpvcr/recorder"
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
	vr        *Run
	err       error  // the Verifier's error, if the server could not be verified
	exitCode  int    // stdio: the server's exit code, -1 if unknown, exitStopped if verify stopped it
	stderr    string // stdio: the last lines the server wrote to stderr
}

// Target is the live server: a command (stdio) or a URL (HTTP).
type Target struct {
	// Command is the server command line, for stdio sessions.
	Command []string
	// URL is the server's MCP endpoint (or HTTP+SSE stream), for HTTP
	// sessions.
	URL *url.URL
	// Header is added to every HTTP request, such as a credential the
	// recording redacted.
	Header http.Header
}

// String is the command line or the URL.
func (t Target) String() string {
	if t.URL != nil {
		return t.URL.String()
	}
	return strings.Join(t.Command, " ")
}

// run sends rec to the live server once, recording the run in db as a
// session named name. An error means the run could not happen at all
// (the server did not start); a server that could not be verified is
// reported in liveRun.err.
func (t Target) run(ctx context.Context, o *Options, db *store.DB, v *Verifier, name string) (*liveRun, error) {
	if t.URL != nil {
		return t.runHTTP(ctx, o, db, v, name)
	}
	return t.runStdio(ctx, o, db, v, name)
}

func (t Target) runStdio(ctx context.Context, o *Options, db *store.DB, v *Verifier, name string) (*liveRun, error) {
	// The Verifier is the client: it writes to toServer and reads
	// fromServer; the recorder forwards both ways and records.
	toServerR, toServerW := io.Pipe()
	fromServerR, fromServerW := io.Pipe()
	tail := &tailWriter{max: 20}
	rec := &recorder.Command{
		Argv:      t.Command,
		Recorder:  recorder.Stdio{Sink: db, Session: store.Session{Name: name}, Stderr: tail, Logger: o.Logger},
		StopGrace: stopGrace,
		KillGrace: killGrace,
	}
	type recorded struct {
		res *recorder.CommandResult
		err error
	}
	done := make(chan recorded, 1)
	rctx := context.WithoutCancel(ctx)
	go func() {
		client := struct {
			io.Reader
			io.Writer
		}{toServerR, fromServerW}
		res, err := rec.Run(rctx, client)
		// The server's output has ended: unblock the Verifier.
		toServerR.CloseWithError(errServerGone)
		fromServerW.Close()
		done <- recorded{res, err}
	}()
	pipe := &verifierPipe{r: fromServerR, w: toServerW}
	vr, verr := v.RunStdio(ctx, pipe)
	pipe.Close() // in case the Verifier stopped before closing it
	r := <-done
	if r.err != nil {
		var se *recorder.StartError
		if errors.As(r.err, &se) {
			return nil, r.err
		}
		return nil, fmt.Errorf("%w: %w", ErrNotRecorded, r.err)
	}
	if r.res.Err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotRecorded, r.res.Err)
	}
	code := r.res.ExitCode
	if r.res.Stopped {
		code = exitStopped // verify's own SIGTERM, not the server's choice
	}
	return &liveRun{sessionID: r.res.SessionID, vr: vr, err: verr, exitCode: code, stderr: tail.String()}, nil
}

// errServerGone ends the Verifier's writes once the server is gone.
var errServerGone = errors.New("the server is gone")

// verifierPipe is the Verifier's side of the pipes to the recorder.
type verifierPipe struct {
	r *io.PipeReader
	w *io.PipeWriter
}

// Read reads what the server said.
func (p *verifierPipe) Read(b []byte) (int, error) { return p.r.Read(b) }

// Write sends to the server.
func (p *verifierPipe) Write(b []byte) (int, error) { return p.w.Write(b) }

// Close closes the server's stdin.
func (p *verifierPipe) Close() error { return p.w.Close() }

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

func (t Target) runHTTP(ctx context.Context, o *Options, db *store.DB, v *Verifier, name string) (*liveRun, error) {
	if err := upstream.Reachable(ctx, t.URL); err != nil {
		return nil, fmt.Errorf("the server at %s is %w: %w", t.URL.Redacted(), ErrUnreachable, err)
	}
	sink := &captureSink{Sink: db}
	rec := &recorder.HTTP{Upstream: t.URL, Sink: sink, Name: name, Logger: o.Logger}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen for the recording proxy: %w", err)
	}
	srv := &http.Server{Handler: rec}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	// The client side addresses the upstream's own path, so that the new
	// run records the URL the recording did.
	endpoint := url.URL{Scheme: "http", Host: ln.Addr().String(), Path: t.URL.Path, RawPath: t.URL.RawPath, RawQuery: t.URL.RawQuery}
	if endpoint.Path == "" {
		endpoint.Path = "/"
	}
	vr, verr := v.RunHTTP(ctx, endpoint.String(), nil, t.Header)
	srv.Close()
	<-served
	if err := rec.Close(context.WithoutCancel(ctx)); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotRecorded, err)
	}
	return &liveRun{sessionID: sink.first(), vr: vr, err: verr, exitCode: -1}, nil
}
