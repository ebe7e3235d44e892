package store

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Format is what a cassette file holds.
type Format int

// Formats. Zero is unknown.
const (
	FormatUnknown Format = iota
	SQLite               // a cassette: a SQLite database
	JSONL                // a JSONL export (see Export)
)

// String returns "SQLite cassette", "JSONL export" or "unknown".
func (f Format) String() string {
	switch f {
	case SQLite:
		return "SQLite cassette"
	case JSONL:
		return "JSONL export"
	}
	return "unknown"
}

// sniffLen is how many bytes Sniff looks at.
const sniffLen = 512

// Sniff tells a cassette from a JSONL export by the first bytes of the file
// at path: the SQLite header, or a '{' after optional white space. It is
// the one place that decides; OpenFile, import and check all use it. An
// empty file is ErrEmpty; any other file is ErrNotCassette.
func Sniff(path string) (Format, error) {
	head, err := readHead(path, sniffLen)
	if err != nil {
		return FormatUnknown, err
	}
	return sniff(bufio.NewReaderSize(bytes.NewReader(head), sniffLen))
}

// sniff reads the format from the start of br without consuming it.
func sniff(br *bufio.Reader) (Format, error) {
	head, err := br.Peek(sniffLen)
	if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
		return FormatUnknown, err
	}
	switch {
	case len(head) == 0:
		return FormatUnknown, ErrEmpty
	case bytes.HasPrefix(head, []byte(sqliteMagic)):
		return SQLite, nil
	case bytes.HasPrefix(bytes.TrimLeft(head, " \t\r\n"), []byte("{")):
		return JSONL, nil
	}
	return FormatUnknown, fmt.Errorf("%w (neither a SQLite cassette nor a JSONL export)", ErrNotCassette)
}

// OpenFile opens an existing cassette file or JSONL export, telling them
// apart with Sniff. A cassette that cannot be opened for writing (on a
// read-only file system, a full disk, another user's file) is opened
// read-only (see ReadOnly). A JSONL export is imported into a new
// temporary cassette, which Close removes; changes to it are not written
// back to the export (see Temporary). The caller must call Close.
func OpenFile(ctx context.Context, path string) (*DB, error) {
	// A cassette is sniffed without a descriptor of this function's own:
	// closing one would drop the locks of the DB it opens (heldfile.go).
	format, err := Sniff(path)
	var pe *fs.PathError
	switch {
	case errors.As(err, &pe):
		return nil, fmt.Errorf("open cassette: %w", err)
	case err != nil:
		return nil, fmt.Errorf("open cassette %s: %w", path, err)
	case format == SQLite:
		return openExisting(ctx, path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open cassette: %w", err)
	}
	defer f.Close()
	dir, err := os.MkdirTemp("", "mcpvcr-*")
	if err != nil {
		return nil, fmt.Errorf("open cassette %s: %w", path, err)
	}
	d, err := Open(ctx, filepath.Join(dir, "cassette.db"))
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("open cassette %s: %w", path, err)
	}
	d.removeDir = dir
	if _, err := d.Import(ctx, f); err != nil { // a file: Import measures a long line before it reads it
		d.Close()
		return nil, fmt.Errorf("open cassette %s: %w", path, err)
	}
	return d, nil
}

// Temporary reports whether d is the temporary cassette OpenFile made
// from a JSONL export: what is written to it is lost at Close.
func (d *DB) Temporary() bool { return d.removeDir != "" }
