package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mcpvcr/mcpvcr/internal/termtext"
)

// maxProblems bounds the problems a Report lists.
const maxProblems = 100

// Report is what Check found. The zero Report is a sound, empty cassette.
type Report struct {
	Sessions, Streams, Frames int64 // counts of committed rows
	// Integrity holds what SQLite's integrity check found, if anything:
	// damage to the file itself.
	Integrity []string
	// Problems describes broken references and frames out of order, at
	// most 100 of them; Omitted counts the rest.
	Problems []string
	Omitted  int
}

// OK reports whether the check found nothing wrong.
func (r Report) OK() bool { return len(r.Integrity) == 0 && len(r.Problems) == 0 }

// String returns a summary line, then one indented line per problem.
func (r Report) String() string {
	var b strings.Builder
	counts := termtext.Count(r.Sessions, "session") + ", " + termtext.Count(r.Streams, "stream") + ", " + termtext.Count(r.Frames, "frame")
	if r.OK() {
		return "ok: " + counts
	}
	n := len(r.Integrity) + len(r.Problems) + r.Omitted
	fmt.Fprintf(&b, "%s in %s:", termtext.Count(int64(n), "problem"), counts)
	for _, p := range r.Integrity {
		fmt.Fprintf(&b, "\n  integrity: %s", p)
	}
	for _, p := range r.Problems {
		fmt.Fprintf(&b, "\n  %s", p)
	}
	if r.Omitted > 0 {
		fmt.Fprintf(&b, "\n  and %d more", r.Omitted)
	}
	return b.String()
}

func (r *Report) problem(format string, args ...any) {
	if len(r.Problems) >= maxProblems {
		r.Omitted++
		return
	}
	r.Problems = append(r.Problems, fmt.Sprintf(format, args...))
}

