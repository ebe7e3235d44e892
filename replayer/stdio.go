package replayer

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/mcpvcr/mcpvcr/clock"
	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/internal/termtext"
	"github.com/mcpvcr/mcpvcr/store"
)

// ErrNoRecordings is returned when a Server has nothing to replay.
var ErrNoRecordings = errors.New("no recorded sessions to replay")

// DefaultWait is the Server's Wait when none is set.
const DefaultWait = 10 * time.Second

// Server replays recorded sessions as the server they recorded. Each
// client that connects is matched against every recording until its
// frames single one out.
type Server struct {
	// Recordings are the sessions to replay. Required unless Source is
	// set.
	Recordings []*store.Recording
	// Source, if set and Recordings is empty, is where replay finds its
	// sessions: through the cassette's replay index under Match (built on
	// first use of each set of rules), loading only the candidates in
	// play, so that start and memory do not grow with the cassette. Over
	// HTTP, the sessions must be conversations only (see Server.Load).
	Source *Source
	// Pace scales the recorded gaps between frames: 0 sends everything as
	// soon as it is due, 1 keeps the recorded timing, 2 doubles it.
	Pace float64
	// Clock paces replay. If nil, the real clock is used.
	Clock clock.Clock
	// Logger receives diagnostics. If nil, nothing is logged.
	Logger *slog.Logger
	// Faults inject failures into HTTP replay.
	Faults Faults
	// Chaos, when On, draws faults from a seed at places in each
	// recorded session, injects them and judges what the client does
	// next (see WriteChaos). Streamable HTTP only, for now.
	Chaos Chaos
	// Strict also checks the client's side of the transport: the headers
	// the negotiated revision requires. Violations are answered with 400,
	// as a strict server would, and reported like unmatched frames.
	Strict bool
	// Match says how client frames are compared with recorded ones. The
	// zero Match is tolerant (see Match).
	Match Match
	// Wait is how long a client request may wait for an answer that the
	// recording gives only after client frames this client has not sent
	// (or never gives) before it is answered with a -32019 error naming
	// them. If zero, DefaultWait; if negative, it waits for good. A stall
	// is logged at once either way.
	Wait time.Duration
	// Settle is how long a client that waits for an answer may stay
	// silent, while candidate sessions still disagree on the answer,
	// before replay settles on the first candidate (in recorded order)
	// that has one. If zero, DefaultSettle.
	Settle time.Duration

	httpOnce sync.Once
	hs       *httpState
	poolOnce sync.Once
	pl       *pool // nil when no modern HTTP session is replayed
	recsOnce sync.Once
	recs     []*recording
	allOnce  sync.Once    // reads all, for HTTP replay from a Source
	all      []*recording // every session of Source, once needed
	repOnce  sync.Once    // reads repKeys
	repKeys  map[doorKey]bool
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
	// Discovered counts server/discover probes answered as a legacy
	// server would, because the recording holds none (stdio).
	Discovered int
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
	// Candidates counts the recorded sessions still in play at the end
	// (HTTP): more than one when the client's frames never told them
	// apart, and SessionID is only the first of them.
	Candidates int
}

// OK reports whether every client frame matched.
func (r *Report) OK() bool { return len(r.Mismatches) == 0 }

// WriteSummary writes a human summary of the report to out, control
// characters of the frames escaped for a terminal.
func (r *Report) WriteSummary(out io.Writer) {
	var w strings.Builder // escaped for a terminal as a whole
	r.writeLine(&w)
	writeMismatches(&w, r.Mismatches)
	io.WriteString(out, termtext.Text(w.String()))
}

// writeLine writes the report's one-line summary.
func (r *Report) writeLine(w io.Writer) {
	what := fmt.Sprintf("session %d", r.SessionID)
	if r.Candidates > 1 {
		what = fmt.Sprintf("session %d (the first of %d candidates its frames never told apart)", r.SessionID, r.Candidates)
	}
	if r.SessionID == 0 {
		what = "2026-07-28 exchanges"
	}
	fmt.Fprintf(w, "replayed %s: %s, %d matched, %d unmatched", what, termtext.Count(r.Received, "client frame"), r.Matched, len(r.Mismatches))
	if r.Unrecorded > 0 {
		fmt.Fprintf(w, ", %s to server requests the recording never got", termtext.Count(r.Unrecorded, "answer"))
	}
	if r.Synthesized > 0 {
		fmt.Fprintf(w, ", %s answered without a recording", termtext.Count(r.Synthesized, "ping"))
	}
	if r.Discovered > 0 {
		fmt.Fprintf(w, ", %d server/discover answered as a legacy server (none recorded)", r.Discovered)
	}
	if len(r.Unsent) > 0 {
		fmt.Fprintf(w, ", %s not sent", termtext.Count(len(r.Unsent), "recorded client frame"))
	}
	if r.Cut > 0 || r.Resumed > 0 {
		fmt.Fprintf(w, ", %s cut, %d resumed", termtext.Count(r.Cut, "stream"), r.Resumed)
	}
	fmt.Fprintln(w)
}

