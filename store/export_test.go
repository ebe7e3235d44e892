package store

import (
	"context"
	"fmt"
)

// Hooks for the tests in package store_test.

// LimitGrowth caps the file at its current size plus extra pages, so that
// later writes fail with SQLITE_FULL, as on a full disk.
func LimitGrowth(ctx context.Context, d *DB, extra int) error {
	return d.exclusive(ctx, op{fn: func(t *txn) error {
		pages, err := t.queryInt("PRAGMA page_count")
		if err != nil {
			return err
		}
		_, err = t.queryInt(fmt.Sprintf("PRAGMA max_page_count = %d", pages+int64(extra)))
		return err
	}})
}

// TempDir returns the temporary directory that Close removes, if any.
func TempDir(d *DB) string { return d.removeDir }

// SetMaxWALBytes sets the log length past which the writer checkpoints,
// until the test ends.
func SetMaxWALBytes(t interface{ Cleanup(func()) }, n int) {
	old := maxWALBytes
	maxWALBytes = n
	t.Cleanup(func() { maxWALBytes = old })
}

// TrustedSchema returns PRAGMA trusted_schema of the writer's and a
// reader's connection.
func TrustedSchema(ctx context.Context, d *DB) (writer, reader int64, err error) {
	err = d.exclusive(ctx, op{fn: func(t *txn) (err error) {
		writer, err = t.queryInt("PRAGMA trusted_schema")
		return err
	}})
	if err == nil {
		err = d.rdb.QueryRowContext(ctx, "PRAGMA trusted_schema").Scan(&reader)
	}
	return writer, reader, err
}
