package replayer

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/mcpvcr/mcpvcr/clock"
	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/store"
)

// ErrNoRecordings is returned when a Server has nothing to replay.
var ErrNoRecordings = errors.New("no recorded sessions to replay")

// Server replays recorded sessions as the server they recorded. Each
// client that connects is matched against every recording until its
// frames single one out.
type Server struct {
	// Recordings are the sessions to replay. Required. They must not
	// change once the Server has served a client.
	Recordings []*store.Recording
	// Pace scales the recorded gaps between frames: 0 sends everything as
	// soon as it is due, 1 keeps the recorded timing, 2 doubles it.
	Pace float64
	// Clock paces replay. If nil, the real clock is used.
	Clock clock.Clock
	// Logger receives diagnostics. If nil, nothing is logged.
	Logger *slog.Logger
	// Faults inject failures into HTTP replay.
	Faults Faults
	// Strict also checks the client's side of the transport: the headers
	// the negotiated revision requires. Violations are answered with 400,
	// as a strict server would, and reported like unmatched frames.
	Strict bool

	httpOnce sync.Once
	hs       *httpState
	recsOnce sync.Once
	recs     []*recording
}

// recordings returns Recordings with what replay derives from each,
// built once and shared by every client.
func (s *Server) recordings() []*recording {
	s.recsOnce.Do(func() {
		for _, r := range s.Recordings {
			s.recs = append(s.recs, &recording{Recording: r})
		}
	})
	return s.recs
}

// Report is what one replay saw.
type Report struct {
	// SessionID is the recorded session that was replayed (the one the
	// client's frames singled out, or the first candidate).
	SessionID int64
	// Received counts the client's frames; Matched those that matched.
	Received, Matched int
	// Synthesized counts pings answered without a recording.
	Synthesized int
	// Unrecorded counts client answers to server requests whose recorded
	// answer never came (the recorded client left first); they are taken
	// without complaint.
	Unrecorded int
	// Cut counts the SSE streams a fault option cut; Resumed the GETs
	// with Last-Event-ID that were answered.
	Cut, Resumed int
	// Mismatches are the client frames that matched nothing.
	Mismatches []*Mismatch
	// Unsent are recorded client frames the client never sent.
	Unsent []*store.Frame
}

// OK reports whether every client frame matched.
func (r *Report) OK() bool { return len(r.Mismatches) == 0 }

// WriteSummary writes a human summary of the report to w.
func (r *Report) WriteSummary(w io.Writer) {
	fmt.Fprintf(w, "replayed session %d: %d client frames, %d matched, %d unmatched", r.SessionID, r.Received, r.Matched, len(r.Mismatches))
	if r.Unrecorded > 0 {
		fmt.Fprintf(w, ", %d answers to server requests the recording never got", r.Unrecorded)
	}
	if r.Synthesized > 0 {
		fmt.Fprintf(w, ", %d pings answered without a recording", r.Synthesized)
	}
	if len(r.Unsent) > 0 {
		fmt.Fprintf(w, ", %d recorded client frames not sent", len(r.Unsent))
	}
	if r.Cut > 0 || r.Resumed > 0 {
		fmt.Fprintf(w, ", %d streams cut, %d resumed", r.Cut, r.Resumed)
	}
	fmt.Fprintln(w)
	for _, m := range r.Mismatches {
		fmt.Fprintf(w, "  unmatched %s\n", m.Error())
		if m.Diff != "" {
			fmt.Fprintf(w, "    diff (-recorded +live):\n%s", indent(m.Diff, "      "))
		}
	}
}

func indent(s, pre string) string {
	var b bytes.Buffer
	for _, line := range bytes.SplitAfter([]byte(s), []byte("\n")) {
		if len(line) > 0 {
			b.WriteString(pre)
			b.Write(line)
		}
	}
	if b.Len() > 0 && b.Bytes()[b.Len()-1] != '\n' {
		b.WriteByte('\n')
	}
	return b.String()
}

func (s *Server) clock() clock.Clock {
	if s.Clock == nil {
		return clock.Real{}
	}
	return s.Clock
}

func (s *Server) logger() *slog.Logger {
	if s.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Logger
}

