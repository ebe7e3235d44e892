// Package outfile writes an output file safely: never over one of the
// inputs, and all at once. Create writes to a temporary file in the
// output's folder, created 0600; Commit renames it over the output, and
// Abort (or a failed Commit) removes it, so that a failed write neither
// leaves half a file nor clobbers the old one.
//
//	f, err := outfile.Create("out.jsonl", "c.db")
//	if err != nil {
//		return err // errors.Is(err, outfile.ErrInput) when out.jsonl is c.db
//	}
//	defer f.Abort()
//	if err := write(f); err != nil {
//		return err
//	}
//	return f.Commit()
package outfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// ErrInput means the output path names an input: the same file, or a
// SQLite cassette's -wal, -shm or -journal file.
var ErrInput = errors.New("the output is an input")

// Mode is the permission of every file Create writes: outputs may hold
// private data.
const Mode os.FileMode = 0o600

// File is an output being written. Write to it as to an *os.File; it is
// not safe for concurrent use.
type File struct {
	*os.File
	path string // the output's path, as given
	temp bool   // File is a temporary file that Commit renames to path
	done bool
}

// Create starts writing the file at path. It fails with an error that
// wraps ErrInput when path is one of the inputs named by protect (or its
// -wal, -shm or -journal file), compared with os.SameFile when both
// exist and by their cleaned absolute paths otherwise. It writes to a
// temporary file in path's folder, mode 0600, until Commit. A path that
// exists and is not a regular file, such as /dev/stdout or a named pipe,
// is opened and written directly, if it is still the file it was when
// Create looked (a link swapped in between is refused, never written
// through). The caller must call Commit or Abort.
func Create(path string, protect ...string) (*File, error) {
	if err := check(path, protect); err != nil {
		return nil, err
	}
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		f, err := openDirect(path, fi)
		if err != nil {
			return nil, err
		}
		return &File{File: f, path: path}, nil
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	if err := f.Chmod(Mode); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	return &File{File: f, path: path, temp: true}, nil
}

// ErrChanged means the output path named another file when it was
// opened than when it was looked at: a link swapped in between, say.
var ErrChanged = errors.New("the output changed while it was opened")

// beforeOpen, if set (by tests), runs between the look at a path that is
// not a regular file and its opening.
var beforeOpen func()

// openDirect opens path, which was fi (not a regular file: a device, a
// pipe), to write to it. It neither creates nor truncates: if a link
// was swapped in at path since fi, to a regular file, opening it writes
// nothing. It then checks the descriptor: a file other than fi is
// closed and refused.
func openDirect(path string, fi os.FileInfo) (*os.File, error) {
	if beforeOpen != nil {
		beforeOpen()
	}
	f, err := os.OpenFile(path, os.O_WRONLY, Mode)
	if err != nil {
		return nil, err
	}
	got, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if got.Mode().IsRegular() || !os.SameFile(got, fi) {
		f.Close()
		return nil, fmt.Errorf("%s: %w (a link swapped in?): refused, nothing written", path, ErrChanged)
	}
	return f, nil
}

// Check fails as Create does, with an error wrapping ErrInput, when path
// is one of the inputs named by protect or their SQLite companions; for
// outputs that cannot be written through a File, such as a SQLite
// database made at a temporary path and renamed.
func Check(path string, protect ...string) error { return check(path, protect) }

// check fails when path is one of the inputs or their SQLite companions.
func check(path string, inputs []string) error {
	out, err := canonical(path)
	if err != nil {
		return err
	}
	outInfo, outErr := os.Stat(path)
	for _, in := range inputs {
		if in == "" {
			continue
		}
		for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
			p := in + suffix
			abs, err := canonical(p)
			if err != nil {
				return err
			}
			same := abs == out
			if !same && outErr == nil {
				if fi, err := os.Stat(p); err == nil {
					same = os.SameFile(fi, outInfo)
				}
			}
			if same {
				return fmt.Errorf("%s: %w (%s)", path, ErrInput, p)
			}
		}
	}
	return nil
}

// canonical is the absolute path of p with the symbolic links of its
// folder resolved: the name of a file that may not exist yet.
func canonical(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	if dir, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		return filepath.Join(dir, filepath.Base(abs)), nil
	}
	return abs, nil
}

// Commit syncs and closes the file and renames it to its path, replacing
// any file there. After a failed Commit the path is as it was before
// Create. Commit after Commit or Abort does nothing.
func (f *File) Commit() error {
	if f.done {
		return nil
	}
	f.done = true
	if !f.temp {
		return f.File.Close()
	}
	err := f.File.Sync()
	if cerr := f.File.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.File.Name(), f.path)
	}
	if err != nil {
		os.Remove(f.File.Name())
		return fmt.Errorf("write %s: %w", f.path, err)
	}
	return nil
}

// Abort closes and removes the temporary file, leaving the path as it
// was before Create. It does nothing after Commit or Abort, so that it
// can be deferred.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	f.File.Close()
	if f.temp {
		os.Remove(f.File.Name())
	}
}
