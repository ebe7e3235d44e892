package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// openExisting opens the cassette at path, which must exist, for writing
// if it can and read-only if it cannot: on a read-only file system, a
// full disk, or another user's file. A file that is no cassette, a newer
// or damaged one, or one with a schema not mcpvcr's, is no reason to try.
func openExisting(ctx context.Context, path string) (*DB, error) {
	d, err := Open(ctx, path)
	if err == nil || errors.Is(err, ErrNotCassette) || errors.Is(err, ErrNewerSchema) ||
		errors.Is(err, ErrDamaged) || errors.Is(err, ErrForeignSchema) || errors.Is(err, fs.ErrNotExist) || ctx.Err() != nil {
		return d, err
	}
	rd, rerr := openReadOnly(ctx, path)
	if rerr != nil {
		return nil, errors.Join(err, fmt.Errorf("open cassette %s read-only: %w", path, rerr))
	}
	rd.readOnly = err
	return rd, nil
}

// openReadOnly opens the cassette at path for reading only. SQLite reads
// a cassette in WAL mode through its -shm file, which a reader that may
// not write cannot create (nor extend, on a full disk). When there is
// none, or it cannot be used, and the write-ahead log is empty, no
// recorder has the file open: it is opened immutable (SQLite then takes
// no locks, so a recorder that starts meanwhile is not seen).
func openReadOnly(ctx context.Context, path string) (*DB, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	var tries []string
	if _, err := os.Stat(abs + "-shm"); err == nil {
		tries = append(tries, readerParams+"&mode=ro")
	}
	if fi, err := os.Stat(abs + "-wal"); err != nil || fi.Size() == 0 {
		tries = append(tries, readerParams+"&mode=ro&immutable=1")
	}
	if len(tries) == 0 {
		return nil, fmt.Errorf("its write-ahead log %s-wal cannot be read without its -shm file", path)
	}
	var errs []error
	for _, params := range tries {
		d, err := openReader(ctx, path, abs, dsn(abs, params))
		if err == nil {
			return d, nil
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

// openReader opens a DB of read-only connections to dsn.
func openReader(ctx context.Context, path, abs, dsn string) (_ *DB, err error) {
	d := &DB{
		path:       path,
		q:          newQueue(),
		sessionIDs: newIDPool("sessions", sessionBlock),
		streamIDs:  newIDPool("streams", streamBlock),
		sessions:   newKnownCache[bool](),
		streams:    newKnownCache[int64](),
	}
	if d.held, err = holdFile(abs, false); err != nil {
		return nil, err
	}
	if d.rdb, err = sql.Open(driverName, dsn); err != nil {
		d.held.release()
		return nil, err
	}
	defer func() {
		if err != nil {
			d.rdb.Close()
			d.held.release()
		}
	}()
	d.rdb.SetMaxOpenConns(maxReaders)
	d.rdb.SetMaxIdleConns(maxReaders)
	version, err := inspect(ctx, d.rdb)
	switch {
	case err != nil:
		return nil, sqliteError(err)
	case version == 0:
		return nil, ErrEmpty
	case version >= packsVersion-1 && version < schemaVersion:
		// A schema that lacks only tables added since (frame_packs,
		// frame_oversize, cache): its frames are all rows without packs,
		// and a cache reads as empty (replay keeps its index in memory).
		d.noPacks = version < packsVersion
		d.noOversize = version < oversizeVersion
		d.noCache = version < cacheVersion
	case version < schemaVersion:
		return nil, fmt.Errorf("schema version %d is older than this build's %d, and a cassette opened read-only cannot be upgraded: copy it to a writable place", version, schemaVersion)
	}
	return d, nil
}

// ReadOnly returns why d was opened read-only (the error opening it for
// writing gave), or nil when d is writable. Every write to a read-only DB
// fails with ErrReadOnly.
func (d *DB) ReadOnly() error { return d.readOnly }
