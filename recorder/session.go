package recorder

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/mcpvcr/mcpvcr/clock"
	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/internal/mcpwire"
	"github.com/mcpvcr/mcpvcr/store"
)

// session is the recording state of one store.Session: it hands out
// sequence numbers and offsets in one total order, and learns the session's
// revision and peers from the frames that pass.
type session struct {
	sink Sink
	// red redacts JSON members of frames before they are stored; nil
	// stores frames as they are.
	red    *Redactor
	clock  clock.Clock
	logger *slog.Logger
	start  time.Time

	mu sync.Mutex // guards seq, sess, last, pending, created, failed, err, and the order of Append calls
	// seq is the last sequence number handed out: a frame gets its own
	// when it is handed to the sink, in the order of pending.
	seq  int64
	sess store.Session
	// last is the offset of the session's last traffic: its last frame,
	// or the last stream opened or ended but by the proxy's shutdown.
	last time.Duration
	// pending holds, in order, the writes of the session not yet handed
	// to the sink: frames whose place and offset are taken (reserveChunk),
	// HTTP streams and requests placed before they are forwarded
	// (placeExchange), and, until the session is created, everything
	// else too (streams opened and closed). Every other write of the
	// session hands them over first, so that the sink gets frames in seq
	// order and a crash can lose only a tail.
	pending []pendingWrite
	// created is set once the sink has created the session (or failed
	// to). Until then, writes wait in pending: forwarding never waits for
	// the sink, which may have to wait for another process's write lock
	// to give the session its ID (see startSession).
	created bool
	// ready is closed when created is set.
	ready chan struct{}
	// initID is the id token of the client's initialize request.
	initID string
	failed bool
	err    error
}

func newSession(ctx context.Context, sink Sink, clk clock.Clock, logger *slog.Logger, s store.Session) (*session, error) {
	rs := initSession(sink, clk, logger, &s)
	if err := sink.CreateSession(ctx, &s); err != nil {
		return nil, err
	}
	rs.sess, rs.created = s, true
	close(rs.ready)
	return rs, nil
}

// startSession is newSession without waiting for the sink: the session
// is created in the background, and its writes wait in pending until it
// is. Call wait (end does) before reading the session's ID.
func startSession(ctx context.Context, sink Sink, clk clock.Clock, logger *slog.Logger, s store.Session) *session {
	rs := initSession(sink, clk, logger, &s)
	rs.sess = s
	go func() {
		err := sink.CreateSession(ctx, &s)
		rs.mu.Lock()
		defer rs.mu.Unlock()
		defer close(rs.ready)
		rs.created = true
		if err != nil {
			rs.fail(fmt.Errorf("create session: %w", err))
			clear(rs.pending)
			rs.pending = rs.pending[:0]
			return
		}
		rs.sess.ID = s.ID
		rs.flushLocked(ctx)
	}()
	return rs
}

func initSession(sink Sink, clk clock.Clock, logger *slog.Logger, s *store.Session) *session {
	if clk == nil {
		clk = clock.Real{}
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	rs := &session{sink: sink, clock: clk, logger: logger, start: clk.Now(), ready: make(chan struct{})}
	if s.StartedAt.IsZero() {
		s.StartedAt = rs.start
	}
	if s.ExitCode == 0 {
		s.ExitCode = -1
	}
	return rs
}

// wait waits until the session is created in the sink (or that failed),
// or ctx is done.
func (rs *session) wait(ctx context.Context) {
	select {
	case <-rs.ready:
	case <-ctx.Done():
	}
}

// offset returns the time since the session started.
func (rs *session) offset() time.Duration { return rs.clock.Now().Sub(rs.start) }

// fail remembers the first recording error and logs it loudly once.
// Forwarding goes on: a recording failure never breaks the conversation.
// The caller holds rs.mu.
func (rs *session) fail(err error) {
	if err == nil || rs.failed {
		return
	}
	rs.failed, rs.err = true, err
	rs.logger.Error("recording stopped; traffic is still forwarded but no longer saved", "session", rs.sess.ID, "err", err)
}

// Err returns the first recording error, if any.
func (rs *session) Err() error {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.err
}

// pendingWrite is a write of the session not yet handed to the sink: a
// reserved frame on stream st, or st opened or closed.
type pendingWrite struct {
	st      *store.Stream
	f       *store.Frame
	m       *jsonrpc.Message // f's parsed view, if the caller derived f
	open    bool
	closing bool
	// chunk holds bytes forwarded before they were split into frames
	// (reserveChunk); at reads them.
	chunk *chunk
	dir   store.Direction
	at    time.Duration
}

// chunk is bytes of one stream forwarded before anything was done to
// record them. split, called once by the flush that reaches the chunk in
// the session's order, returns the frames they complete, in order; the
// flush numbers and records them there, so their order in the session is
// the order seen. done, called after, hands them back to the stream's
// owner, who learns from them once it has flushed.
type chunk struct {
	data  []byte
	split func(data []byte) []*store.Frame
	done  func(fs []*store.Frame)
}

// reserveChunk gives the frames that c's bytes complete, not yet split,
// their place in the session's order, on st in direction dir, read now.
// It is reserve for bytes that were forwarded before they were looked
// at: the next flush splits them (see chunk).
func (rs *session) reserveChunk(st *store.Stream, dir store.Direction, c *chunk) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	at := rs.offset()
	rs.last = at
	rs.pending = append(rs.pending, pendingWrite{st: st, chunk: c, dir: dir, at: at})
}

