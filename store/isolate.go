package store

import (
	"errors"

	"github.com/mattn/go-sqlite3"
)

// A write SQLite refuses on its own (a value too big, a constraint) is
// dropped alone, so that no other frame or session is lost.

// isolable reports whether err, the failure of one write in the open
// transaction, was that write's alone: SQLite undid the one statement and
// the transaction goes on (a blob longer than SQLite's limit, a
// constraint such as a seq given twice). The writer then drops that write
// and keeps every other. Anything else (a full disk, an I/O error, a
// transaction SQLite rolled back) stops the writer.
func (w *writer) isolable(err error) bool {
	var se sqlite3.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code {
	case sqlite3.ErrTooBig, sqlite3.ErrConstraint, sqlite3.ErrMismatch, sqlite3.ErrRange:
	default:
		return false
	}
	ac, ok := w.c.(interface{ AutoCommit() bool })
	return w.t != nil && ok && !ac.AutoCommit()
}

// skip reports a write that SQLite refused on its own (see isolable) and
// goes on without it. A refused frame leaves a placeholder in its place
// in the session's order: no bytes, Oversize its length, so that show and
// check tell a frame that was not stored from one never seen.
func (w *writer) skip(o *op, err error) {
	w.d.log.Error("a write was refused and dropped; the other frames and sessions are still recorded", "session", o.sessionID, "err", err)
	f := o.frame
	if o.kind != opFrame || len(f.Raw) == 0 {
		return
	}
	ph := &Frame{SessionID: f.SessionID, StreamID: f.StreamID, Seq: f.Seq, Direction: f.Direction,
		Offset: f.Offset, SSE: f.SSE, Comment: f.Comment, Retry: -1, Oversize: max(f.Oversize, int64(len(f.Raw)))}
	ph.Derive(StreamUnknown)
	if perr := w.t.putFrame(ph); perr != nil && !w.isolable(perr) {
		w.abort(perr)
		return
	}
	w.n++
}
