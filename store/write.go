package store

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"slices"
	"time"
	"unicode/utf8"

	segjson "github.com/segmentio/encoding/json"
)

// CreateSession assigns s.ID and queues the session for insertion. The
// Transport must be set. The DB keeps no reference to s.
func (d *DB) CreateSession(ctx context.Context, s *Session) error {
	if err := validSession(s); err != nil {
		return fmt.Errorf("create session: %w", err)
	}
	args, err := sessionArgs(s)
	if err != nil {
		return fmt.Errorf("create session: %w", err)
	}
	id, err := d.newID(ctx, d.sessionIDs)
	if err != nil {
		return fmt.Errorf("create session: %w", err)
	}
	d.mu.Lock()
	d.sessions.put(id, true)
	d.mu.Unlock()
	args[0] = id
	if err := d.send(ctx, op{kind: opSession, sessionID: id, args: args, first: true}); err != nil {
		d.mu.Lock()
		d.sessions.forget(id)
		d.mu.Unlock()
		return fmt.Errorf("create session: %w", err)
	}
	s.ID = id
	return nil
}

// UpdateSession queues the replacement of every field of session s.ID
// with those of s. An update that sets EndedAt is committed once the
// writes pause, within 50 ms while they do not (endGap). The DB keeps no
// reference to s.
func (d *DB) UpdateSession(ctx context.Context, s *Session) error {
	if err := d.updateSession(ctx, s); err != nil {
		return fmt.Errorf("update session %d: %w", s.ID, err)
	}
	return nil
}

func (d *DB) updateSession(ctx context.Context, s *Session) error {
	if err := validSession(s); err != nil {
		return err
	}
	if err := d.checkSession(ctx, s.ID); err != nil {
		return err
	}
	args, err := sessionArgs(s)
	if err != nil {
		return err
	}
	args[0] = s.ID
	return d.send(ctx, op{kind: opSession, sessionID: s.ID, args: args, commit: !s.EndedAt.IsZero()})
}

// OpenStream assigns st.ID and queues the stream for insertion. The Kind
// must be set, st.SessionID must exist, and st.ResumesID, if set, must be
// a stream of the same session. The DB keeps no reference to st.
func (d *DB) OpenStream(ctx context.Context, st *Stream) error {
	if err := d.openStream(ctx, st); err != nil {
		return fmt.Errorf("open stream in session %d: %w", st.SessionID, err)
	}
	return nil
}

func (d *DB) openStream(ctx context.Context, st *Stream) error {
	if err := validStream(st); err != nil {
		return err
	}
	if err := d.checkSession(ctx, st.SessionID); err != nil {
		return err
	}
	if err := d.checkResumes(ctx, st); err != nil {
		return err
	}
	args, err := streamArgs(st)
	if err != nil {
		return err
	}
	id, err := d.newID(ctx, d.streamIDs)
	if err != nil {
		return err
	}
	d.mu.Lock()
	d.streams.put(id, st.SessionID)
	d.mu.Unlock()
	args[0] = id
	if err := d.send(ctx, op{kind: opStream, sessionID: st.SessionID, args: args}); err != nil {
		d.mu.Lock()
		d.streams.forget(id)
		d.mu.Unlock()
		return err
	}
	st.ID = id
	return nil
}

// CloseStream queues the replacement of every field of stream st.ID with
// those of st, and the commit of everything queued so far: once the
// writes pause, or within 50 ms while they do not (endGap; stream ends
// in the same 50 ms share one commit). st.End must
// say how the stream ended (not EndOpen). The DB keeps no reference to st.
func (d *DB) CloseStream(ctx context.Context, st *Stream) error {
	if err := d.closeStream(ctx, st); err != nil {
		return fmt.Errorf("close stream %d: %w", st.ID, err)
	}
	return nil
}

func (d *DB) closeStream(ctx context.Context, st *Stream) error {
	if err := validStream(st); err != nil {
		return err
	}
	if st.End == EndOpen {
		return invalid("end %s (set End to how the stream ended)", st.End)
	}
	if err := d.checkStream(ctx, st.ID, st.SessionID); err != nil {
		return err
	}
	if err := d.checkResumes(ctx, st); err != nil {
		return err
	}
	args, err := streamArgs(st)
	if err != nil {
		return err
	}
	args[0] = st.ID
	return d.send(ctx, op{kind: opStream, sessionID: st.SessionID, args: args, commit: true})
}

