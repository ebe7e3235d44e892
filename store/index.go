package store

import (
	"context"
	"database/sql"
	"fmt"
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