// Check verifies the committed contents of the cassette: SQLite's
// integrity check and foreign keys, then that each session's frames have
// seqs 1, 2, 3, ... without gaps, offsets that never decrease, and streams
// that exist and belong to the same session, and that resumed streams
// exist in the same session. Problems go in the Report; the error is for
// a check that could not run.
func (d *DB) Check(ctx context.Context) (Report, error) {
	var r Report
	err := d.read(ctx, func(tx *sql.Tx) error {
		packs := d.packs()
		for _, c := range []func(context.Context, *sql.Tx, *Report) error{
			func(ctx context.Context, tx *sql.Tx, r *Report) error { return checkIntegrity(ctx, tx, packs, r) },
			checkForeignKeys,
			func(ctx context.Context, tx *sql.Tx, r *Report) error { return checkFrames(ctx, tx, packs, r) },
			checkStreams,
		} {
			if err := c(ctx, tx, &r); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return Report{}, fmt.Errorf("check: %w", err)
	}
	return r, nil
}

func checkIntegrity(ctx context.Context, tx *sql.Tx, packs bool, r *Report) error {
	rows, err := tx.QueryContext(ctx, "PRAGMA integrity_check")
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return err
		}
		if line != "ok" {
			r.Integrity = append(r.Integrity, line)
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	q := `SELECT (SELECT count(*) FROM sessions), (SELECT count(*) FROM streams), (SELECT count(*) FROM frames)`
	if packs {
		q += ` + (SELECT coalesce(sum(last_seq - first_seq + 1), 0) FROM frame_packs)`
	}
	return tx.QueryRowContext(ctx, q).Scan(&r.Sessions, &r.Streams, &r.Frames)
}

func checkForeignKeys(ctx context.Context, tx *sql.Tx, r *Report) error {
	rows, err := tx.QueryContext(ctx, "PRAGMA foreign_key_check")
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var table, parent string
		var rowid sql.NullInt64
		var fkid int64
		if err := rows.Scan(&table, &rowid, &parent, &fkid); err != nil {
			return err
		}
		r.problem("%s row %d refers to a missing row of %s", table, rowid.Int64, parent)
	}
	return rows.Err()
}

// checkFrames checks the order of every session's frames, rows and
// packs merged by seq (see pack.go); a pack that does not decode is a
// problem of its own.
func checkFrames(ctx context.Context, tx *sql.Tx, packs bool, r *Report) error {
	var pc *packCursor
	var packed *Frame
	nextPacked := func() error {
		for {
			var err error
			packed, err = pc.next()
			if !errors.Is(err, errBadPack) {
				return err
			}
			r.problem("%v", err)
			pc.err = nil
		}
	}
	if packs {
		var err error
		if pc, err = openPacks(ctx, tx, ""); err != nil {
			return err
		}
		defer pc.close()
		if err := nextPacked(); err != nil {
			return err
		}
	}
	owners := map[int64]sql.NullInt64{} // of the streams of packed frames
	owner := func(stream int64) (sql.NullInt64, error) {
		if o, ok := owners[stream]; ok {
			return o, nil
		}
		var o sql.NullInt64
		err := tx.QueryRowContext(ctx, "SELECT session_id FROM streams WHERE id = ?", stream).Scan(&o)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return o, err
		}
		if len(owners) > 1024 {
			clear(owners)
		}
		owners[stream] = o
		return o, nil
	}
	rows, err := tx.QueryContext(ctx, `SELECT f.session_id, f.seq, f.offset_ns, f.stream_id, s.session_id
		FROM frames f LEFT JOIN streams s ON s.id = f.stream_id
		ORDER BY f.session_id, f.seq`)
	if err != nil {
		return err
	}
	defer rows.Close()
	// row is the next row of frames, nil after the last; rowStream and
	// rowOwner its stream and the stream's session.
	var row *Frame
	var rowStream, rowOwner sql.NullInt64
	nextRow := func() error {
		row = nil
		if !rows.Next() {
			return rows.Err()
		}
		row = new(Frame)
		var off int64
		if err := rows.Scan(&row.SessionID, &row.Seq, &off, &rowStream, &rowOwner); err != nil {
			return err
		}
		row.Offset = time.Duration(off)
		return nil
	}
	if err := nextRow(); err != nil {
		return err
	}
	var session, seq, offset int64 = 0, 0, 0
	for row != nil || packed != nil {
		var sid, q, off int64
		var stream, owned sql.NullInt64
		if before(packed, row) {
			sid, q, off = packed.SessionID, packed.Seq, int64(packed.Offset)
			if packed.StreamID != 0 {
				stream = sql.NullInt64{Int64: packed.StreamID, Valid: true}
				if owned, err = owner(packed.StreamID); err != nil {
					return err
				}
			}
			if err := nextPacked(); err != nil {
				return err
			}
		} else {
			sid, q, off, stream, owned = row.SessionID, row.Seq, int64(row.Offset), rowStream, rowOwner
			if err := nextRow(); err != nil {
				return err
			}
		}
		if sid != session {
			session, seq, offset = sid, 0, 0
		}
		switch {
		case q == seq+1:
		case q == seq+2:
			r.problem("session %d: frame %d is missing", sid, seq+1)
		default:
			r.problem("session %d: frames %d to %d are missing", sid, seq+1, q-1)
		}
		if off < offset {
			r.problem("session %d: frame %d is at %v, before frame %d at %v", sid, q, time.Duration(off), seq, time.Duration(offset))
		}
		switch {
		case !stream.Valid:
		case !owned.Valid:
			r.problem("session %d: frame %d is on stream %d, which does not exist", sid, q, stream.Int64)
		case owned.Int64 != sid:
			r.problem("session %d: frame %d is on stream %d of session %d", sid, q, stream.Int64, owned.Int64)
		}
		seq, offset = q, off
	}
	return nil
}

func checkStreams(ctx context.Context, tx *sql.Tx, r *Report) error {
	rows, err := tx.QueryContext(ctx, `SELECT s.id, s.session_id, s.resumes_id, o.session_id
		FROM streams s LEFT JOIN streams o ON o.id = s.resumes_id
		WHERE s.resumes_id IS NOT NULL ORDER BY s.id`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id, sid, resumes int64
		var owner sql.NullInt64
		if err := rows.Scan(&id, &sid, &resumes, &owner); err != nil {
			return err
		}
		switch {
		case !owner.Valid:
			r.problem("session %d: stream %d resumes stream %d, which does not exist", sid, id, resumes)
		case owner.Int64 != sid:
			r.problem("session %d: stream %d resumes stream %d of session %d", sid, id, resumes, owner.Int64)
		}
	}
	return rows.Err()
}
