package store

import (
	"bytes"
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unsafe"

	"github.com/mcpvcr/mcpvcr/internal/sse"
)

// The writer talks to go-sqlite3's connection directly rather than through
// database/sql: per frame, that saves converting and checking every
// argument, two locks and a few allocations, which is a good part of the
// cost of a small frame.

// driverConn is what the writer needs of its connection; go-sqlite3's
// *SQLiteConn has it all.
type driverConn interface {
	driver.ConnPrepareContext
	driver.ConnBeginTx
	driver.ExecerContext
	driver.QueryerContext
}

// Statements used by the writer. Sessions and streams are upserted, so
// that creating and updating them is one statement each.
const (
	upsertSessionSQL = `INSERT INTO sessions (id, name, transport, revision, era, upstream, external_id,
		started_at, ended_at, exit_code, labels, note, client_info, server_info)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
	ON CONFLICT (id) DO UPDATE SET name = excluded.name, transport = excluded.transport,
		revision = excluded.revision, era = excluded.era, upstream = excluded.upstream,
		external_id = excluded.external_id, started_at = excluded.started_at,
		ended_at = excluded.ended_at, exit_code = excluded.exit_code, labels = excluded.labels,
		note = excluded.note, client_info = excluded.client_info, server_info = excluded.server_info`
	upsertStreamSQL = `INSERT INTO streams (id, session_id, kind, method, url, status, resumes_id,
		last_event_id, opened_ns, closed_ns, end_kind, err, request_header, response_header)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
	ON CONFLICT (id) DO UPDATE SET kind = excluded.kind, method = excluded.method, url = excluded.url,
		status = excluded.status, resumes_id = excluded.resumes_id,
		last_event_id = excluded.last_event_id, opened_ns = excluded.opened_ns,
		closed_ns = excluded.closed_ns, end_kind = excluded.end_kind, err = excluded.err,
		request_header = excluded.request_header, response_header = excluded.response_header`
	insertFrameSQL = `INSERT INTO frames (session_id, seq, stream_id, direction, offset_ns, kind, rpc_id,
		method, batch, malformed, sse, sse_id, sse_has_id, sse_event, sse_retry, comment, raw, data, oversize)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	insertMemberSQL = `INSERT INTO frame_members (session_id, seq, idx, kind, rpc_id, method)
	VALUES (?, ?, ?, ?, ?, ?)`
)

// frameChunk is the most frames one statement inserts. One statement for
// many rows saves SQLite's per-statement work and cgo crossings, which
// matter for small frames. A run of frames is inserted in chunks of
// powers of two: the writes of concurrent streams interleave frames with
// stream writes, so runs are often short.
const frameChunk = 32

// chunkSizes are the sizes of the multi-row inserts, largest first.
var chunkSizes = [...]int{32, 16, 8, 4, 2}

// insertFramesSQL returns insertFrameSQL with n rows of placeholders.
func insertFramesSQL(n int) string {
	return insertFrameSQL + strings.Repeat(",\n\t(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", n-1)
}

// stmts are the writer's statements, prepared once on its connection.
type stmts struct {
	upsertSession, upsertStream, insertFrame, insertMember, insertPack driver.Stmt
	// insertBigFrame inserts a frame with zeroblob(n) for raw, and db is
	// the connection's SQLite handle, to write raw into the row (see
	// blobio.go); db is nil when the handle is not to be had.
	insertBigFrame driver.Stmt
	db             unsafe.Pointer
	// insertFrames[i] inserts chunkSizes[i] frames.
	insertFrames [len(chunkSizes)]driver.Stmt
	// boxes holds column values boxed once for the writer's life.
	boxes boxes
}

func prepare(c driverConn) (*stmts, error) {
	s := new(stmts)
	for _, p := range []struct {
		stmt *driver.Stmt
		sql  string
	}{
		{&s.upsertSession, upsertSessionSQL},
		{&s.upsertStream, upsertStreamSQL},
		{&s.insertFrame, insertFrameSQL},
		{&s.insertFrames[0], insertFramesSQL(chunkSizes[0])},
		{&s.insertFrames[1], insertFramesSQL(chunkSizes[1])},
		{&s.insertFrames[2], insertFramesSQL(chunkSizes[2])},
		{&s.insertFrames[3], insertFramesSQL(chunkSizes[3])},
		{&s.insertFrames[4], insertFramesSQL(chunkSizes[4])},
		{&s.insertMember, insertMemberSQL},
		{&s.insertPack, insertPackSQL},
		{&s.insertBigFrame, insertBigFrameSQL},
	} {
		st, err := c.PrepareContext(bg, p.sql)
		if err != nil {
			s.close()
			return nil, fmt.Errorf("prepare: %w", err)
		}
		*p.stmt = st
	}
	return s, nil
}

func (s *stmts) close() error {
	var errs []error
	for _, st := range append([]driver.Stmt{s.upsertSession, s.upsertStream, s.insertFrame, s.insertMember, s.insertPack, s.insertBigFrame}, s.insertFrames[:]...) {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	return errors.Join(errs...)
}

// bg is the context of the writer's statements. It is never cancelled:
// go-sqlite3 starts a goroutine for every statement run with a
// cancellable context, and a half-written batch must not be abandoned.
var bg = context.Background()

// txn is one write transaction on the writer's connection.
type txn struct {
	c    driverConn
	tx   driver.Tx
	s    *stmts
	args []driver.NamedValue // reused for every statement
}

// begin starts a write transaction (BEGIN IMMEDIATE, which takes the
// file's write lock at once), waiting while another process holds the
// lock. It reports whether it found the lock held.
func begin(c driverConn, s *stmts) (_ *txn, held bool, _ error) {
	var tx driver.Tx
	err := retryBusy(func() (err error) {
		tx, err = c.BeginTx(bg, driver.TxOptions{})
		held = held || isBusy(err)
		return err
	})
	if err != nil {
		return nil, held, fmt.Errorf("begin: %w", err)
	}
	return &txn{c: c, tx: tx, s: s}, held, nil
}

// commit commits t, retrying while SQLite answers SQLITE_BUSY, which
// leaves the transaction open. Any other error rolls t back.
func (t *txn) commit() error {
	err := retryBusy(func() error {
		_, err := t.c.ExecContext(bg, "COMMIT", nil)
		return err
	})
	if err != nil {
		t.rollback()
	}
	return err
}

// rollback rolls t back. Its error is of no use: after a failed COMMIT
// the transaction may be gone already.
func (t *txn) rollback() { t.c.ExecContext(bg, "ROLLBACK", nil) }

// setArgs makes t.args hold vals, numbered from 1.
func (t *txn) setArgs(vals ...any) []driver.NamedValue {
	t.args = t.args[:0]
	for i, v := range vals {
		t.args = append(t.args, driver.NamedValue{Ordinal: i + 1, Value: v})
	}
	return t.args
}

// run executes st through Query rather than Exec: go-sqlite3 binds and
// steps a query in one cgo call, against one call per argument for Exec.
// The statement has run when Query returns.
func (t *txn) run(st driver.Stmt, args []driver.NamedValue) error {
	rows, err := st.(driver.StmtQueryContext).QueryContext(bg, args)
	if err != nil {
		return err
	}
	return rows.Close()
}

// exec runs a statement that is not prepared, returning the rows changed.
func (t *txn) exec(query string, vals ...any) (int64, error) {
	res, err := t.c.ExecContext(bg, query, t.setArgs(vals...))
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// errNoRows is queryInt's error for a query that returned no row.
var errNoRows = errors.New("no rows")

// queryInt runs a query that returns one integer.
func (t *txn) queryInt(query string, vals ...any) (int64, error) {
	var args []driver.NamedValue
	if len(vals) > 0 {
		args = t.setArgs(vals...)
	}
	rows, err := t.c.QueryContext(bg, query, args)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	dest := make([]driver.Value, len(rows.Columns()))
	if err := rows.Next(dest); err != nil {
		if err == io.EOF {
			err = errNoRows
		}
		return 0, err
	}
	n, ok := dest[0].(int64)
	if !ok {
		return 0, fmt.Errorf("%s: got %T, want an integer", query, dest[0])
	}
	return n, nil
}

func (t *txn) putSession(args []any) error {
	if err := t.run(t.s.upsertSession, t.setArgs(args...)); err != nil {
		return fmt.Errorf("write session %d: %w", args[0], err)
	}
	return nil
}

func (t *txn) putStream(args []any) error {
	if err := t.run(t.s.upsertStream, t.setArgs(args...)); err != nil {
		return fmt.Errorf("write stream %d: %w", args[0], err)
	}
	return nil
}

func (t *txn) putFrame(f *Frame) error {
	t.args = t.args[:0]
	t.addFrame(f)
	st := t.s.insertFrame
	big := len(f.Raw) > bigRaw && t.s.db != nil
	if big {
		// zeroblob(n) in the statement, the bytes written after (see
		// blobio.go).
		st = t.s.insertBigFrame
		t.args[rawArg].Value = int64(len(f.Raw))
	}
	if big && f.Oversize > 0 {
		// The length goes in frame_oversize, the row holds bigOversize:
		// a length after the zeroblob would make SQLite expand it.
		t.args[oversizeArg].Value = int64(bigOversize)
	}
	err := t.run(st, t.args)
	if err == nil && big {
		err = writeRaw(t.s.db, lastRowID(t.s.db), f.Raw)
	}
	if err == nil && big && f.Oversize > 0 {
		_, err = t.exec("INSERT INTO frame_oversize (session_id, seq, oversize) VALUES (?, ?, ?)", f.SessionID, f.Seq, f.Oversize)
	}
	if err != nil {
		return fmt.Errorf("insert frame %d of session %d: %w", f.Seq, f.SessionID, err)
	}
	return t.putMembers(f)
}

// rawArg and oversizeArg are the indexes of raw and oversize in
// addFrame's arguments.
const (
	rawArg      = 16
	oversizeArg = 18
)

// bigOversize is the oversize a row written in pieces holds when its
// frame was cut: its true length is in frame_oversize (migration 10). No
// cut frame is 1 byte long.
const bigOversize = 1

// putFrames inserts fs, whose length is one of chunkSizes, with one
// statement.
func (t *txn) putFrames(fs []*Frame) error {
	t.args = t.args[:0]
	for _, f := range fs {
		t.addFrame(f)
	}
	if err := t.run(t.s.insertFrames[slices.Index(chunkSizes[:], len(fs))], t.args); err != nil {
		return fmt.Errorf("insert frames %d to %d of session %d: %w", fs[0].Seq, fs[len(fs)-1].Seq, fs[0].SessionID, err)
	}
	for _, f := range fs {
		if err := t.putMembers(f); err != nil {
			return err
		}
	}
	return nil
}

// addFrame appends f's columns to t.args, in insertFrameSQL order.
func (t *txn) addFrame(f *Frame) {
	raw := f.Raw
	if raw == nil {
		raw = []byte{} // an empty blob, not NULL
	}
	b := &t.s.boxes
	for _, v := range [...]any{
		b.session(f.SessionID), f.Seq, b.stream(f.StreamID), boxedText(directionText[:], int(f.Direction), f.Direction.String), int64(f.Offset),
		boxedText(kindText[:], int(f.Kind), f.Kind.String), nullString(f.ID), b.text(f.Method), f.Batch, f.Malformed,
		f.SSE, nullString(f.EventID), f.HasEventID, b.text(f.Event), retryValue(f.Retry), f.Comment,
		raw, storedData(f), f.Oversize,
	} {
		t.args = append(t.args, driver.NamedValue{Ordinal: len(t.args) + 1, Value: v})
	}
}

// Column values boxed once, rather than for every frame: converting a
// string or an int64 to an interface allocates, and the writer does it for
// every column of every frame.
var (
	directionText [4]any
	kindText      [8]any
	minusOne      any = int64(-1)
)

func init() {
	for i := range directionText {
		directionText[i] = Direction(i).String()
	}
	for i := range kindText {
		kindText[i] = Kind(i).String()
	}
}

// boxes keeps the last session and stream IDs boxed, and the texts of
// few values (methods, SSE event types) boxed for good: most frames
// repeat them, and boxing each again allocated three or four times a
// frame.
type boxes struct {
	sessionID, streamID int64
	sessionV, streamV   any
	texts               map[string]any
}

// maxTexts bounds boxes.texts; past it, it starts again.
const maxTexts = 256

func (b *boxes) session(id int64) any {
	if b.sessionV == nil || id != b.sessionID {
		b.sessionID, b.sessionV = id, id
	}
	return b.sessionV
}

// stream is nullInt(id) for the stream column.
func (b *boxes) stream(id int64) any {
	if id == 0 {
		return nil
	}
	if b.streamV == nil || id != b.streamID {
		b.streamID, b.streamV = id, id
	}
	return b.streamV
}

// text is nullString(s) for a column of few values.
func (b *boxes) text(s string) any {
	if s == "" {
		return nil
	}
	if v, ok := b.texts[s]; ok {
		return v
	}
	if b.texts == nil || len(b.texts) >= maxTexts {
		b.texts = make(map[string]any)
	}
	v := any(s)
	b.texts[s] = v
	return v
}

// boxedText returns table[i], or text() boxed when i is out of its range.
func boxedText(table []any, i int, text func() string) any {
	if i >= 0 && i < len(table) {
		return table[i]
	}
	return text()
}

// retryValue is the sse_retry column of r.
func retryValue(r int) any {
	if r == -1 {
		return minusOne
	}
	return int64(r)
}

func (t *txn) putMembers(f *Frame) error {
	for i, m := range f.Members {
		err := t.run(t.s.insertMember, t.setArgs(
			f.SessionID, f.Seq, int64(i), m.Kind.String(), nullString(m.ID), nullString(m.Method)))
		if err != nil {
			return fmt.Errorf("insert member %d of frame %d of session %d: %w", i, f.Seq, f.SessionID, err)
		}
	}
	return nil
}

// storedData is what the data column holds: NULL when Data is Raw (or
// nil outside SSE, which Derive would make Raw), else Data, so that an SSE
// event's empty data stays distinct from its raw bytes.
func storedData(f *Frame) any {
	switch {
	case f.Data == nil && !f.SSE:
		return nil
	case f.Data == nil:
		return []byte{}
	case bytes.Equal(f.Data, f.Raw):
		return nil
	case f.SSE && len(f.Data) > 0 && sseDataIs(f.Raw, f.Data):
		return nil // the data of the raw block: derived again on read
	}
	return f.Data
}

// sseData returns the data of the one SSE block in raw, nil if none.
// sseDataIs reports whether sseData(raw) equals data. Most events (one
// block, LF line ends) are compared in place, without splitting raw into
// an event; the writer does this for every SSE frame.
func sseDataIs(raw, data []byte) bool {
	if eq, ok := sseDataIsLF(raw, data); ok {
		return eq
	}
	return bytes.Equal(sseData(raw), data)
}

// sseDataIsLF compares the data of raw with data when raw is one event
// whose lines all end in LF and that opens with no byte order mark, or
// the first bytes of such an event cut short (an oversize frame: its last
// line may have no end, and no blank line ends it); ok is false for
// anything else. It copies nothing: a cut event of many megabytes is
// compared in place too.
func sseDataIsLF(raw, data []byte) (equal, ok bool) {
	n := len(raw)
	if n < 1 || raw[0] == '\n' || raw[0] == 0xEF || bytes.IndexByte(raw, '\r') >= 0 {
		return false, false
	}
	var rest []byte
	switch bytes.Index(raw, []byte("\n\n")) {
	case n - 2:
		rest = raw[:n-1] // a whole event, each line with its LF
	case -1:
		rest = raw // an event cut short, which sseData reads to its end
	default:
		return false, false
	}
	pos, lines := 0, 0
	for len(rest) > 0 {
		var line []byte
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		} else {
			line, rest = rest, nil
		}
		var v []byte
		switch {
		case string(line) == "data":
		case bytes.HasPrefix(line, []byte("data:")):
			v = line[len("data:"):]
			if len(v) > 0 && v[0] == ' ' {
				v = v[1:]
			}
		default:
			continue
		}
		if lines > 0 {
			if pos >= len(data) || data[pos] != '\n' {
				return false, true
			}
			pos++
		}
		lines++
		if len(data)-pos < len(v) || !bytes.Equal(data[pos:pos+len(v)], v) {
			return false, true
		}
		pos += len(v)
	}
	return lines > 0 && pos == len(data), true
}

func sseData(raw []byte) []byte {
	evs := sse.Split(raw)
	if len(evs) != 1 || !evs[0].HasData {
		return nil
	}
	return evs[0].Data
}

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func nullInt(n int64) any {
	if n == 0 {
		return nil
	}
	return n
}