// Append queues f for insertion and returns without waiting for the disk,
// unless the queue is full, when it blocks until there is room (or ctx is
// done); it never drops a frame. From then on the DB owns f: the caller
// must not change it. f.Seq must be from 1 and unique in its session,
// f.Direction must be set, and f.StreamID, if set, must be a stream of
// f.SessionID. The derived fields are stored as given: call Derive first.
func (d *DB) Append(ctx context.Context, f *Frame) error {
	if f == nil {
		return fmt.Errorf("append frame: %w", invalid("nil frame"))
	}
	if err := d.appendFrame(ctx, f); err != nil {
		return fmt.Errorf("append frame %d: %w", f.Seq, err)
	}
	return nil
}

// TakesEventRuns reports true: Append takes runs of SSE events as one
// frame (Frame.Events). It makes DB a recorder.RunSink.
func (d *DB) TakesEventRuns() bool { return true }

func (d *DB) appendFrame(ctx context.Context, f *Frame) error {
	switch {
	case f.Seq <= 0:
		return invalid("seq %d (seqs start at 1)", f.Seq)
	case !validDirection(f.Direction):
		return invalid("direction %s", f.Direction)
	case f.Events < 0:
		return invalid("%d events", f.Events)
	case f.Events > 0 && (!f.SSE || f.Direction != ServerToClient || len(f.Raw) == 0 || len(f.Raw) > maxRunBytes || f.Data != nil):
		return invalid("a run of %d events must be the server's SSE events, 1 to %d bytes of their blocks, and nothing else", f.Events, maxRunBytes)
	}
	var err error
	if f.StreamID != 0 {
		err = d.checkStream(ctx, f.StreamID, f.SessionID)
	} else {
		err = d.checkSession(ctx, f.SessionID)
	}
	if err != nil {
		return err
	}
	return d.send(ctx, op{kind: opFrame, sessionID: f.SessionID, frame: f})
}

// DeleteSession deletes session id with its streams and frames, after
// every write queued before it, and waits until that is committed.
// Writes still queued for the session are dropped.
func (d *DB) DeleteSession(ctx context.Context, id int64) error {
	if err := d.deleteSession(ctx, id); err != nil {
		return fmt.Errorf("delete session %d: %w", id, err)
	}
	return nil
}

func (d *DB) deleteSession(ctx context.Context, id int64) error {
	if err := d.checkSession(ctx, id); err != nil {
		return err
	}
	fn := func(t *txn) error {
		// Foreign keys are off (see writer.exclusive): children go first,
		// and nothing cascades.
		for _, q := range []string{
			"DELETE FROM cache WHERE session_id = ?",
			"DELETE FROM frame_members WHERE session_id = ?",
			"DELETE FROM frame_packs WHERE session_id = ?",
			"DELETE FROM frame_oversize WHERE session_id = ?",
			"DELETE FROM frames WHERE session_id = ?",
			"DELETE FROM streams WHERE session_id = ?",
		} {
			if _, err := t.exec(q, id); err != nil {
				return err
			}
		}
		n, err := t.exec("DELETE FROM sessions WHERE id = ?", id)
		if err != nil {
			return err
		}
		if n == 0 {
			return ErrNotFound // deleted by someone else meanwhile
		}
		return nil
	}
	if err := d.exclusive(ctx, op{fn: fn, deletes: id}); err != nil {
		return err
	}
	d.mu.Lock()
	d.sessions.put(id, false)
	d.streams.each(func(st, s int64) {
		if s == id {
			d.streams.forget(st) // the file no longer has it
		}
	})
	d.mu.Unlock()
	return nil
}

// checkResumes checks that the stream st resumes, if any, is a stream of
// the same session.
func (d *DB) checkResumes(ctx context.Context, st *Stream) error {
	if st.ResumesID == 0 {
		return nil
	}
	if err := d.checkStream(ctx, st.ResumesID, st.SessionID); err != nil {
		return fmt.Errorf("resumes: %w", err)
	}
	return nil
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w "+format, append([]any{ErrInvalid}, args...)...)
}

