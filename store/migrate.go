package store

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

//go:embed schema.sql
var schemaSQL string

// applicationID marks a SQLite file as a cassette ("mcpv"); migration 1
// sets it.
const applicationID = 0x6D637076

// sqliteMagic starts every SQLite database file.
const sqliteMagic = "SQLite format 3\x00"

// migration is one numbered step of schema.sql.
type migration struct {
	version int
	sql     string
}

// migrations are the steps of schema.sql, in order; the newest schema
// version this build knows is len(migrations).
var migrations = mustParseMigrations(schemaSQL)

// schemaVersion is the cassette schema version this build writes. Files
// with a newer version fail to open with ErrNewerSchema.
var schemaVersion = len(migrations)

const migrationMarker = "-- migration "

func mustParseMigrations(src string) []migration {
	ms, err := parseMigrations(src)
	if err != nil {
		panic("store: schema.sql: " + err.Error())
	}
	return ms
}

// parseMigrations splits src at "-- migration N" lines. The migrations must
// be numbered 1, 2, 3, ... in order.
func parseMigrations(src string) ([]migration, error) {
	var ms []migration
	var cur *strings.Builder
	sc := bufio.NewScanner(strings.NewReader(src))
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, migrationMarker); ok {
			n, err := strconv.Atoi(strings.TrimSpace(rest))
			if err != nil {
				return nil, fmt.Errorf("bad marker %q: %w", line, err)
			}
			if n != len(ms)+1 {
				return nil, fmt.Errorf("migration %d follows migration %d", n, len(ms))
			}
			ms = append(ms, migration{version: n})
			cur = new(strings.Builder)
			continue
		}
		if cur != nil {
			cur.WriteString(line)
			cur.WriteByte('\n')
			ms[len(ms)-1].sql = cur.String()
		}
	}
	if len(ms) == 0 {
		return nil, errors.New("no migrations")
	}
	return ms, sc.Err()
}

// probeFile makes sure path can be opened for writing, creating it if it
// does not exist, and reports whether it already holds data. A file with
// data that does not start with the SQLite header is not a cassette. A
// file a DB of this process has open is read through its held descriptor
// (see heldfile.go).
func probeFile(path string) (empty bool, err error) {
	held.Lock()
	defer held.Unlock()
	var ra io.ReaderAt
	if h := lookupHeld(path); h != nil {
		ra = h.f
	} else {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			var pe *os.PathError
			if errors.As(err, &pe) {
				err = pe.Err // the caller names the path
			}
			return false, err
		}
		defer f.Close()
		ra = f
	}
	head := make([]byte, len(sqliteMagic))
	n, err := ra.ReadAt(head, 0)
	switch {
	case n == 0 && (err == io.EOF || err == nil):
		return true, nil
	case err != nil && err != io.EOF:
		return false, err
	case !bytes.Equal(head[:n], []byte(sqliteMagic)):
		return false, fmt.Errorf("%w (not a SQLite file)", ErrNotCassette)
	}
	return false, nil
}

// inspect reads the schema version of the database behind db and checks
// that it is a cassette, or an empty database that can become one.
func inspect(ctx context.Context, db *sql.DB) (version int, err error) {
	// In one statement, so from one snapshot, so that another process
	// creating or migrating the file is not seen half-way (three reads
	// were seen to find the tables of a new cassette without its
	// application_id). Not in a transaction of the writer's connection:
	// its BEGIN IMMEDIATE would create a new file's first page, with the
	// default page size, before Open sets a bigger one.
	// The schema comes in the same statement, so that it is that of the
	// version read.
	const q = `SELECT p.app, p.ver, m.type, m.name, m.tbl_name, coalesce(m.sql, '')
		FROM (SELECT (SELECT application_id FROM pragma_application_id) AS app,
			(SELECT user_version FROM pragma_user_version) AS ver) AS p
		LEFT JOIN sqlite_schema AS m ORDER BY m.rowid`
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	var appID int
	var objs []SchemaObject
	for rows.Next() {
		var typ, name, table, def sql.NullString
		if err := rows.Scan(&appID, &version, &typ, &name, &table, &def); err != nil {
			return 0, err
		}
		if typ.Valid {
			objs = append(objs, SchemaObject{Type: typ.String, Name: name.String, Table: table.String, SQL: def.String})
		}
	}
	if err := rows.Err(); err != nil {
		return 0, err
	}
	switch {
	case appID == applicationID:
	case appID == 0 && version == 0 && len(objs) == 0:
		return 0, nil // a new, empty database
	default:
		return 0, fmt.Errorf("%w (a SQLite database of another program)", ErrNotCassette)
	}
	if version > schemaVersion {
		return 0, fmt.Errorf("schema version %d, but this build knows up to %d: %w", version, schemaVersion, ErrNewerSchema)
	}
	if err := checkSchema(version, objs); err != nil {
		return 0, err
	}
	return version, nil
}

// migrate applies every migration newer than version, in one transaction
// (a new cassette takes the write lock once, not once per migration, which
// matters when many recorders create it at once). Each migration sets
// PRAGMA user_version itself. Another process may be migrating the same
// file at the same time: the transaction takes the write lock first and
// then reads the version again, so migrations the other process applied
// meanwhile are skipped.
func migrate(ctx context.Context, db *sql.DB, version int) error {
	if version >= len(migrations) {
		return nil
	}
	var last int
	err := retryBusy(func() (err error) {
		last, err = applyMigrations(ctx, db)
		return err
	})
	if err != nil {
		return fmt.Errorf("migrate to schema version %d: %w", last, err)
	}
	return nil
}

// applyMigrations applies the migrations newer than the file's version
// in one transaction, and returns the version it was applying when it
// failed.
func applyMigrations(ctx context.Context, db *sql.DB) (int, error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	var before int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&before); err != nil {
		return 0, err
	}
	for _, m := range migrations[min(before, len(migrations)):] {
		if _, err := tx.ExecContext(ctx, m.sql); err != nil {
			return m.version, err
		}
		var got int
		if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&got); err != nil {
			return m.version, err
		}
		if got != m.version {
			return m.version, fmt.Errorf("schema.sql: migration %d sets user_version %d", m.version, got)
		}
	}
	return len(migrations), tx.Commit()
}
