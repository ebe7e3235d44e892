package store

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcpvcr/mcpvcr/internal/termtext"
)

// The checks CheckFile runs, as its report names them.
const (
	CheckSQLite   = "SQLite file (integrity_check)"
	CheckSchema   = "schema (only mcpvcr's tables and indexes: no trigger, view or other object)"
	CheckImport   = "JSONL export (every line imports)"
	CheckOrder    = "references and frame order (seq 1..n, offsets, streams)"
	CheckContents = "frame contents (bytes agree with the indexed kind, id, method)"
)

// FileReport is what CheckFile found in one file, check by check.
type FileReport struct {
	Path   string
	Format Format
	// Counted reports whether the counts could be read.
	Counted                   bool
	Sessions, Streams, Frames int64
	Checks                    []CheckResult
	// ReadOnly is why the cassette was checked read-only (see
	// DB.ReadOnly); nil when it could be opened for writing.
	ReadOnly error
	// Foreign is set when the cassette's schema holds objects mcpvcr
	// never creates: nothing else of it was read.
	Foreign *ForeignSchemaError
}

// CheckResult is one check and the problems it found.
type CheckResult struct {
	Name     string
	Problems []string
	// Omitted counts the problems left out of Problems.
	Omitted int
	// Skipped means the check could not run because an earlier one failed.
	Skipped bool
}

func (r *FileReport) add(name string, problems []string, omitted int) {
	r.Checks = append(r.Checks, CheckResult{Name: name, Problems: problems, Omitted: omitted})
}

func (r *FileReport) skip(names ...string) {
	for _, n := range names {
		r.Checks = append(r.Checks, CheckResult{Name: n, Skipped: true})
	}
}

// Failed reports whether the named check found problems.
func (r *FileReport) Failed(name string) bool {
	for _, s := range r.Checks {
		if s.Name == name && (len(s.Problems) > 0 || s.Omitted > 0) {
			return true
		}
	}
	return false
}

// Problems counts the problems found.
func (r *FileReport) Problems() int {
	n := 0
	for _, s := range r.Checks {
		n += len(s.Problems) + s.Omitted
	}
	return n
}

// WriteText writes the report for people: a line per check, its problems
// indented below it, and a result line. Control characters in the problems
// are escaped (see internal/termtext).
func (r *FileReport) WriteText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "cassette %s (%s)\n", termtext.Escape(r.Path), r.Format)
	if r.Counted {
		fmt.Fprintf(bw, "  %s, %s, %s\n", termtext.Count(r.Sessions, "session"), termtext.Count(r.Streams, "stream"), termtext.Count(r.Frames, "frame"))
	}
	for _, s := range r.Checks {
		switch {
		case s.Skipped:
			fmt.Fprintf(bw, "  --    %s: not checked\n", s.Name)
		case len(s.Problems) == 0 && s.Omitted == 0:
			fmt.Fprintf(bw, "  ok    %s\n", s.Name)
		default:
			fmt.Fprintf(bw, "  FAIL  %s: %s\n", s.Name, termtext.Count(int64(len(s.Problems)+s.Omitted), "problem"))
			for _, p := range s.Problems {
				fmt.Fprintf(bw, "          %s\n", termtext.Escape(p))
			}
			if s.Omitted > 0 {
				fmt.Fprintf(bw, "          and %d more\n", s.Omitted)
			}
		}
	}
	if n := r.Problems(); n > 0 {
		fmt.Fprintf(bw, "result: %s\n", termtext.Count(int64(n), "problem"))
	} else {
		fmt.Fprintln(bw, "result: ok")
	}
	return bw.Flush()
}