// ServeStdio is the recorded server on a stdio pair: it reads the client's
// lines from client and writes the recorded server's lines to it. To serve
// a separate reader and writer (stdin and stdout), join them:
// struct{ io.Reader; io.Writer }{os.Stdin, os.Stdout}.
//
// It returns when the client closes its side, when the recorded server
// ended the conversation first, when ctx is done or when s is closed, even
// if the client has stopped reading or writing: a Read or Write on client
// that blocks then is left to end when the caller closes client. The
// Report covers what was received and sent until then.
func (s *Server) ServeStdio(ctx context.Context, client io.ReadWriter) (*Report, error) {
	if len(s.Recordings) == 0 {
		return nil, ErrNoRecordings
	}
	cur := newCursor(s.recordings())
	rep := &Report{}
	w := &pacedWriter{dst: client, clock: s.clock(), pace: s.Pace, queue: make(chan []outFrame, 256), done: make(chan struct{})}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	closed := s.http().done
	go w.run(ctx)
	finish := func() (*Report, error) {
		close(w.queue)
		select {
		case <-w.done:
		case <-ctx.Done():
			// The client stopped reading: a write may block until the
			// caller closes client. What was written is reported.
		}
		lead := cur.leader()
		rep.SessionID = lead.rec.Session.ID
		rep.Unsent = lead.unsent()
		return rep, w.error()
	}
	w.send(ctx, cur.start())

	lines := make(chan []byte)
	rerr := make(chan error, 1)
	lr := &lineReader{r: bufio.NewReaderSize(client, 64<<10), lines: lines, errc: rerr}
	go lr.run(ctx)
	for {
		select {
		case line := <-lines:
			s.handle(ctx, cur, rep, w, line)
			if lead := cur.leader(); lead.exhausted() && serverClosedFirst(lead.rec) {
				s.logger().Info("the recorded server ended the conversation here")
				return finish()
			}
		case err := <-rerr:
			if !errors.Is(err, io.EOF) {
				s.logger().Warn("reading from the client failed", "err", err)
			}
			return finish()
		case <-closed:
			cancel()
			return finish()
		case <-ctx.Done():
			return finish()
		}
	}
}

// lineReader reads the client's non-blank lines and hands them over one
// at a time; its last word is the error that ended the reading. It stops
// early when ctx is done, unless it is blocked in a Read, which ends when
// the client's reader is closed.
type lineReader struct {
	r     *bufio.Reader
	lines chan<- []byte
	errc  chan<- error
}

func (lr *lineReader) run(ctx context.Context) {
	for {
		line, err := lr.r.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			select {
			case lr.lines <- line:
			case <-ctx.Done():
				return
			}
		}
		if err != nil {
			lr.errc <- err
			return
		}
	}
}

func (s *Server) handle(ctx context.Context, cur *cursor, rep *Report, w *pacedWriter, line []byte) {
	rep.Received++
	live := jsonrpc.Parse(line)
	outs, matched, mm := cur.receive(live)
	if mm == nil && matched == nil {
		rep.Unrecorded++
		return
	}
	if mm == nil {
		rep.Matched++
		w.send(ctx, outs)
		return
	}
	if live.Kind == jsonrpc.KindRequest && live.Method == "ping" {
		rep.Synthesized++
		w.send(ctx, []outFrame{{Data: append(fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"result":{}}`, live.ID), '\n')}})
		return
	}
	rep.Mismatches = append(rep.Mismatches, mm)
	s.logger().Warn("unmatched client frame", "frame", mm.Error())
	if reply := noMatchReply(live, mm); reply != nil {
		w.send(ctx, []outFrame{{Data: append(reply, '\n')}})
	}
}

// serverClosedFirst reports whether the recorded server closed its stdout
// before the client closed its stdin: the server exited mid-session.
func serverClosedFirst(rec *recording) bool {
	var in, out *store.Stream
	for i := range rec.Streams {
		switch rec.Streams[i].Kind {
		case store.StdinStream:
			in = &rec.Streams[i]
		case store.StdoutStream:
			out = &rec.Streams[i]
		}
	}
	if in == nil || out == nil || out.End == store.EndOpen {
		return false
	}
	return in.End == store.EndOpen || in.End == store.EndServerClosed || out.Closed < in.Closed
}

// pacedWriter writes released frames to the client in order, waiting the
// recorded gaps when pacing.
type pacedWriter struct {
	dst   io.Writer
	clock clock.Clock
	pace  float64
	queue chan []outFrame
	done  chan struct{}
	err   error // set by run before it returns
}

func (w *pacedWriter) send(ctx context.Context, outs []outFrame) {
	if len(outs) == 0 {
		return
	}
	select {
	case w.queue <- outs:
	case <-ctx.Done():
	}
}

// error returns the first write error, once run has returned.
func (w *pacedWriter) error() error {
	select {
	case <-w.done:
		return w.err
	default:
		return nil
	}
}

func (w *pacedWriter) run(ctx context.Context) {
	defer close(w.done)
	for outs := range w.queue {
		for _, o := range outs {
			if w.pace > 0 && o.Gap > 0 {
				select {
				case <-w.clock.After(time.Duration(float64(o.Gap) * w.pace)):
				case <-ctx.Done():
					return
				}
			}
			if w.err != nil {
				continue
			}
			if _, err := w.dst.Write(o.Data); err != nil {
				w.err = fmt.Errorf("write to client: %w", err)
			}
		}
	}
}