// writeMismatches writes each mismatch with its diff and hint.
func writeMismatches(w io.Writer, mms []*Mismatch) {
	for _, m := range mms {
		fmt.Fprintf(w, "  unmatched %s\n", m.Error())
		if m.Diff != "" {
			fmt.Fprintf(w, "    diff (-recorded +live):\n%s", indent(m.Diff, "      "))
		}
		if m.Hint != "" {
			fmt.Fprintf(w, "    %s\n", m.Hint)
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

// recordings returns Recordings with what replay derives from each,
// built once and shared by every client.
func (s *Server) recordings() []*recording {
	s.recsOnce.Do(func() { s.recs = wrap(s.Recordings) })
	return s.recs
}

func (s *Server) logger() *slog.Logger {
	if s.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Logger
}

// stdioCursor returns the cursor a stdio client starts with.
func (s *Server) stdioCursor(ctx context.Context) (*cursor, error) {
	if len(s.Recordings) > 0 {
		return newCursor(s.recordings(), s.Match, true), nil
	}
	if s.Source == nil {
		return nil, ErrNoRecordings
	}
	return newLazyCursor(ctx, s.Source, s.Match, true)
}

func (s *Server) wait() time.Duration {
	if s.Wait == 0 {
		return DefaultWait
	}
	return s.Wait
}

func (s *Server) settle() time.Duration {
	if s.Settle <= 0 {
		return DefaultSettle
	}
	return s.Settle
}

// ServeStdio is the recorded server on a stdio pair: it reads the client's
// lines from client and writes the recorded server's lines to it. To serve
// a separate reader and writer (stdin and stdout), join them:
// struct{ io.Reader; io.Writer }{os.Stdin, os.Stdout}.
//
// It returns when the client closes its side, when the recorded server
// ended the conversation first, when ctx is done or when s is closed. When
// it stops while the client neither writes nor reads, ServeStdio closes
// client if it is an io.Closer (or sets a past deadline if it has
// SetDeadline) to unblock; otherwise it returns anyway, and a read or
// write in progress is left to end when the caller closes client.
func (s *Server) ServeStdio(parent context.Context, client io.ReadWriter) (*Report, error) {
	ctx := parent
	cur, err := s.stdioCursor(ctx)
	if err != nil {
		return nil, err
	}
	rep := &Report{}
	w := &pacedWriter{dst: client, clock: s.clock(), pace: s.Pace, queue: make(chan []outFrame, 256), done: make(chan struct{}), chaos: s.newStdioChaos(cur)}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() { w.run(ctx) })
	lines := make(chan []byte)
	readErr := make(chan error, 1)
	wg.Go(func() { readLines(ctx, client, lines, readErr) })
	// Only a stop from outside (ctx, Close) unblocks the client: on an
	// ordinary end the writer still drains what is queued.
	stop := context.AfterFunc(parent, func() { unblock(client) })
	defer stop()
	finish := func(err error) (*Report, error) {
		if err != nil && !errors.Is(err, io.EOF) {
			s.logger().Warn("reading from the client failed", "err", err)
		}
		close(w.queue)
		stopped := parent.Err() != nil || s.closed()
		cancel()
		waited := make(chan struct{})
		go func() { wg.Wait(); close(waited) }()
		var werr error
		if stopped && !canUnblock(client) {
			// A read or write may block on the client for good: return
			// without waiting for it.
			select {
			case <-waited:
				werr = w.err
			default:
			}
		} else {
			<-waited
			werr = w.err
		}
		lead := cur.leader()
		rep.SessionID = lead.rec.Session.ID
		rep.Unsent = lead.unsent()
		return rep, werr
	}
	closed := s.http().done
	cur.start()
	w.send(ctx, cur.emit())

	stalled := map[string]time.Time{} // live request id -> when it stalled
	for {
		var settleC, waitC <-chan time.Time
		if cur.undecided() {
			settleC = s.clock().After(cur.settleAfter(s.settle()))
		}
		due, deadline := s.checkStalls(cur, stalled)
		if !deadline.IsZero() {
			waitC = s.clock().At(deadline)
		}
		if len(due) > 0 {
			s.answerStalls(ctx, cur, rep, w, due)
			continue
		}
		select {
		case line := <-lines:
			s.handle(ctx, cur, rep, w, line)
		case err := <-readErr:
			return finish(err)
		case <-settleC:
			if cur.undecided() && cur.settle() {
				s.logger().Info("candidate sessions disagreed on an awaited answer; replaying the first that can give it", "session", cur.leader().rec.Session.ID)
				w.send(ctx, cur.emit())
			}
		case <-waitC:
		case <-closed:
			unblock(client)
			return finish(nil)
		case <-ctx.Done():
			return finish(nil)
		}
		if lead := cur.leader(); lead.exhausted() && serverClosedFirst(lead.rec) {
			s.logger().Info("the recorded server ended the conversation here")
			return finish(nil)
		}
	}
}

// readLines sends each non-blank line the client writes to lines, and
// the error that ends reading to errc.
func readLines(ctx context.Context, client io.Reader, lines chan<- []byte, errc chan<- error) {
	r := bufio.NewReaderSize(client, 64<<10)
	for {
		line, err := r.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			select {
			case lines <- line:
			case <-ctx.Done():
				return
			}
		}
		if err != nil {
			errc <- err
			return
		}
	}
}

// canUnblock reports whether unblock can end a read or write on client.
func canUnblock(client io.ReadWriter) bool {
	switch client.(type) {
	case interface{ SetDeadline(time.Time) error }, io.Closer:
		return true
	}
	return false
}

// unblock ends a read or write in progress on client, if it can.
func unblock(client io.ReadWriter) {
	switch c := client.(type) {
	case interface{ SetDeadline(time.Time) error }:
		_ = c.SetDeadline(time.Unix(1, 0))
	case io.Closer:
		_ = c.Close()
	}
}

// checkStalls logs each outstanding request that newly stalled, and
// returns the ones whose wait is over and when the next one's ends.
func (s *Server) checkStalls(cur *cursor, stalled map[string]time.Time) (due []stall, next time.Time) {
	now := s.clock().Now()
	live := map[string]bool{}
	for _, st := range cur.stalls() {
		live[st.ID] = true
		since, seen := stalled[st.ID]
		if !seen {
			since = now
			stalled[st.ID] = now
			if !st.Expected {
				s.logger().Warn("a request waits: "+st.describe(), "wait", s.waitText())
			}
		}
		if s.wait() < 0 {
			continue
		}
		end := since.Add(s.wait())
		if !end.After(now) {
			due = append(due, st)
			continue
		}
		if next.IsZero() || end.Before(next) {
			next = end
		}
	}
	for id := range stalled {
		if !live[id] {
			delete(stalled, id)
		}
	}
	return due, next
}

func (s *Server) waitText() string {
	if s.wait() < 0 {
		return "forever (--wait 0)"
	}
	return s.wait().String() + ", then it is answered with -32019"
}

// answerStalls answers the stalled requests with -32019.
func (s *Server) answerStalls(ctx context.Context, cur *cursor, rep *Report, w *pacedWriter, due []stall) {
	for _, st := range due {
		if _, ok := cur.waive(st); ok {
			s.logger().Warn("the client did not cancel where the recorded one did; sending what the recording holds after that cancellation", "request", st.describe())
			w.send(ctx, cur.emit())
			continue
		}
		cur.answerSelf(st.ID)
		mm := stallMismatch(st)
		rep.Mismatches = append(rep.Mismatches, mm)
		s.logger().Warn("answered a stalled request with -32019", "request", mm.Error())
		w.send(ctx, []outFrame{{Data: append(noMatchAnswer(json.RawMessage(st.ID), mm), '\n')}})
	}
}

func (s *Server) handle(ctx context.Context, cur *cursor, rep *Report, w *pacedWriter, line []byte) {
	rep.Received++
	live := jsonrpc.Parse(line)
	if s.Strict && cur.cancelsInitialize(live) {
		mm := &Mismatch{Live: live.Raw, Reason: initializeCancelled}
		rep.Mismatches = append(rep.Mismatches, mm)
		s.logger().Warn("client frame breaks the protocol", "frame", mm.Error())
	}
	rc := cur.receive(live, nil)
	w.send(ctx, w.chaos.note(live, rc))
	if rc.unrecorded {
		rep.Unrecorded++
		return
	}
	if rc.mm == nil {
		rep.Matched++
		w.send(ctx, cur.emit())
		return
	}
	mm := rc.mm
	if live.Kind == jsonrpc.KindRequest && live.Method == "ping" {
		rep.Synthesized++
		w.send(ctx, []outFrame{{Data: append(fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"result":{}}`, live.ID), '\n')}})
		return
	}
	if live.Kind == jsonrpc.KindRequest && live.Method == "server/discover" && (mm.Closest == nil || mm.Closest.Method != "server/discover") {
		// A dual-era client's probe, and the recorded server is a legacy
		// one: answer as it would have, Method not found, and the client
		// falls back to initialize.
		rep.Discovered++
		s.logger().Info("answered server/discover as a legacy server would (-32601): the recording holds none, so the client falls back to initialize")
		w.send(ctx, []outFrame{{Data: append(fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":"Method not found"}}`, live.ID, LegacyDiscoverCode), '\n')}})
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
	err   error       // set by run before it returns
	chaos *stdioChaos // nil when chaos is off (chaosstdio.go)
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

func (w *pacedWriter) run(ctx context.Context) {
	for outs := range w.queue {
		for _, o := range outs {
			if (w.pace > 0 || o.Timed) && o.Gap > 0 {
				factor := w.pace
				if factor <= 0 {
					factor = 1
				}
				select {
				case <-w.clock.After(time.Duration(float64(o.Gap) * factor)):
				case <-ctx.Done():
					return
				}
			}
			if !w.chaos.before(ctx, o) {
				return
			}
			if w.err != nil {
				continue
			}
			if _, err := w.dst.Write(o.Data); err != nil {
				w.err = fmt.Errorf("write to client: %w", err)
			}
			w.chaos.after(o)
		}
	}
}
