package store

import (
	"context"
	"database/sql"
	"fmt"
)

// A cache table holds what a reader derives from a cassette's sessions
// and keeps in the cassette so as not to derive it again: replay keeps
// its index of the sessions there, in an encoding of its own. Entries are
// byte values under byte keys, in tables by name; keys sort as bytes, so
// a table is read by key prefix, in key order. Nothing in a cache is part
// of a recording: export, check and import ignore it, and a reader builds
// again what it does not find.

// CacheEntry is one value of a cache table.
type CacheEntry struct {
	Key, Value []byte
	// Session, if not 0, is the one session the value was derived from:
	// the entry is stored only while that session exists, and is deleted
	// with it.
	Session int64
}

// cacheVersion is the schema version that added the cache table.
const cacheVersion = 11

// CacheGet returns the value under key in cache table, and false when
// there is none.
func (d *DB) CacheGet(ctx context.Context, table string, key []byte) ([]byte, bool, error) {
	es, err := d.CacheRange(ctx, table, key, 0, 1)
	if err != nil || len(es) == 0 || string(es[0].Key) != string(key) {
		return nil, false, err
	}
	return es[0].Value, true, nil
}

// CacheRange returns the entries of cache table whose keys start with
// prefix, in key order, from the offset-th on (from 0), at most limit of
// them (all when limit is 0). A cassette opened read-only whose schema
// predates the cache has none.
func (d *DB) CacheRange(ctx context.Context, table string, prefix []byte, offset, limit int) ([]CacheEntry, error) {
	if d.noCache {
		return nil, nil
	}
	q := `SELECT key, value, session_id FROM cache WHERE name = ? AND key >= ?`
	args := []any{table, nonNil(prefix)}
	if end, ok := prefixEnd(prefix); ok {
		q += ` AND key < ?`
		args = append(args, end)
	}
	if limit <= 0 {
		limit = -1 // SQLite: no limit
	}
	q += ` ORDER BY key LIMIT ? OFFSET ?`
	args = append(args, limit, offset)
	var out []CacheEntry
	err := d.read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, q, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var e CacheEntry
			if err := rows.Scan(&e.Key, &e.Value, &e.Session); err != nil {
				return err
			}
			out = append(out, e)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("read cache %s: %w", table, err)
	}
	return out, nil
}

// CachePut stores entries in cache table, in one transaction, each
// replacing the value under its key. With replace set it first deletes
// every entry of table (for a table that holds one thing at a time). An
// entry of a session that does not exist (deleted meanwhile) is skipped.
func (d *DB) CachePut(ctx context.Context, table string, replace bool, entries []CacheEntry) error {
	if len(entries) == 0 && !replace {
		return nil
	}
	err := d.exclusive(ctx, op{fn: func(t *txn) error {
		if replace {
			if _, err := t.exec(`DELETE FROM cache WHERE name = ?`, table); err != nil {
				return err
			}
		}
		for _, e := range entries {
			q := `INSERT OR REPLACE INTO cache (name, key, session_id, value) VALUES (?, ?, ?, ?)`
			args := []any{table, nonNil(e.Key), e.Session, nonNil(e.Value)}
			if e.Session != 0 {
				q = `INSERT OR REPLACE INTO cache (name, key, session_id, value) SELECT ?, ?, id, ? FROM sessions WHERE id = ?`
				args = []any{table, nonNil(e.Key), nonNil(e.Value), e.Session}
			}
			if _, err := t.exec(q, args...); err != nil {
				return err
			}
		}
		return nil
	}})
	if err != nil {
		return fmt.Errorf("write cache %s: %w", table, err)
	}
	return nil
}

// nonNil returns b, or an empty slice for nil: SQLite stores a nil slice
// as NULL, which no key compares with.
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// prefixEnd returns the least key greater than every key starting with
// prefix, and false when there is none (prefix is empty or all 0xff).
func prefixEnd(prefix []byte) ([]byte, bool) {
	end := []byte(string(prefix))
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1], true
		}
	}
	return nil, false
}
