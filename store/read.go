package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"
)

// Column lists, in the order the scan functions read them.
var (
	sessionColumns = `id, name, transport, revision, era, upstream, external_id, started_at, ended_at,
		exit_code, labels, note, client_info, server_info`
	streamColumns = `id, session_id, kind, method, url, status, resumes_id, last_event_id, opened_ns,
		closed_ns, end_kind, err, request_header, response_header`
	// frameColumns are a frame row's columns for scanFrame: raw, unless
	// it is a blob longer than bigRaw, which is read after in pieces
	// (readRaw), then raw's length and the rowid.
	frameColumns = `session_id, seq, stream_id, direction, offset_ns, kind, rpc_id, method, batch,
		malformed, sse, sse_id, sse_has_id, sse_event, sse_retry, comment, ` + rawColumn + `, data, oversize, ` + rawTail
	// frameColumnsBig is frameColumns reading a frame's oversize from
	// frame_oversize when its row holds bigOversize (migration 10).
	frameColumnsBig = `session_id, seq, stream_id, direction, offset_ns, kind, rpc_id, method, batch,
		malformed, sse, sse_id, sse_has_id, sse_event, sse_retry, comment, ` + rawColumn + `, data,
		CASE oversize WHEN 1 THEN coalesce((SELECT o.oversize FROM frame_oversize o
		WHERE o.session_id = frames.session_id AND o.seq = frames.seq), 1) ELSE oversize END, ` + rawTail
	// SQLite reads neither typeof nor length of a blob from its bytes.
	rawColumn = fmt.Sprintf("CASE WHEN typeof(raw) = 'blob' AND length(raw) > %d THEN NULL ELSE raw END", bigRaw)
	rawTail   = "CASE WHEN typeof(raw) = 'blob' THEN length(raw) ELSE 0 END, rowid"
)

// oversizeVersion is the schema version that added frame_oversize.
const oversizeVersion = 10

// tables says which tables added since a read-only cassette's schema
// (see openReader) it has.
type tables struct {
	packs    bool // frame_packs
	oversize bool // frame_oversize
}

// tables returns the tables d's file has of those tables names.
func (d *DB) tables() tables { return tables{packs: !d.noPacks, oversize: !d.noOversize} }

