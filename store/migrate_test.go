package store

import (
	"context"
	"database/sql"
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
