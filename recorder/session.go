package recorder

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	"github.com/mcpvcr/mcpvcr/clock"
	"github.com/mcpvcr/mcpvcr/internal/derive"
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

	mu   sync.Mutex // guards seq, sess, pending, failed, err, and the order of Append calls
	seq  int64
	sess store.Session
	// pending holds the frames whose seq and offset are taken (reserve)
	// and that are not yet handed to the sink, in seq order. Every other
	// write of the session hands them over first, so that the sink gets
	// frames in seq order and a crash can lose only a tail.
	pending []pendingFrame
	// initID is the id token of the client's initialize request.
	initID string
	failed bool
	err    error
}

func newSession(ctx context.Context, sink Sink, clk clock.Clock, logger *slog.Logger, s store.Session) (*session, error) {
	if clk == nil {
		clk = clock.Real{}
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	rs := &session{sink: sink, clock: clk, logger: logger, start: clk.Now()}
	if s.StartedAt.IsZero() {
		s.StartedAt = rs.start
	}
	if s.ExitCode == 0 {
		s.ExitCode = -1
	}
	if err := sink.CreateSession(ctx, &s); err != nil {
		return nil, err
	}
	rs.sess = s
	return rs, nil
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

// pendingFrame is a reserved frame and the stream it is on.
type pendingFrame struct {
	st *store.Stream
	f  *store.Frame
}

// reserve gives f its place in the session's order, on st in direction
// dir, now, and leaves the rest of recording it (parsing it, learning
// from it, handing it to the sink) to the next flush or write of the
// session. The caller forwards f's bytes meanwhile: they are on their way
// before any recording work that order does not need. f.Raw (and f.Data,
// the SSE fields and Comment) come from the caller, who must not change
// f until it has called flush.
func (rs *session) reserve(st *store.Stream, dir store.Direction, f *store.Frame) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.seq++
	f.SessionID, f.StreamID, f.Seq, f.Direction, f.Offset = rs.sess.ID, st.ID, rs.seq, dir, rs.offset()
	rs.pending = append(rs.pending, pendingFrame{st: st, f: f})
}

// flush records the reserved frames.
func (rs *session) flush(ctx context.Context) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.flushLocked(ctx)
}

// flushLocked records the reserved frames, in order. The caller holds
// rs.mu.
func (rs *session) flushLocked(ctx context.Context) {
	for i, p := range rs.pending {
		rs.record(ctx, p.f, derive.Frame(p.f, int(p.st.Kind)))
		rs.pending[i] = pendingFrame{}
	}
	rs.pending = rs.pending[:0]
}

// openStream records a new stream in the session.
func (rs *session) openStream(ctx context.Context, st *store.Stream) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.flushLocked(ctx)
	st.SessionID = rs.sess.ID
	st.Opened = rs.offset()
	if rs.failed {
		return
	}
	rs.fail(rs.sink.OpenStream(ctx, st))
}

// closeStream records how a stream ended.
func (rs *session) closeStream(ctx context.Context, st *store.Stream, end store.End, cause error) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.flushLocked(ctx)
	st.Closed = rs.offset()
	st.End = end
	if cause != nil {
		st.Err = cause.Error()
	}
	if rs.failed || st.ID == 0 {
		return
	}
	rs.fail(rs.sink.CloseStream(ctx, st))
}

// append records one frame on st. f.Raw (and f.Data, the SSE fields and
// Comment, when set) come from the caller; the rest is filled here.
func (rs *session) append(ctx context.Context, st *store.Stream, dir store.Direction, f *store.Frame) {
	rs.appendDerived(ctx, st, dir, f, derive.Frame(f, int(st.Kind)))
}

// appendDerived is append for a frame the caller has derived already: m
// is what derive.Frame returned.
func (rs *session) appendDerived(ctx context.Context, st *store.Stream, dir store.Direction, f *store.Frame, m jsonrpc.Message) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.flushLocked(ctx)
	rs.seq++
	f.SessionID, f.StreamID, f.Seq, f.Direction, f.Offset = rs.sess.ID, st.ID, rs.seq, dir, rs.offset()
	rs.record(ctx, f, m)
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

// end closes the session record.
func (rs *session) end(ctx context.Context, exitCode int) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.flushLocked(ctx)
	rs.sess.EndedAt = rs.clock.Now()
	rs.sess.ExitCode = exitCode
	if rs.failed {
		return
	}
	rs.fail(rs.sink.UpdateSession(ctx, &rs.sess))
}