// Sessions returns every committed session, by ID.
func (d *DB) Sessions(ctx context.Context) ([]Session, error) {
	var ss []Session
	err := d.read(ctx, func(tx *sql.Tx) error {
		var err error
		ss, err = sessions(ctx, tx)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	return ss, nil
}

// Session returns committed session id, or an error wrapping ErrNotFound.
func (d *DB) Session(ctx context.Context, id int64) (Session, error) {
	var s Session
	err := d.read(ctx, func(tx *sql.Tx) error {
		var err error
		s, err = session(ctx, tx, id)
		return err
	})
	if err != nil && !errors.Is(err, ErrNotFound) {
		return Session{}, fmt.Errorf("read session %d: %w", id, err)
	}
	return s, err
}

// Streams returns the committed streams of session sessionID, by ID, or
// an error wrapping ErrNotFound if there is no such session.
func (d *DB) Streams(ctx context.Context, sessionID int64) ([]Stream, error) {
	var sts []Stream
	err := d.read(ctx, func(tx *sql.Tx) error {
		if _, err := session(ctx, tx, sessionID); err != nil {
			return err
		}
		var err error
		sts, err = streams(ctx, tx, sessionID)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read streams of session %d: %w", sessionID, err)
	}
	return sts, nil
}

// Frames returns the committed frames of session sessionID, by Seq, with
// Data and the derived fields filled in, or an error wrapping ErrNotFound
// if there is no such session. Empty Raw and Data read back as nil.
func (d *DB) Frames(ctx context.Context, sessionID int64) ([]Frame, error) {
	var fs []Frame
	err := d.readFrames(ctx, func(rt readTx) error {
		if _, err := session(ctx, rt.Tx, sessionID); err != nil {
			return err
		}
		return eachFrame(ctx, rt, d.tables(), sessionID, func(f *Frame) error {
			if len(fs) == cap(fs) {
				// Doubled, not grown by append's quarter: a long
				// session's frames were otherwise copied about four
				// times over, most of the time its loading took.
				fs = slices.Grow(fs, max(len(fs), 64))
			}
			fs = append(fs, *f)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("read frames of session %d: %w", sessionID, err)
	}
	return fs, nil
}

// read runs fn in a read transaction, so that it sees one snapshot.
func (d *DB) read(ctx context.Context, fn func(tx *sql.Tx) error) error {
	if d.q.isClosed() {
		return ErrClosed
	}
	tx, err := d.rdb.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer tx.Rollback()
	return fn(tx)
}

// readTx is a read transaction with the connection it runs on, whose
// handle reads a big frame's bytes in pieces (see readRaw).
type readTx struct {
	*sql.Tx
	conn *sql.Conn
}

// readFrames is read for reads of frames.
func (d *DB) readFrames(ctx context.Context, fn func(rt readTx) error) error {
	if d.q.isClosed() {
		return ErrClosed
	}
	conn, err := d.rdb.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	tx, err := conn.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer tx.Rollback()
	return fn(readTx{Tx: tx, conn: conn})
}

// raw reads the n bytes of raw of frame row rowid, in rt's snapshot.
func (rt readTx) raw(rowid, n int64) ([]byte, error) {
	var b []byte
	err := rt.conn.Raw(func(dc any) error {
		h := sqliteHandle(dc)
		if h == nil {
			return fmt.Errorf("driver connection %T has no SQLite handle to read frame row %d with", dc, rowid)
		}
		var err error
		b, err = readRaw(h, rowid, n)
		return err
	})
	return b, err
}

func sessions(ctx context.Context, tx *sql.Tx) ([]Session, error) {
	rows, err := tx.QueryContext(ctx, "SELECT "+sessionColumns+" FROM sessions ORDER BY id")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ss []Session
	for rows.Next() {
		s, err := scanSession(rows)
		if err != nil {
			return nil, err
		}
		ss = append(ss, s)
	}
	return ss, rows.Err()
}

func session(ctx context.Context, tx *sql.Tx, id int64) (Session, error) {
	s, err := scanSession(tx.QueryRowContext(ctx, "SELECT "+sessionColumns+" FROM sessions WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return Session{}, fmt.Errorf("session %d: %w", id, ErrNotFound)
	}
	return s, err
}

func streams(ctx context.Context, tx *sql.Tx, sessionID int64) ([]Stream, error) {
	rows, err := tx.QueryContext(ctx, "SELECT "+streamColumns+" FROM streams WHERE session_id = ? ORDER BY id", sessionID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var sts []Stream
	for rows.Next() {
		st, err := scanStream(rows)
		if err != nil {
			return nil, err
		}
		sts = append(sts, st)
	}
	return sts, rows.Err()
}

// eachFrame calls fn with each frame of a session, by seq: its rows of
// frames and, when packs is set, the frames of its packs (see pack.go),
// merged. fn may keep the frame; it is not reused.
func eachFrame(ctx context.Context, rt readTx, has tables, sessionID int64, fn func(*Frame) error) error {
	return eachFrameSkipping(ctx, rt, has, sessionID, nil, fn)
}

// eachFrameSkipping is eachFrame that, when skip is set, passes over
// each pack whose bytes do not decode, calling skip with its error.
func eachFrameSkipping(ctx context.Context, rt readTx, has tables, sessionID int64, skip func(error), fn func(*Frame) error) error {
	tx := rt.Tx
	members, err := batchMembers(ctx, tx, sessionID)
	if err != nil {
		return err
	}
	var pc *packCursor
	var packed *Frame
	if has.packs {
		if pc, err = openPacks(ctx, tx, "WHERE session_id = ?", sessionID); err != nil {
			return err
		}
		defer pc.close()
		pc.skip = skip
		if packed, err = pc.next(); err != nil {
			return err
		}
	}
	cols := frameColumns
	if has.oversize {
		cols = frameColumnsBig
	}
	rows, err := tx.QueryContext(ctx, "SELECT "+cols+" FROM frames WHERE session_id = ? ORDER BY seq", sessionID)
	if err != nil {
		return err
	}
	defer rows.Close()
	var row *Frame
	next := func() error {
		row = nil
		if !rows.Next() {
			return rows.Err()
		}
		row = new(Frame)
		return scanFrame(rows, row, rt.raw)
	}
	if err := next(); err != nil {
		return err
	}
	for row != nil || packed != nil {
		f := row
		if before(packed, row) {
			f = packed
			if packed, err = pc.next(); err != nil {
				return err
			}
		} else if err := next(); err != nil {
			return err
		}
		f.Members = members[f.Seq]
		if err := fn(f); err != nil {
			return err
		}
	}
	return nil
}

// batchMembers returns the members of a session's batch frames by seq.
func batchMembers(ctx context.Context, tx *sql.Tx, sessionID int64) (map[int64][]Member, error) {
	rows, err := tx.QueryContext(ctx, "SELECT seq, kind, rpc_id, method FROM frame_members WHERE session_id = ? ORDER BY seq, idx", sessionID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	members := make(map[int64][]Member)
	for rows.Next() {
		var seq int64
		var kind string
		var id, method sql.NullString
		if err := rows.Scan(&seq, &kind, &id, &method); err != nil {
			return nil, err
		}
		var m Member
		m.Kind, _ = parseKind(kind)
		m.ID, m.Method = id.String, method.String
		members[seq] = append(members[seq], m)
	}
	return members, rows.Err()
}

// scanner is *sql.Row or *sql.Rows.
type scanner interface{ Scan(dest ...any) error }

func scanSession(r scanner) (Session, error) {
	var s Session
	var transport string
	var started, ended, labels sql.NullString
	var exitCode int64
	var clientInfo, serverInfo []byte
	if err := r.Scan(&s.ID, &s.Name, &transport, &s.Revision, &s.Era, &s.Upstream, &s.ExternalID,
		&started, &ended, &exitCode, &labels, &s.Note, &clientInfo, &serverInfo); err != nil {
		return Session{}, err
	}
	s.Transport, _ = parseTransport(transport) // a name from a newer build reads as unknown
	s.ExitCode = int(exitCode)
	var err error
	if s.StartedAt, err = parseTime(started); err != nil {
		return Session{}, fmt.Errorf("session %d: started_at: %w", s.ID, err)
	}
	if s.EndedAt, err = parseTime(ended); err != nil {
		return Session{}, fmt.Errorf("session %d: ended_at: %w", s.ID, err)
	}
	if labels.Valid {
		if err := json.Unmarshal([]byte(labels.String), &s.Labels); err != nil {
			return Session{}, fmt.Errorf("session %d: labels: %w", s.ID, err)
		}
	}
	s.ClientInfo, s.ServerInfo = nilIfEmpty(clientInfo), nilIfEmpty(serverInfo)
	return s, nil
}

func scanStream(r scanner) (Stream, error) {
	var st Stream
	var kind, end string
	var resumes sql.NullInt64
	var status, opened, closed int64
	var req, resp sql.NullString
	if err := r.Scan(&st.ID, &st.SessionID, &kind, &st.Method, &st.URL, &status, &resumes, &st.LastEventID,
		&opened, &closed, &end, &st.Err, &req, &resp); err != nil {
		return Stream{}, err
	}
	st.Kind, _ = parseStreamKind(kind)
	st.End, _ = parseEnd(end)
	st.Status, st.ResumesID = int(status), resumes.Int64
	st.Opened, st.Closed = time.Duration(opened), time.Duration(closed)
	var err error
	if st.RequestHeader, err = parseHeader(req); err != nil {
		return Stream{}, fmt.Errorf("stream %d: request_header: %w", st.ID, err)
	}
	if st.ResponseHeader, err = parseHeader(resp); err != nil {
		return Stream{}, fmt.Errorf("stream %d: response_header: %w", st.ID, err)
	}
	return st, nil
}

// scanFrame scans a row of frameColumns into f, reading raw with readRaw
// where the row leaves it out.
func scanFrame(r scanner, f *Frame, readRaw func(rowid, n int64) ([]byte, error)) error {
	var stream sql.NullInt64
	var dir, kind string
	var offset, retry int64
	var rpcID, method, sseID, sseEvent sql.NullString
	// go-sqlite3 hands a row's blobs over as bytes of their own (it
	// copies them out of SQLite for each row), which a RawBytes takes as
	// they are and the frame keeps: into a []byte, database/sql would
	// copy them once more (a frame of 120 MB cost 360 MB to read).
	var raw, data sql.RawBytes
	var rawLen, rowid int64
	if err := r.Scan(&f.SessionID, &f.Seq, &stream, &dir, &offset, &kind, &rpcID, &method, &f.Batch,
		&f.Malformed, &f.SSE, &sseID, &f.HasEventID, &sseEvent, &retry, &f.Comment, &raw, &data, &f.Oversize,
		&rawLen, &rowid); err != nil {
		return err
	}
	f.Raw = []byte(raw)
	if raw == nil {
		var err error
		if f.Raw, err = readRaw(rowid, rawLen); err != nil {
			return err
		}
	}
	f.StreamID = stream.Int64
	f.Direction, _ = parseDirection(dir)
	f.Kind, _ = parseKind(kind)
	f.Offset, f.Retry = time.Duration(offset), int(retry)
	f.ID, f.Method, f.EventID, f.Event = rpcID.String, method.String, sseID.String, sseEvent.String
	f.Raw = nilIfEmpty(f.Raw)
	if data == nil && f.SSE {
		f.Data = sseData(f.Raw) // NULL: the data of the raw block
	} else if data == nil {
		f.Data = f.Raw // NULL: the payload is the raw bytes
	} else {
		f.Data = nilIfEmpty([]byte(data))
	}
	return nil
}

func parseTime(s sql.NullString) (time.Time, error) {
	if !s.Valid {
		return time.Time{}, nil
	}
	return time.Parse(time.RFC3339Nano, s.String)
}

func parseHeader(s sql.NullString) (http.Header, error) {
	if !s.Valid {
		return nil, nil
	}
	var h http.Header
	err := json.Unmarshal([]byte(s.String), &h)
	return h, err
}

func nilIfEmpty(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}