// flush records the reserved frames.
func (rs *session) flush(ctx context.Context) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.flushLocked(ctx)
}

// flushLocked hands the pending writes to the sink, in order, once the
// session is created. The caller holds rs.mu.
func (rs *session) flushLocked(ctx context.Context) {
	if !rs.created {
		return
	}
	for i, p := range rs.pending {
		switch {
		case p.open:
			p.st.SessionID = rs.sess.ID
			if !rs.failed {
				rs.fail(rs.sink.OpenStream(ctx, p.st))
			}
		case p.closing:
			if !rs.failed && p.st.ID != 0 {
				rs.fail(rs.sink.CloseStream(ctx, p.st))
			}
		case p.chunk != nil:
			fs := p.chunk.split(p.chunk.data)
			for _, f := range fs {
				rs.seq++
				f.Seq, f.Direction, f.Offset = rs.seq, p.dir, p.at
				f.SessionID, f.StreamID = rs.sess.ID, p.st.ID
				if f.Events > 0 {
					// A run of events, which the sink derives on read
					// (RunSink): nothing in them to learn or redact.
					rs.seq += int64(f.Events) - 1
					if !rs.failed {
						rs.fail(rs.sink.Append(ctx, f))
					}
					continue
				}
				rs.record(ctx, f, f.DeriveMessage(p.st.Kind))
			}
			p.chunk.done(fs)
			if cap(p.chunk.data) == copyBuffers.size {
				copyBuffers.Put(p.chunk.data[:copyBuffers.size])
			}
		default:
			rs.seq++
			p.f.Seq, p.f.SessionID, p.f.StreamID = rs.seq, rs.sess.ID, p.st.ID
			if p.m != nil {
				rs.record(ctx, p.f, *p.m)
			} else {
				rs.record(ctx, p.f, p.f.DeriveMessage(p.st.Kind))
			}
		}
		rs.pending[i] = pendingWrite{}
	}
	rs.pending = rs.pending[:0]
}

// openStream records a new stream in the session.
func (rs *session) openStream(ctx context.Context, st *store.Stream) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.placeOpen(st)
	rs.flushLocked(ctx)
}

// placeExchange gives a new stream's opening, and its first client frame
// f (if not nil) with its parsed view m, their places in the session's
// order, now, without handing them to the sink: the session's next flush
// does (see HTTP.begin).
func (rs *session) placeExchange(st *store.Stream, f *store.Frame, m jsonrpc.Message) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.placeOpen(st)
	if f != nil {
		f.Direction, f.Offset = store.ClientToServer, st.Opened
		rs.pending = append(rs.pending, pendingWrite{st: st, f: f, m: &m})
	}
}

// placeOpen puts st's opening in pending. The caller holds rs.mu.
func (rs *session) placeOpen(st *store.Stream) {
	st.SessionID = rs.sess.ID
	st.Opened = rs.offset()
	rs.last = st.Opened
	rs.pending = append(rs.pending, pendingWrite{st: st, open: true})
}

// closeStream records how a stream ended.
func (rs *session) closeStream(ctx context.Context, st *store.Stream, end store.End, cause error) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	st.Closed = rs.offset()
	st.End = end
	if end != store.EndProxyShutdown {
		rs.last = st.Closed
	}
	if cause != nil {
		st.Err = cause.Error()
	}
	rs.pending = append(rs.pending, pendingWrite{st: st, closing: true})
	rs.flushLocked(ctx)
}

