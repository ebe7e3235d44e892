package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mcpvcr/mcpvcr/store"
)

func checkCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "check",
		Usage:     "check a cassette's integrity: the SQLite file, the order of its frames, their contents",
		ArgsUsage: "[CASSETTE]",
		Description: "Checks the cassette named by CASSETTE (or --cassette): a .db file or a .jsonl export.\n" +
			"   mcpvcr check bug.db\n" +
			"It runs SQLite's integrity check and foreign-key check, then checks that each session's\n" +
			"frames are numbered 1, 2, 3, ... without gaps, that their offsets never go back, that\n" +
			"each frame and resumed stream belongs to its session, and that each frame's bytes still\n" +
			"give the kind, id and method indexed for it. A recording cut short (kill -9, a full\n" +
			"disk) passes: what was committed is a gap-free prefix.\n\n" +
			"Exit status: 0 the cassette is sound; 1 problems were found (they are listed, as\n" +
			"diff lists differences); 3 the check could not run (no such file, not a cassette).",
		Flags: []cli.Flag{cassetteFlag()},
		Action: func(c *cli.Context) error {
			if c.NArg() > 1 {
				return usageErr("mcpvcr check [CASSETTE]", "check takes one cassette, got %d", c.NArg())
			}
			path := cassettePath(c)
			if c.NArg() == 1 {
				path = c.Args().First()
			}
			return runCheck(c.Context, e, path)
		},
	}
}

// checkReport is what check found in one file, section by section.
type checkReport struct {
	path, format string
	counts       string
	sections     []checkSection
}

// checkSection is one check and the problems it found.
type checkSection struct {
	name     string
	problems []string
	omitted  int
	skipped  bool // the check could not run because an earlier one failed
}

func (r *checkReport) add(name string, problems []string, omitted int) {
	r.sections = append(r.sections, checkSection{name: name, problems: problems, omitted: omitted})
}

func (r *checkReport) skip(names ...string) {
	for _, n := range names {
		r.sections = append(r.sections, checkSection{name: n, skipped: true})
	}
}

// failed reports whether the named check found problems.
func (r *checkReport) failed(name string) bool {
	for _, s := range r.sections {
		if s.name == name && (len(s.problems) > 0 || s.omitted > 0) {
			return true
		}
	}
	return false
}

// problems counts the problems found.
func (r *checkReport) problems() int {
	n := 0
	for _, s := range r.sections {
		n += len(s.problems) + s.omitted
	}
	return n
}

// write prints the report for people.
func (r *checkReport) write(w io.Writer) {
	fmt.Fprintf(w, "cassette %s (%s)\n", r.path, r.format)
	if r.counts != "" {
		fmt.Fprintf(w, "  %s\n", r.counts)
	}
	for _, s := range r.sections {
		switch {
		case s.skipped:
			fmt.Fprintf(w, "  --    %s: not checked\n", s.name)
		case len(s.problems) == 0 && s.omitted == 0:
			fmt.Fprintf(w, "  ok    %s\n", s.name)
		default:
			fmt.Fprintf(w, "  FAIL  %s: %s\n", s.name, plural(len(s.problems)+s.omitted, "problem"))
			for _, p := range s.problems {
				fmt.Fprintf(w, "          %s\n", p)
			}
			if s.omitted > 0 {
				fmt.Fprintf(w, "          and %d more\n", s.omitted)
			}
		}
	}
	if n := r.problems(); n > 0 {
		fmt.Fprintf(w, "result: %s\n", plural(n, "problem"))
	} else {
		fmt.Fprintln(w, "result: ok")
	}
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// The checks, as the report names them.
const (
	checkFile     = "SQLite file (integrity_check)"
	checkImport   = "JSONL export (every line imports)"
	checkOrder    = "references and frame order (seq 1..n, offsets, streams)"
	checkContents = "frame contents (bytes agree with the indexed kind, id, method)"
)

// runCheck checks the cassette at path, prints the report on stdout and
// returns an exit error: exit 1 for problems found, 3 when the check could
// not run.
func runCheck(ctx context.Context, e *env, path string) error {
	kind, err := sniff(path)
	if err != nil {
		return err
	}
	r := &checkReport{path: path}
	var db *store.DB
	if kind == "jsonl" {
		r.format = "JSONL export"
		var cleanup func()
		db, cleanup, err = importForCheck(ctx, r, path)
		if cleanup != nil {
			defer cleanup() // after db.Close, deferred below
		}
	} else {
		r.format = "SQLite cassette"
		db, err = store.Open(ctx, path)
		if err != nil && damaged(err) {
			r.add(checkFile, []string{"the file cannot be opened: " + sqliteMessage(err)}, 0)
			r.skip(checkOrder, checkContents)
			err, db = nil, nil
		} else if err != nil {
			return openErr(path, err)
		}
	}
	if err != nil {
		return err
	}
	if db != nil {
		defer db.Close()
		if err := checkDB(ctx, r, db, kind == "jsonl"); err != nil {
			return err
		}
	}
	r.write(e.stdout)
	if n := r.problems(); n > 0 {
		hint := "keep what is still readable: mcpvcr export --cassette " + path + " -o rescued.jsonl, then mcpvcr import rescued.jsonl --cassette new.db"
		switch {
		case kind == "jsonl":
			hint = "fix the lines named above (the file is text), or export the session again from its cassette"
		case r.failed(checkFile):
			hint = "salvage what SQLite can still read: sqlite3 " + path + " .recover | sqlite3 recovered.db, then mcpvcr check recovered.db"
		}
		return &exitError{code: exitDiffer, err: fmt.Errorf("cassette %s: %s found", path, plural(n, "problem")), hint: hint}
	}
	return nil
}

// sniff tells a SQLite file from a JSONL export by its first bytes, and
// fails with exit 3 for a file that is neither, or missing, or empty.
func sniff(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", failErr(fmt.Errorf("cassette %s does not exist", path),
				"name a cassette: mcpvcr check PATH (a .db cassette or a .jsonl export)")
		}
		return "", failErr(fmt.Errorf("open cassette %s: %w", path, err), "")
	}
	defer f.Close()
	head := make([]byte, 16)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	switch {
	case n == 0:
		return "", failErr(fmt.Errorf("cassette %s is empty (0 bytes): nothing has been recorded into it", path), "")
	case string(head) == "SQLite format 3\x00":
		return "db", nil
	case bytes.HasPrefix(bytes.TrimLeft(head, " \t\r\n"), []byte("{")):
		return "jsonl", nil
	}
	return "", failErr(fmt.Errorf("%s is neither a SQLite cassette nor a JSONL export: %w", path, store.ErrNotCassette),
		"name an mcpvcr cassette (a .db file mcpvcr wrote, or a .jsonl export)")
}

