package recorder

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/mcpvcr/mcpvcr/clock"
	"github.com/mcpvcr/mcpvcr/store"
)

// ErrNoSink is returned by Run when the recorder has no Sink.
var ErrNoSink = errors.New("recorder has no sink")

// Stdio records an MCP conversation over stdio. It forwards the client's
// bytes to the server's stdin and the server's stdout to the client as
// they arrive, unchanged, and records each newline-delimited line as a
// frame. The server's stderr is passed to Stderr and recorded as a stream
// of its own.
//
// The zero value is not usable: Sink must be set. The exec.Cmd that runs
// the server belongs to the caller.
type Stdio struct {
	// Sink receives the session, its streams and frames. Required.
	Sink Sink
	// Session is the template for the recorded session: Name, Upstream
	// (the server command line, already redacted) and Labels are kept.
	Session store.Session
	// Stderr receives the server's stderr as it arrives. If nil, it is
	// recorded but not passed on.
	Stderr io.Writer
	// Clock times the frames. If nil, the real clock is used.
	Clock clock.Clock
	// Logger receives diagnostics. If nil, nothing is logged. It must not
	// write to the client's stdout.
	Logger *slog.Logger
	// Redactor hides secret JSON members in the stored frames (what is
	// forwarded is never changed). If nil, the defaults are redacted.
	Redactor *Redactor
}

// StdioResult is what a stdio recording produced.
type StdioResult struct {
	// SessionID is the recorded session's id.
	SessionID int64
	// Err is the first recording error (the sink failed, for example the
	// disk filled up). Forwarding went on regardless.
	Err error
	end func(ctx context.Context, exitCode int)
}

// End marks the session ended with the server's exit code (-1 if it is
// unknown). Call it once the server process has been waited for.
func (r *StdioResult) End(ctx context.Context, exitCode int) { r.end(ctx, exitCode) }

// Run forwards and records until the server's stdout and stderr reach EOF.
// When the client's reader ends, the server's stdin is closed, so the
// server sees the same EOF; Run keeps forwarding the server's output until
// it ends. serverStderr may be nil.
//
// Run returns once the server's output has ended. A goroutine copying from
// client may still be blocked in client.Read then; it ends on the next
// read, or when the caller closes client.
func (s *Stdio) Run(ctx context.Context, client io.ReadWriter, server io.ReadWriteCloser, serverStderr io.Reader) (*StdioResult, error) {
	if s.Sink == nil {
		return nil, ErrNoSink
	}
	tmpl := s.Session
	tmpl.Transport = store.Stdio
	red := s.Redactor
	if red == nil {
		red = &Redactor{}
	}
	red.label(&tmpl)
	rs, err := newSession(ctx, s.Sink, s.Clock, s.Logger, tmpl)
	if err != nil {
		return nil, fmt.Errorf("create session: %w", err)
	}
	rs.red = red
	in := &store.Stream{Kind: store.StdinStream}
	out := &store.Stream{Kind: store.StdoutStream}
	errs := &store.Stream{Kind: store.StderrStream}
	rs.openStream(ctx, in)
	rs.openStream(ctx, out)
	if serverStderr != nil {
		rs.openStream(ctx, errs)
	}

	var wg sync.WaitGroup
	// The client copier is not waited for: its Read may block forever on
	// a terminal. It holds no resources of ours once the server is gone.
	go func() {
		c := lineCopier{rs: rs, st: in, dir: store.ClientToServer, dst: server, src: client}
		err := c.copy(ctx)
		end := store.EndComplete
		if err != nil && !errors.Is(err, errServerGone) {
			end = store.EndClientAborted
		}
		if errors.Is(err, errServerGone) {
			end = store.EndServerClosed
		}
		rs.closeStream(ctx, in, end, nil)
		server.Close() // the server sees the client's EOF
	}()
	wg.Add(1)
	go func() {
		defer wg.Done()
		c := lineCopier{rs: rs, st: out, dir: store.ServerToClient, dst: client, src: server}
		err := c.copy(ctx)
		end := store.EndComplete
		if err != nil {
			end = store.EndClientAborted
		}
		rs.closeStream(ctx, out, end, nil)
	}()
	if serverStderr != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dst := s.Stderr
			if dst == nil {
				dst = io.Discard
			}
			c := lineCopier{rs: rs, st: errs, dir: store.ServerToClient, dst: dst, src: serverStderr}
			_ = c.copy(ctx)
			rs.closeStream(ctx, errs, store.EndComplete, nil)
		}()
	}
	wg.Wait()
	return &StdioResult{SessionID: rs.sess.ID, Err: rs.Err(), end: func(ctx context.Context, code int) {
		rs.end(ctx, code)
	}}, nil
}

// errServerGone reports that the server stopped reading its stdin.
var errServerGone = errors.New("server closed its stdin")

// lineCopier forwards src to dst chunk by chunk, as the bytes arrive, and
// records every complete line (with its newline) as one frame. A line is
// recorded before its last chunk is forwarded, so the recorded order
// respects cause and effect across the two directions. A last line
// without a newline is recorded at EOF.
type lineCopier struct {
	rs      *session
	st      *store.Stream
	dir     store.Direction
	dst     io.Writer
	src     io.Reader
	pending []byte
}

const chunkSize = 64 << 10

func (c *lineCopier) copy(ctx context.Context) error {
	buf := make([]byte, chunkSize)
	var werr error
	for {
		n, rerr := c.src.Read(buf)
		if n > 0 {
			// Record before forwarding: whatever the peer does in reply
			// to these bytes is then recorded after them.
			c.split(ctx, buf[:n])
			if werr == nil {
				if _, err := c.dst.Write(buf[:n]); err != nil {
					// The reader went away. Keep recording what the
					// writer side still says, but stop forwarding.
					werr = err
				}
			}
		}
		if rerr != nil {
			if len(c.pending) > 0 {
				c.emit(ctx, c.pending)
				c.pending = nil
			}
			if werr != nil {
				if c.dir == store.ClientToServer {
					return errServerGone
				}
				return werr
			}
			if errors.Is(rerr, io.EOF) {
				return nil
			}
			return rerr
		}
		if werr != nil && c.dir == store.ClientToServer {
			return errServerGone
		}
	}
}

// split cuts chunk into lines, recording each complete one.
func (c *lineCopier) split(ctx context.Context, chunk []byte) {
	for len(chunk) > 0 {
		i := bytes.IndexByte(chunk, '\n')
		if i < 0 {
			c.pending = append(c.pending, chunk...)
			return
		}
		var line []byte
		if len(c.pending) > 0 {
			line = append(c.pending, chunk[:i+1]...)
			c.pending = nil
		} else {
			line = append([]byte(nil), chunk[:i+1]...)
		}
		c.emit(ctx, line)
		chunk = chunk[i+1:]
	}
}

func (c *lineCopier) emit(ctx context.Context, line []byte) {
	c.rs.append(ctx, c.st, c.dir, &store.Frame{Raw: line})
}