func validSession(s *Session) error {
	if !validTransport(s.Transport) {
		return invalid("transport %s (set Transport)", s.Transport)
	}
	return nil
}

func validStream(st *Stream) error {
	switch {
	case !validStreamKind(st.Kind):
		return invalid("stream kind %s (set Kind)", st.Kind)
	case !validEnd(st.End):
		return invalid("stream end %d", int(st.End))
	case st.ResumesID != 0 && st.ResumesID == st.ID:
		return invalid("stream %d resumes itself", st.ID)
	}
	return nil
}

// sessionArgs encodes s in upsert column order, with the id left 0.
func sessionArgs(s *Session) ([]any, error) {
	labels, err := jsonText(s.Labels, len(s.Labels))
	if err != nil {
		return nil, fmt.Errorf("encode labels: %w", err)
	}
	return []any{int64(0), s.Name, s.Transport.String(), s.Revision, string(s.Era), s.Upstream, s.ExternalID,
		timeText(s.StartedAt), timeText(s.EndedAt), int64(s.ExitCode), labels, s.Note,
		blob(s.ClientInfo), blob(s.ServerInfo)}, nil
}

// streamArgs encodes st in upsert column order, with the id left 0.
func streamArgs(st *Stream) ([]any, error) {
	req, err := jsonText(st.RequestHeader, len(st.RequestHeader))
	if err != nil {
		return nil, fmt.Errorf("encode request header: %w", err)
	}
	resp, err := jsonText(st.ResponseHeader, len(st.ResponseHeader))
	if err != nil {
		return nil, fmt.Errorf("encode response header: %w", err)
	}
	return []any{int64(0), st.SessionID, st.Kind.String(), st.Method, st.URL, int64(st.Status),
		nullInt(st.ResumesID), st.LastEventID, int64(st.Opened), int64(st.Closed), st.End.String(),
		st.Err, req, resp}, nil
}

// jsonText encodes a map with n entries as a JSON object, with sorted
// keys; an empty map is NULL. segmentio's encoder writes what
// encoding/json writes, in a fraction of the time (every HTTP stream has
// two header maps, encoded when it opens and when it ends).
func jsonText(m any, n int) (any, error) {
	if n == 0 {
		return nil, nil
	}
	if h, ok := m.(http.Header); ok {
		return string(appendHeader(make([]byte, 0, 64*n), h)), nil
	}
	b, err := segjson.Marshal(m)
	if err != nil {
		return nil, err
	}
	return string(b), nil
}

// appendHeader appends h as encoding/json writes a map[string][]string:
// keys in byte order, nil values as null. It is jsonText for the two
// header maps of every HTTP stream, which a general encoder took a dozen
// allocations for (sorting the keys, boxing, buffers).
func appendHeader(dst []byte, h http.Header) []byte {
	var buf [32]string
	keys := buf[:0]
	for k := range h {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	dst = append(dst, '{')
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, k)
		dst = append(dst, ':')
		vs := h[k]
		if vs == nil {
			dst = append(dst, "null"...)
			continue
		}
		dst = append(dst, '[')
		for j, v := range vs {
			if j > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONString(dst, v)
		}
		dst = append(dst, ']')
	}
	return append(dst, '}')
}

// appendJSONString appends s as a JSON string with encoding/json's
// escapes: the two-letter ones for quote, backslash, \b, \f, \n, \r and
// \t; \u00XX for other control bytes and for <, > and & (HTML-safe);
// \u2028 and \u2029; and U+FFFD for each byte that is not UTF-8.
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	done := 0 // s[:done] is in dst
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			var esc string
			switch {
			case r == utf8.RuneError && size == 1:
				esc = `\ufffd`
			case r == '\u2028':
				esc = `\u2028`
			case r == '\u2029':
				esc = `\u2029`
			default:
				i += size
				continue
			}
			dst = append(append(dst, s[done:i]...), esc...)
			i += size
			done = i
			continue
		}
		if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
			i++
			continue
		}
		dst = append(dst, s[done:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
		}
		i++
		done = i
	}
	return append(append(dst, s[done:]...), '"')
}

// timeText formats t as RFC 3339 in UTC with nanoseconds; the zero time
// is NULL.
func timeText(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return formatTime(t)
}

// blob copies b, which the caller still owns; empty is NULL.
func blob(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return bytes.Clone(b)
}
