package recorder

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"

	"github.com/mcpvcr/mcpvcr/clock"
	"github.com/mcpvcr/mcpvcr/internal/framebuf"
	"github.com/mcpvcr/mcpvcr/store"
)

// ErrNoSink is returned by Run when the recorder has no Sink.
var ErrNoSink = errors.New("recorder has no sink")

// Stdio records an MCP conversation over stdio. It forwards the client's
// bytes to the server's stdin and the server's stdout to the client as
// they arrive, unchanged, and records each newline-delimited line as a
// frame. The server's stderr is passed to Stderr and recorded as a stream
// of its own. Forwarding starts at once: the session is created in the
// Sink in the background, and its frames wait in memory until it is, so a
// Sink that waits (for a cassette another process is writing) never holds
// up the conversation.
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
	// MaxFrame bounds the bytes recorded of one line: a longer one is
	// forwarded whole, as it arrives, and recorded cut to MaxFrame with
	// its true length (store.Frame.Oversize), so that memory stays
	// bounded. If zero, DefaultMaxFrame.
	MaxFrame int64
}

// DefaultMaxFrame is the MaxFrame of the recorders when none is given:
// well under SQLite's limit on one value (1e9 bytes).
const DefaultMaxFrame = 64 << 20

// maxFrame returns max, or DefaultMaxFrame if it is not positive.
func maxFrame(max int64) int {
	if max <= 0 {
		return DefaultMaxFrame
	}
	return int(min(max, 1<<40))
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
	// Forwarding starts at once: the session is created in the
	// background (its ID may wait for another recorder's write lock), and
	// its frames wait in memory until it is.
	rs := startSession(ctx, s.Sink, s.Clock, s.Logger, tmpl)
	rs.mu.Lock()
	rs.red = red
	rs.mu.Unlock()
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
		c := lineCopier{rs: rs, st: in, dir: store.ClientToServer, dst: server, src: client, max: maxFrame(s.MaxFrame)}
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
		c := lineCopier{rs: rs, st: out, dir: store.ServerToClient, dst: client, src: server, max: maxFrame(s.MaxFrame)}
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
			c := lineCopier{rs: rs, st: errs, dir: store.ServerToClient, dst: dst, src: serverStderr, max: maxFrame(s.MaxFrame)}
			_ = c.copy(ctx)
			rs.closeStream(ctx, errs, store.EndComplete, nil)
		}()
	}
	wg.Wait()
	rs.wait(ctx)
	rs.mu.Lock()
	id := rs.sess.ID
	rs.mu.Unlock()
	return &StdioResult{SessionID: id, Err: rs.Err(), end: func(ctx context.Context, code int) {
		rs.end(ctx, code)
	}}, nil
}

// errServerGone reports that the server stopped reading its stdin.
var errServerGone = errors.New("server closed its stdin")

// lineCopier forwards src to dst chunk by chunk, as the bytes arrive, and
// records every complete line (with its newline) as one frame. A line is
// recorded before its last chunk is forwarded, so the recorded order
// respects cause and effect across the two directions. A last line
// without a newline is recorded at EOF. Of a line longer than max, only
// the first max bytes are kept (and recorded with the line's length).
type lineCopier struct {
	rs      *session
	st      *store.Stream
	dir     store.Direction
	dst     io.Writer
	src     io.Reader
	max     int
	pending []byte // the kept bytes of the line under way
	size    int64  // the length so far of the line under way
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
			if c.size > 0 {
				c.emit(ctx, c.pending)
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
			c.keep(chunk)
			return
		}
		var line []byte
		if c.size > 0 || i+1 > c.max {
			c.keep(chunk[:i+1])
			line = c.pending
		} else {
			line = append([]byte(nil), chunk[:i+1]...)
			c.size = int64(len(line))
		}
		c.emit(ctx, line)
		chunk = chunk[i+1:]
	}
}

// keep adds p to the line under way, keeping no more than max bytes. A
// long line is gathered in one buffer of at most max bytes (framebuf), so
// that it costs one copy of its kept bytes.
func (c *lineCopier) keep(p []byte) {
	c.size += int64(len(p))
	c.pending, _ = framebuf.Append(c.pending, p, c.max, 0)
}

// emit records line, the kept bytes of the line under way, and starts
// the next line.
func (c *lineCopier) emit(ctx context.Context, line []byte) {
	f := &store.Frame{Raw: line}
	if c.size > int64(len(line)) {
		f.Oversize = c.size
	}
	c.pending, c.size = nil, 0
	c.rs.append(ctx, c.st, c.dir, f)
}
