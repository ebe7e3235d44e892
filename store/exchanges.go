package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// ReplayExchange is one row of replay's index of the exchanges an HTTP
// replay answers from every session at once (see replayer.Server.Load):
// a recorded exchange, found by Kind and Key, in recorded order (Ord),
// with Info what a lookup compares besides the key.
type ReplayExchange struct {
	Kind, Key, Info string
	Ord             int64
	Session, Stream int64
}

// ReplayExchangeGroup counts the rows of one kind and key that share an
// Info.
type ReplayExchangeGroup struct {
	Info  string
	Count int
}

// exchangesVersion is the schema version that added replay_exchanges.
const exchangesVersion = 7

// HasReplayExchanges reports whether the exchange index name is stored.
func (d *DB) HasReplayExchanges(ctx context.Context, name string) (bool, error) {
	if d.noExchanges {
		return false, nil // a read-only cassette of a schema before the table
	}
	var ok bool
	err := d.read(ctx, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM replay_exchanges WHERE name = ?)`, name).Scan(&ok)
	})
	if err != nil {
		return false, fmt.Errorf("read replay exchanges: %w", err)
	}
	return ok, nil
}

// ReplayExchangeKind returns the rows of kind in index name, in recorded
// order: for kinds of few rows.
func (d *DB) ReplayExchangeKind(ctx context.Context, name, kind string) ([]ReplayExchange, error) {
	var out []ReplayExchange
	err := d.read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT kind, key, info, ord, session_id, stream_id FROM replay_exchanges
			WHERE name = ? AND kind = ? ORDER BY ord`, name, kind)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var x ReplayExchange
			if err := rows.Scan(&x.Kind, &x.Key, &x.Info, &x.Ord, &x.Session, &x.Stream); err != nil {
				return err
			}
			out = append(out, x)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("read replay exchanges: %w", err)
	}
	return out, nil
}

// ReplayExchangeGroups returns, for the rows of kind and key in index
// name, each distinct Info and how many rows have it, in Info order.
func (d *DB) ReplayExchangeGroups(ctx context.Context, name, kind, key string) ([]ReplayExchangeGroup, error) {
	var out []ReplayExchangeGroup
	err := d.read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT info, count(*) FROM replay_exchanges
			WHERE name = ? AND kind = ? AND key = ? GROUP BY info ORDER BY info`, name, kind, key)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var g ReplayExchangeGroup
			if err := rows.Scan(&g.Info, &g.Count); err != nil {
				return err
			}
			out = append(out, g)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("read replay exchanges: %w", err)
	}
	return out, nil
}

// ReplayExchangeAt returns the n-th row (from 0, in recorded order) of
// kind and key in index name whose Info is one of infos (any Info when
// infos is empty), and false when there are not that many.
func (d *DB) ReplayExchangeAt(ctx context.Context, name, kind, key string, infos []string, n int) (ReplayExchange, bool, error) {
	q := `SELECT kind, key, info, ord, session_id, stream_id FROM replay_exchanges WHERE name = ? AND kind = ? AND key = ?`
	args := []any{name, kind, key}
	if len(infos) > 0 {
		q += ` AND info IN (?` + strings.Repeat(", ?", len(infos)-1) + `)`
		for _, in := range infos {
			args = append(args, in)
		}
	}
	q += ` ORDER BY ord LIMIT 1 OFFSET ?`
	args = append(args, n)
	var x ReplayExchange
	found := false
	err := d.read(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, q, args...).Scan(&x.Kind, &x.Key, &x.Info, &x.Ord, &x.Session, &x.Stream)
		if err == sql.ErrNoRows {
			return nil
		}
		found = err == nil
		return err
	})
	if err != nil {
		return ReplayExchange{}, false, fmt.Errorf("read replay exchanges: %w", err)
	}
	return x, found, nil
}

// PutReplayExchanges stores the exchange index name, replacing every
// index stored before (a cassette keeps the one it was last replayed
// with).
func (d *DB) PutReplayExchanges(ctx context.Context, name string, xs []ReplayExchange) error {
	err := d.exclusive(ctx, op{fn: func(t *txn) error {
		if _, err := t.exec(`DELETE FROM replay_exchanges`); err != nil {
			return err
		}
		for _, x := range xs {
			if _, err := t.exec(`INSERT OR REPLACE INTO replay_exchanges (name, kind, key, info, ord, session_id, stream_id) VALUES (?, ?, ?, ?, ?, ?, ?)`,
				name, x.Kind, x.Key, x.Info, x.Ord, x.Session, x.Stream); err != nil {
				return err
			}
		}
		return nil
	}})
	if err != nil {
		return fmt.Errorf("write replay exchanges: %w", err)
	}
	return nil
}
