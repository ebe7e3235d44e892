package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
)

// ReplayIndex returns the replay index entries stored in mode, by
// session id. Sessions without an entry in that mode are absent.
func (d *DB) ReplayIndex(ctx context.Context, mode string) (map[int64][]byte, error) {
	out := map[int64][]byte{}
	err := d.read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT session_id, hashes FROM replay_index WHERE mode = ?`, mode)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id int64
			var h []byte
			if err := rows.Scan(&id, &h); err != nil {
				return err
			}
			out[id] = h
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("read replay index: %w", err)
	}
	return out, nil
}

// PutReplayIndex stores the replay index entries of ended sessions in
// mode, replacing older ones, in one transaction. An entry for a session
// that does not exist (deleted meanwhile) is skipped.
func (d *DB) PutReplayIndex(ctx context.Context, mode string, entries map[int64][]byte) error {
	if len(entries) == 0 {
		return nil
	}
	err := d.exclusive(ctx, op{fn: func(t *txn) error {
		for id, h := range entries {
			if _, err := t.exec(`INSERT OR REPLACE INTO replay_index (session_id, mode, hashes)
				SELECT id, ?, ? FROM sessions WHERE id = ?`, mode, h, id); err != nil {
				return err
			}
		}
		return nil
	}})
	if err != nil {
		return fmt.Errorf("write replay index: %w", err)
	}
	return nil
}

// SessionIDs returns the ids of the committed sessions recorded over any
// of transports (every session when none is given), in order. It reads
// nothing else, for cassettes of many sessions.
func (d *DB) SessionIDs(ctx context.Context, transports ...Transport) ([]int64, error) {
	var ids []int64
	err := d.read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT id, transport FROM sessions ORDER BY id`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id int64
			var t string
			if err := rows.Scan(&id, &t); err != nil {
				return err
			}
			if len(transports) == 0 || slices.ContainsFunc(transports, func(tr Transport) bool { return tr.String() == t }) {
				ids = append(ids, id)
			}
		}
		return rows.Err()
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
	want := map[int64]bool{}
	for _, id := range ids {
		want[id] = true
	}
	err := d.read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT id, json_extract(labels, '$.' || json_quote(?)) FROM sessions WHERE json_extract(labels, '$.' || json_quote(?)) IS NOT NULL`, key, key)
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
			if (len(want) == 0 || want[id]) && !slices.Contains(vals, v) {
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
