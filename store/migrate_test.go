package store

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"
)

// TestMigrate_FromVersion1: a cassette written by a build that knew only
// migration 1 opens, is migrated to the current version, and keeps its
// frames.
func TestMigrate_FromVersion1(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v1.db")
	raw, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec("PRAGMA journal_mode = WAL"); err != nil {
		t.Fatal(err)
	}
	if err := applyMigration(ctx, raw, migrations[0]); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`INSERT INTO sessions (id, transport) VALUES (1, 'stdio')`,
		`INSERT INTO streams (id, session_id, kind) VALUES (1, 1, 'stdout')`,
		`INSERT INTO frames (session_id, seq, stream_id, direction, offset_ns, kind, method, raw) VALUES (1, 1, 1, 's2c', 0, 'notification', 'm', '{"jsonrpc":"2.0","method":"m"}')`,
	} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := raw.Close(); err != nil {
		t.Fatal(err)
	}

	d, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("open a version 1 cassette: %v", err)
	}
	defer d.Close()
	fs, err := d.Frames(ctx, 1)
	if err != nil || len(fs) != 1 || fs[0].Method != "m" {
		t.Fatalf("frames after migration = %+v, %v; want the one frame", fs, err)
	}
	var version, indexes int
	if err := d.rdb.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		t.Fatal(err)
	}
	if err := d.rdb.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master WHERE name = 'frames_session_method'").Scan(&indexes); err != nil {
		t.Fatal(err)
	}
	if version != schemaVersion || indexes != 0 {
		t.Errorf("user_version %d with %d frames_session_method indexes; want %d and 0", version, indexes, schemaVersion)
	}
}

// TestMigrate_FromVersion2: a cassette of schema version 2 (with the
// frames_stream index) opens, loses the index, keeps its frames, takes
// new sessions after the old ones, and a session can still be deleted
// whole, which since migration 4 runs with foreign keys off.
func TestMigrate_FromVersion2(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v2.db")
	raw, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec("PRAGMA journal_mode = WAL"); err != nil {
		t.Fatal(err)
	}
	for _, m := range migrations[:2] {
		if err := applyMigration(ctx, raw, m); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range []string{
		`INSERT INTO sessions (id, transport) VALUES (1, 'stdio'), (2, 'stdio')`,
		`INSERT INTO streams (id, session_id, kind) VALUES (1, 1, 'stdout'), (2, 2, 'stdout'), (3, 2, 'stdin')`,
		`INSERT INTO frames (session_id, seq, stream_id, direction, offset_ns, kind, method, raw) VALUES
			(1, 1, 1, 's2c', 0, 'notification', 'm', '{"jsonrpc":"2.0","method":"m"}'),
			(2, 1, 3, 'c2s', 0, 'notification', 'n', '{"jsonrpc":"2.0","method":"n"}'),
			(2, 2, 2, 's2c', 1, 'notification', 'o', '{"jsonrpc":"2.0","method":"o"}')`,
	} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := raw.Close(); err != nil {
		t.Fatal(err)
	}

	d, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("open a version 2 cassette: %v", err)
	}
	defer d.Close()
	var version, indexes int
	if err := d.rdb.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		t.Fatal(err)
	}
	if err := d.rdb.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master WHERE name = 'frames_stream'").Scan(&indexes); err != nil {
		t.Fatal(err)
	}
	if version != schemaVersion || indexes != 0 {
		t.Errorf("user_version %d with %d frames_stream indexes; want %d and 0", version, indexes, schemaVersion)
	}
	if fs, err := d.Frames(ctx, 2); err != nil || len(fs) != 2 || fs[1].Method != "o" {
		t.Fatalf("frames of session 2 after migration = %+v, %v; want both", fs, err)
	}
	s := &Session{Transport: Stdio}
	if err := d.CreateSession(ctx, s); err != nil || s.ID != 3 {
		t.Errorf("CreateSession after migration: ID %d, %v; want 3", s.ID, err)
	}
	if err := d.DeleteSession(ctx, 2); err != nil {
		t.Fatalf("DeleteSession(2) = %v", err)
	}
	if _, err := d.Session(ctx, 2); !errors.Is(err, ErrNotFound) {
		t.Errorf("Session(2) after delete = %v; want ErrNotFound", err)
	}
	r, err := d.Check(ctx)
	if err != nil || len(r.Problems) > 0 {
		t.Errorf("Check() = %q, %v; want no problems", r.Problems, err)
	}
	var fk int
	if err := d.rdb.QueryRowContext(ctx, "SELECT count(*) FROM frames WHERE session_id = 2").Scan(&fk); err != nil || fk != 0 {
		t.Errorf("frames of the deleted session: %d, %v; want 0", fk, err)
	}
}

// TestDB_DeleteSessionDropsIndex: deleting a session, which runs with
// foreign keys off, drops the cache entries derived from it too, and
// only those.
func TestDB_DeleteSessionDropsIndex(t *testing.T) {
	ctx := context.Background()
	d, err := Open(ctx, filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	s := &Session{Transport: Stdio}
	if err := d.CreateSession(ctx, s); err != nil {
		t.Fatal(err)
	}
	err = d.CachePut(ctx, "t", false, []CacheEntry{
		{Key: []byte("of the session"), Value: []byte{0}, Session: s.ID},
		{Key: []byte("of none"), Value: []byte{1}},
		{Key: []byte("of a deleted session"), Value: []byte{2}, Session: s.ID + 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.DeleteSession(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	if es, err := d.CacheRange(ctx, "t", nil, 0, 0); err != nil || len(es) != 1 || string(es[0].Key) != "of none" {
		t.Errorf("cache entries after DeleteSession: %+v, %v; want only the one of no session", es, err)
	}
	// Foreign keys are on in an exclusive write that deletes nothing (an
	// import): a stream of a session that does not exist is refused by
	// the file, not only by the DB's own checks.
	err = d.exclusive(ctx, op{fn: func(t *txn) error {
		_, err := t.exec(`INSERT INTO streams (session_id, kind) VALUES (?, 'stdin')`, s.ID)
		return err
	}})
	if err == nil {
		t.Error("inserting a stream of a deleted session succeeded; want a foreign key error")
	}
}

// TestOpen_PageSize: a new cassette gets 16 KB pages, which Open must
// set before anything creates the file's first page.
func TestOpen_PageSize(t *testing.T) {
	ctx := context.Background()
	d, err := Open(ctx, filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var size int
	if err := d.rdb.QueryRowContext(ctx, "PRAGMA page_size").Scan(&size); err != nil {
		t.Fatal(err)
	}
	if size != 16384 {
		t.Errorf("page_size = %d; want 16384", size)
	}
}

// applyMigration applies migration m alone, in its own transaction, to
// make files of older schema versions.
func applyMigration(ctx context.Context, db *sql.DB, m migration) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, m.sql); err != nil {
		return err
	}
	return tx.Commit()
}
