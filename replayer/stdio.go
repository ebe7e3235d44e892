package replayer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/mcpvcr/mcpvcr/clock"
	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/internal/replayreport"
	"github.com/mcpvcr/mcpvcr/internal/script"
	"github.com/mcpvcr/mcpvcr/store"
)

// stdioCursor returns the cursor a stdio client starts with.
func (s *Server) stdioCursor(ctx context.Context) (*cursor, error) {
	if len(s.Recordings) > 0 {
		c := newCursor(s.recordings(), s.Match, true)
		c.now = s.clock().Now
		return c, nil
	}
	if s.Source == nil {
		return nil, ErrNoRecordings
	}
	c, err := newLazyCursor(ctx, s.Source, s.Match, true)
	if c != nil {
		c.now = s.clock().Now
	}
	return c, err
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
	w := &pacedWriter{dst: client, clock: s.clock(), pace: s.Pace, queue: make(chan []outFrame, 256), done: make(chan struct{}), trace: s.Trace}
	if s.Hook != nil {
		ls := &liveSession{srv: s, cur: cur} // what the Hook sees of this session
		ls.pub.ls = ls
		w.srv, w.sess = s, ls.session()
		s.act(ctx, Point{Where: AtStart, Session: w.sess})
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	written := make(chan struct{}) // the writer is done
	wg.Go(func() { defer close(written); w.run(ctx) })
	lines := make(chan []byte)
	readErr := make(chan error, 1)
	wg.Go(func() { jsonrpc.ReadLines(ctx, client, lines, readErr) })
	// Only a stop from outside (ctx, Close) unblocks the client: on an
	// ordinary end the writer still drains what is queued.
	stop := context.AfterFunc(parent, func() { unblock(client) })
	defer stop()
	exited := false // the Hook ended the session, as a server that exits
	finish := func(err error) (*Report, error) {
		if err != nil && !errors.Is(err, io.EOF) {
			s.logger().Warn("reading from the client failed", "err", err)
		}
		close(w.queue)
		if exited {
			// What the server wrote before it exited reaches the
			// client, then the end.
			<-written
			unblock(client)
		}
		stopped := exited || parent.Err() != nil || s.closed()
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
		orderC := s.orderTimer(cur)
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
			if s.handle(ctx, cur, rep, w, line) {
				s.logger().Info("the session ends here, as a server that exits would (a fault of the Hook)")
				exited = true
				return finish(nil)
			}
		case err := <-readErr:
			// The client sent all it will: nothing it sends can come
			// before what is held in recorded order.
			if cur.holding() {
				cur.giveUpOrder()
				w.send(ctx, cur.emit())
			}
			return finish(err)
		case <-settleC:
			if cur.undecided() && cur.settle() {
				s.logger().Info("candidate sessions disagreed on an awaited answer; replaying the first that can give it", "session", cur.leader().rec.Session.ID)
				w.send(ctx, cur.emit())
			}
		case <-waitC:
		case <-orderC:
			// The client is silent while frames are held in recorded
			// order: it may be waiting for them (order.go).
			cur.giveUpOrder()
			w.send(ctx, cur.emit())
		case <-closed:
			unblock(client)
			return finish(nil)
		case <-ctx.Done():
			return finish(nil)
		}
		if lead := cur.leader(); lead.exhausted() && script.ServerClosedFirst(lead.rec.Recording) {
			s.logger().Info("the recorded server ended the conversation here")
			return finish(nil)
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
				s.logger().Warn("a request waits: "+st.Describe(), "wait", s.waitText())
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

// answerStalls answers the stalled requests with -32019.
func (s *Server) answerStalls(ctx context.Context, cur *cursor, rep *Report, w *pacedWriter, due []stall) {
	for _, st := range due {
		if _, ok := cur.waive(st); ok {
			s.logger().Warn("the client did not cancel where the recorded one did; sending what the recording holds after that cancellation", "request", st.Describe())
			w.send(ctx, cur.emit())
			continue
		}
		cur.answerSelf(st.ID)
		mm := st.Mismatch()
		rep.Mismatches = append(rep.Mismatches, mm)
		s.logger().Warn("answered a stalled request with -32019", "request", mm.Error())
		w.send(ctx, []outFrame{{Data: append(replayreport.NoMatchAnswer(json.RawMessage(st.ID), mm), '\n')}})
	}
}

// handle answers one line of the client; exit reports that the Hook ends
// the session there (AtLine's Stop).
func (s *Server) handle(ctx context.Context, cur *cursor, rep *Report, w *pacedWriter, line []byte) (exit bool) {
	rep.Received++
	if w.sess != nil {
		a := s.act(ctx, Point{Where: AtReceive, Session: w.sess, Body: line, Recording: cur.leader().rec.Recording})
		if a.Skip {
			return // the Hook's own: an answer to a request it sent
		}
		if a.Send != nil {
			w.send(ctx, []outFrame{{Data: jsonrpc.Line(a.Send)}})
			return // the Hook's to answer
		}
		if a.Body != nil {
			line = a.Body
		}
	}
	live := jsonrpc.Parse(line)
	if s.Strict && cur.cancelsInitialize(live) {
		mm := &Mismatch{Live: live.Raw, Reason: initializeCancelled}
		rep.Mismatches = append(rep.Mismatches, mm)
		s.logger().Warn("client frame breaks the protocol", "frame", mm.Error())
	}
	if o, ok := cur.taskPoll(live, s.clock().Now(), s.Pace); ok {
		rep.Matched++ // a poll of a task: answered by its state (tasks.go)
		w.send(ctx, []outFrame{o})
		return
	}
	rc := cur.receive(live, nil)
	if w.sess != nil {
		var matched *store.Frame
		if live.Kind == jsonrpc.KindRequest {
			matched = rc.matched[cur.leader()]
		}
		a := s.act(ctx, Point{Where: AtLine, Session: w.sess, Body: live.Raw, Recording: cur.leader().rec.Recording, Matched: matched})
		if a.Stop {
			return true
		}
		if a.Send != nil {
			w.send(ctx, []outFrame{{Data: append(a.Send, '\n')}})
		}
	}
	if rc.unrecorded {
		rep.Unrecorded++
		return
	}
	if rc.mm == nil {
		if rc.differs != nil {
			rep.Mismatches = append(rep.Mismatches, rc.differs)
			s.logger().Warn("client answer differs from the recorded one", "frame", rc.differs.Error())
		} else {
			rep.Matched++
		}
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
	if reply := replayreport.NoMatchReply(live, mm); reply != nil {
		w.send(ctx, []outFrame{{Data: append(reply, '\n')}})
	}
	return false
}

// pacedWriter writes released frames to the client in order, waiting the
// recorded gaps when pacing.
type pacedWriter struct {
	dst   io.Writer
	clock clock.Clock
	pace  float64
	queue chan []outFrame
	done  chan struct{}
	mu    sync.Mutex // guards err and writes to dst
	err   error      // set by run before it returns
	// srv and sess call the Hook around each recorded frame; sess is
	// nil when srv has no Hook.
	srv  *Server
	sess *Session
	// trace is Server.Trace.
	trace io.Writer
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
	var timers sync.WaitGroup
	defer timers.Wait()
	for outs := range w.queue {
		for _, o := range outs {
			if w.pace > 0 && !o.Born.IsZero() && !o.Timed {
				// A task's status: at its time, holding nothing back.
				timers.Go(func() { w.writeAt(ctx, o) })
				continue
			}
			factor := w.pace
			if factor <= 0 {
				factor = 1
			}
			if (w.pace > 0 || o.Timed) && o.Gap > 0 {
				select {
				case <-w.clock.After(time.Duration(float64(o.Gap) * factor)):
				case <-ctx.Done():
					return
				}
			}
			if o.Timed && !o.Born.IsZero() {
				// A poll of the client's task: not before its time since the task's creation.
				select {
				case <-w.clock.At(o.Born.Add(time.Duration(float64(o.Since) * factor))):
				case <-ctx.Done():
					return
				}
			}
			if w.sess != nil && o.Frame != nil {
				a := w.srv.act(ctx, Point{Where: AtBefore, Session: w.sess, Recording: w.sess.Recording(), Frame: o.Frame, Body: o.Data})
				switch {
				case a.Stop:
					return
				case a.Skip:
					continue
				case a.Replace != nil:
					o.Data = jsonrpc.Line(a.Replace)
				}
			}
			w.write(o)
			if w.sess != nil && o.Frame != nil {
				w.srv.act(ctx, Point{Where: AtAfter, Session: w.sess, Recording: w.sess.Recording(), Frame: o.Frame})
			}
		}
	}
}

// write writes o to the client unless a write failed before.
func (w *pacedWriter) write(o outFrame) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return
	}
	if _, err := w.dst.Write(o.Data); err != nil {
		w.err = fmt.Errorf("write to client: %w", err)
		return
	}
	if w.trace != nil && o.Frame != nil {
		fmt.Fprintln(w.trace, traceLine(o))
	}
}

// traceLine is Server.Trace's line for o, written: "sent #9 result
// tools/call, released by #6 notifications/cancelled".
func traceLine(o outFrame) string {
	what := func(f *store.Frame) string {
		return strings.TrimSpace(fmt.Sprintf("#%d %s %s", f.Seq, f.Kind, f.Method))
	}
	by := "released at the start or by a wait"
	if o.By != nil {
		by = "released by " + what(o.By)
	}
	return "mcpvcr replay: sent " + what(o.Frame) + ", " + by
}

// writeAt writes o, a task's status notification, at its recorded time
// since the task's creation (scaled by the pace), unless ctx ends first.
func (w *pacedWriter) writeAt(ctx context.Context, o outFrame) {
	select {
	case <-w.clock.At(o.Born.Add(time.Duration(float64(o.Since) * w.pace))):
	case <-ctx.Done():
		return
	}
	w.write(o)
}