// CheckFile checks the cassette or JSONL export at path, telling them
// apart with Sniff. A cassette gets DB.Check and the content check; an
// export is imported into a temporary cassette first, and a line that does
// not import is a problem found. Problems, including a file too damaged
// for SQLite to read, go in the report; the error is for a check that
// could not run: a missing file (fs.ErrNotExist), an empty one (ErrEmpty),
// one that is neither (ErrNotCassette or ErrNotExport), one written by a
// newer mcpvcr (ErrNewerSchema). CheckFile never creates or changes path.
func CheckFile(ctx context.Context, path string) (*FileReport, error) {
	format, err := Sniff(path)
	if err != nil {
		return nil, fmt.Errorf("cassette %s: %w", path, err)
	}
	r := &FileReport{Path: path, Format: format}
	var db *DB
	if format == JSONL {
		var cleanup func()
		db, cleanup, err = importForCheck(ctx, r, path)
		if cleanup != nil {
			defer cleanup() // after db.Close, deferred below
		}
	} else {
		db, err = openExisting(ctx, path)
		if db != nil {
			r.ReadOnly = db.ReadOnly()
		}
		var fe *ForeignSchemaError
		switch {
		case err != nil && errors.As(err, &fe):
			// Nothing of the file is read past its schema: a view may
			// stand in for a table.
			r.Foreign = fe
			r.skip(CheckSQLite)
			r.add(CheckSchema, fe.Problems(), 0)
			r.skip(CheckOrder, CheckContents)
			err, db = nil, nil
		case err != nil && damaged(err):
			r.add(CheckSQLite, []string{"the file cannot be opened: " + sqliteMessage(err)}, 0)
			r.skip(CheckSchema, CheckOrder, CheckContents)
			err, db = nil, nil
		}
	}
	if err != nil {
		return nil, err
	}
	if db != nil {
		defer db.Close()
		if err := checkDB(ctx, r, db, format == JSONL); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// importForCheck imports a JSONL export into a new cassette in a
// temporary directory. A line that does not import is a problem in the
// file (the report says which); a file that is no export at all cannot be
// checked. The DB is nil when the import failed; otherwise the caller
// must close it and then call cleanup, which removes the directory.
func importForCheck(ctx context.Context, r *FileReport, path string) (db *DB, cleanup func(), err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("open %s: %w", path, err)
	}
	defer f.Close()
	dir, err := os.MkdirTemp("", "mcpvcr-check-")
	if err != nil {
		return nil, nil, fmt.Errorf("make a temporary cassette: %w", err)
	}
	cleanup = func() { os.RemoveAll(dir) }
	db, err = Open(ctx, filepath.Join(dir, "check.db"))
	if err != nil {
		cleanup()
		return nil, nil, fmt.Errorf("make a temporary cassette in %s: %w", os.TempDir(), err)
	}
	_, err = db.Import(ctx, f) // a file: Import measures a long line before it reads it
	if err == nil {
		return db, cleanup, nil
	}
	db.Close()
	cleanup()
	if errors.Is(err, ErrNotExport) || errors.Is(err, ErrNewerSchema) || ctx.Err() != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	r.add(CheckImport, []string{strings.TrimPrefix(err.Error(), "import: ")}, 0)
	r.skip(CheckOrder, CheckContents)
	return nil, nil, nil
}

// checkDB runs Check and the content check on db, adding their results
// to r. A file damaged so badly that a check cannot read it is a problem
// found; any other failure is returned.
func checkDB(ctx context.Context, r *FileReport, db *DB, imported bool) error {
	rep, err := db.Check(ctx)
	if err != nil {
		if !damaged(err) {
			return err
		}
		r.add(CheckSQLite, []string{"reading the file failed: " + sqliteMessage(err)}, 0)
		r.skip(CheckOrder, CheckContents)
		return nil
	}
	r.Counted, r.Sessions, r.Streams, r.Frames = true, rep.Sessions, rep.Streams, rep.Frames
	if imported {
		r.add(CheckImport, nil, 0)
	} else {
		r.add(CheckSQLite, rep.Integrity, 0)
		r.add(CheckSchema, nil, 0) // Open checked it
	}
	r.add(CheckOrder, rep.Problems, rep.Omitted)
	if len(rep.Integrity) > 0 {
		r.skip(CheckContents)
		return nil
	}
	problems, omitted, err := db.checkFrameContents(ctx)
	switch {
	case err != nil && damaged(err):
		problems = append(problems, "reading the frames failed: "+sqliteMessage(err))
	case err != nil:
		return err
	}
	r.add(CheckContents, problems, omitted)
	return nil
}

// damaged reports whether err is SQLite finding the file damaged: its
// SQLITE_CORRUPT and SQLITE_NOTADB messages, which a file whose first
// bytes say SQLite gives when its pages or header are broken.
func damaged(err error) bool {
	if errors.Is(err, errBadPack) {
		return true // bytes of a pack that do not decode (see pack.go)
	}
	msg := err.Error()
	return strings.Contains(msg, "database disk image is malformed") || strings.Contains(msg, "file is not a database")
}

// sqliteMessage returns the SQLite part of a damaged-file error.
func sqliteMessage(err error) string {
	msg := err.Error()
	for _, m := range []string{"database disk image is malformed", "file is not a database"} {
		if strings.Contains(msg, m) {
			return m
		}
	}
	return msg
}
