package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// SessionIDs returns the ids of the committed sessions recorded over any
// of transports (every session when none is given), in order. It reads
// nothing else, for cassettes of many sessions.
func (d *DB) SessionIDs(ctx context.Context, transports ...Transport) ([]int64, error) {
	var ids []int64
	err := d.read(ctx, func(tx *sql.Tx) error {
		// One row of text rather than a row per session: for 10,000
		// sessions the per-row cost of database/sql was most of a replay's
		// start.
		var names []any
		for _, t := range transports {
			names = append(names, t.String())
		}
		q := `SELECT coalesce(group_concat(id), '') FROM sessions`
		if len(names) > 0 {
			q += ` WHERE transport IN (?` + strings.Repeat(", ?", len(names)-1) + `)`
		}
		var list string
		if err := tx.QueryRowContext(ctx, q, names...).Scan(&list); err != nil {
			return err
		}
		for f := range strings.SplitSeq(list, ",") {
			if f == "" {
				continue
			}
			id, err := strconv.ParseInt(f, 10, 64)
			if err != nil {
				return fmt.Errorf("session id %q: %w", f, err)
			}
			ids = append(ids, id)
		}
		slices.Sort(ids)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list session ids: %w", err)
	}
	return ids, nil
}

// LabelValues returns the distinct values of label key over the sessions
// ids (every session when ids is empty).
func (d *DB) LabelValues(ctx context.Context, key string, ids ...int64) ([]string, error) {
	var vals []string
	// ids is sorted when it comes from SessionIDs, and labelled sessions
	// are few: look each one up rather than building a set of every id.
	sorted := slices.IsSorted(ids)
	want := func(id int64) bool {
		if len(ids) == 0 {
			return true
		}
		if sorted {
			_, ok := slices.BinarySearch(ids, id)
			return ok
		}
		return slices.Contains(ids, id)
	}
	err := d.read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT id, json_extract(labels, '$.' || json_quote(?)) FROM sessions
			WHERE labels IS NOT NULL AND instr(labels, json_quote(?)) > 0 AND json_extract(labels, '$.' || json_quote(?)) IS NOT NULL`, key, key, key)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id int64
			var v string
			if err := rows.Scan(&id, &v); err != nil {
				return err
			}
			if want(id) && !slices.Contains(vals, v) {
				vals = append(vals, v)
			}
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("read label %s: %w", key, err)
	}
	return vals, nil
}

// HTTPSummary counts what a cassette's Streamable HTTP and HTTP+SSE
// sessions hold beyond conversations, for replay to choose how it reads
// them.
type HTTPSummary struct {
	// Modern counts the Streamable HTTP sessions of the 2026-07-28 era;
	// Anonymous those of an earlier era without a session id.
	Modern, Anonymous int
	// Exchanges counts the plain HTTP exchanges (HTTPStream: OAuth
	// metadata, registration, token).
	Exchanges int
	// Answered counts the streams answered with one of the statuses
	// SummarizeHTTP was asked about.
	Answered int
}

// SummarizeHTTP returns the HTTPSummary of db's sessions, counting the
// streams answered with one of statuses. It reads session and stream rows
// only, no frame; streams of other transports have neither an HTTP kind
// nor a status.
func (d *DB) SummarizeHTTP(ctx context.Context, statuses ...int) (HTTPSummary, error) {
	var sum HTTPSummary
	err := d.read(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, `SELECT
			coalesce(sum(era = ?), 0), coalesce(sum(era <> ? AND external_id = ''), 0)
			FROM sessions WHERE transport = ?`, string(EraModern), string(EraModern), StreamableHTTP.String()).Scan(&sum.Modern, &sum.Anonymous); err != nil {
			return err
		}
		in := "NULL"
		args := []any{HTTPStream.String()}
		if len(statuses) > 0 {
			in = "?" + strings.Repeat(", ?", len(statuses)-1)
		}
		for _, st := range statuses {
			args = append(args, st)
		}
		args = append(args, args...)
		// The filter first: the sums see only the rows they count.
		return tx.QueryRowContext(ctx, `SELECT coalesce(sum(kind = ?), 0), coalesce(sum(status IN (`+in+`)), 0)
			FROM streams WHERE kind = ? OR status IN (`+in+`)`, args...).Scan(&sum.Exchanges, &sum.Answered)
	})
	if err != nil {
		return HTTPSummary{}, fmt.Errorf("summarize HTTP sessions: %w", err)
	}
	return sum, nil
}

// HTTPClientMethod reports whether any client frame of db's Streamable
// HTTP and HTTP+SSE sessions is a request or notification of method (not
// counting batch members). It reads every frame row (no frame is decoded):
// for a question asked rarely.
func (d *DB) HTTPClientMethod(ctx context.Context, method string) (bool, error) {
	var found bool
	err := d.read(ctx, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM frames f JOIN sessions x ON x.id = f.session_id
			WHERE f.method = ? AND f.direction = ? AND x.transport IN (?, ?))`,
			method, ClientToServer.String(), StreamableHTTP.String(), LegacySSE.String()).Scan(&found)
	})
	if err != nil {
		return false, fmt.Errorf("look for %s: %w", method, err)
	}
	return found, nil
}