// append records one frame on st. f.Raw (and f.Data, the SSE fields and
// Comment, when set) come from the caller; the rest is filled here.
func (rs *session) append(ctx context.Context, st *store.Stream, dir store.Direction, f *store.Frame) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	f.Direction, f.Offset = dir, rs.offset()
	rs.last = f.Offset
	rs.pending = append(rs.pending, pendingWrite{st: st, f: f})
	rs.flushLocked(ctx)
}

// record learns from f, whose parsed view is m, and hands it to the sink.
// The caller holds rs.mu.
func (rs *session) record(ctx context.Context, f *store.Frame, m jsonrpc.Message) {
	if rs.red != nil {
		rs.red.frame(f)
	}
	if rs.learn(f.Direction, f, m) && !rs.failed {
		rs.fail(rs.sink.UpdateSession(ctx, &rs.sess))
	}
	if rs.failed {
		return
	}
	rs.fail(rs.sink.Append(ctx, f))
}

// learn updates the session's revision, era and peer info from f, whose
// parsed view is m, and reports whether anything changed. The caller holds
// rs.mu.
func (rs *session) learn(dir store.Direction, f *store.Frame, m jsonrpc.Message) bool {
	if f.Comment || f.Kind == 0 {
		return false
	}
	changed := false
	set := func(p *string, v string) {
		if v != "" && *p != v {
			*p, changed = v, true
		}
	}
	setEra := func(e store.Era) {
		if rs.sess.Era != e {
			rs.sess.Era, changed = e, true
		}
	}
	setRaw := func(p *json.RawMessage, v json.RawMessage) {
		if len(v) > 0 && string(*p) != string(v) {
			*p, changed = append(json.RawMessage(nil), v...), true
		}
	}
	switch {
	case dir == store.ClientToServer && f.Method == "initialize":
		rs.initID = f.ID
		var p struct {
			ProtocolVersion string          `json:"protocolVersion"`
			ClientInfo      json.RawMessage `json:"clientInfo"`
		}
		if json.Unmarshal(m.Params, &p) == nil {
			setRaw(&rs.sess.ClientInfo, p.ClientInfo)
			if rs.sess.Era == store.EraModern {
				setEra(store.EraDual)
			} else {
				setEra(store.EraLegacy)
			}
			if rs.sess.Revision == "" {
				set(&rs.sess.Revision, p.ProtocolVersion)
			}
		}
	case dir == store.ServerToClient && f.ID != "" && f.ID == rs.initID && f.Kind.IsResponse():
		var r struct {
			ProtocolVersion string          `json:"protocolVersion"`
			ServerInfo      json.RawMessage `json:"serverInfo"`
		}
		if json.Unmarshal(m.Result, &r) == nil {
			set(&rs.sess.Revision, r.ProtocolVersion)
			setRaw(&rs.sess.ServerInfo, r.ServerInfo)
		}
	case dir == store.ClientToServer && f.Kind == store.KindRequest:
		if meta := mcpwire.RequestMeta(m.Params); meta.ProtocolVersion != "" {
			if rs.sess.Era == "" {
				setEra(store.EraModern)
			} else if rs.sess.Era == store.EraLegacy {
				setEra(store.EraDual)
			}
			if rs.sess.Era == store.EraModern {
				set(&rs.sess.Revision, meta.ProtocolVersion)
			}
			if rs.sess.ClientInfo == nil {
				setRaw(&rs.sess.ClientInfo, meta.ClientInfo)
			}
		}
	case dir == store.ServerToClient && f.Kind.IsResponse() && rs.sess.Era != store.EraLegacy:
		if rs.sess.ServerInfo == nil {
			if meta := mcpwire.ResultMeta(m.Result); meta.ServerInfo != nil {
				setRaw(&rs.sess.ServerInfo, meta.ServerInfo)
			}
		}
	}
	return changed
}

// end closes the session record, once the session is created.
func (rs *session) end(ctx context.Context, exitCode int) { rs.endAt(ctx, exitCode, false) }

// endAtLast closes the session record as ended at its last traffic: an
// HTTP session lasts until its last exchange, not until the proxy that
// recorded it stops.
func (rs *session) endAtLast(ctx context.Context, exitCode int) { rs.endAt(ctx, exitCode, true) }

func (rs *session) endAt(ctx context.Context, exitCode int, atLast bool) {
	rs.wait(ctx)
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.flushLocked(ctx)
	rs.sess.EndedAt = rs.clock.Now()
	if atLast {
		rs.sess.EndedAt = rs.start.Add(rs.last)
	}
	rs.sess.ExitCode = exitCode
	if rs.failed {
		return
	}
	rs.fail(rs.sink.UpdateSession(ctx, &rs.sess))
}