// importForCheck imports a JSONL export into a new cassette in a
// temporary directory. A line that does not import is a problem in the
// file (the report says which); a file that is no export at all cannot be
// checked. The DB is nil when the import failed; otherwise the caller
// must close it and then call cleanup, which removes the directory.
func importForCheck(ctx context.Context, r *checkReport, path string) (db *store.DB, cleanup func(), err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, failErr(fmt.Errorf("open %s: %w", path, err), "")
	}
	defer f.Close()
	dir, err := os.MkdirTemp("", "mcpvcr-check-")
	if err != nil {
		return nil, nil, failErr(fmt.Errorf("make a temporary cassette: %w", err), "")
	}
	cleanup = func() { os.RemoveAll(dir) }
	db, err = store.Open(ctx, filepath.Join(dir, "check.db"))
	if err != nil {
		cleanup()
		return nil, nil, failErr(fmt.Errorf("make a temporary cassette: %w", err), "check that "+os.TempDir()+" is writable")
	}
	_, err = db.Import(ctx, bufio.NewReader(f))
	if err == nil {
		return db, cleanup, nil
	}
	db.Close()
	cleanup()
	switch {
	case errors.Is(err, store.ErrNotExport):
		return nil, nil, failErr(fmt.Errorf("%s: %w", path, err), "name an mcpvcr cassette (a .db file mcpvcr wrote, or a .jsonl export)")
	case errors.Is(err, store.ErrNewerSchema):
		return nil, nil, failErr(fmt.Errorf("%s: %w", path, err), "install a newer mcpvcr: go install github.com/mcpvcr/mcpvcr/cmd/mcpvcr@latest")
	case ctx.Err() != nil:
		return nil, nil, failErr(err, "")
	}
	r.add(checkImport, []string{strings.TrimPrefix(err.Error(), "import: ")}, 0)
	r.skip(checkOrder, checkContents)
	return nil, nil, nil
}

// checkDB runs the store's checks and the content check on db, adding
// their sections to r. A file damaged so badly that a check cannot read
// it is a problem found; any other failure is returned.
func checkDB(ctx context.Context, r *checkReport, db *store.DB, imported bool) error {
	rep, err := db.Check(ctx)
	if err != nil {
		if !damaged(err) {
			return failErr(err, "")
		}
		r.add(checkFile, []string{"reading the file failed: " + sqliteMessage(err)}, 0)
		r.skip(checkOrder, checkContents)
		return nil
	}
	r.counts = fmt.Sprintf("%s, %s, %s", plural(int(rep.Sessions), "session"), plural(int(rep.Streams), "stream"), plural(int(rep.Frames), "frame"))
	if imported {
		r.add(checkImport, nil, 0)
	} else {
		r.add(checkFile, rep.Integrity, 0)
	}
	r.add(checkOrder, rep.Problems, rep.Omitted)
	if len(rep.Integrity) > 0 {
		r.skip(checkContents)
		return nil
	}
	problems, omitted, err := checkFrameContents(ctx, db)
	switch {
	case err != nil && damaged(err):
		problems = append(problems, "reading the frames failed: "+sqliteMessage(err))
	case err != nil:
		return failErr(err, "")
	}
	r.add(checkContents, problems, omitted)
	return nil
}

// damaged reports whether err is SQLite finding the file damaged: its
// SQLITE_CORRUPT and SQLITE_NOTADB messages, which a file whose first
// bytes say SQLite gives when its pages or header are broken.
func damaged(err error) bool {
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
