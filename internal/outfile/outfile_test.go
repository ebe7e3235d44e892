package outfile_test

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/mcpvcr/mcpvcr/internal/outfile"
)

func TestCreate_RefusesInputs(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "c.db")
	if err := os.WriteFile(db, []byte("cassette"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(db, filepath.Join(dir, "link.jsonl")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dir, filepath.Join(dir, "sub")); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{
		db,
		filepath.Join(dir, ".", "c.db"),
		filepath.Join(dir, "link.jsonl"),      // a link to the input
		filepath.Join(dir, "c.db-wal"),        // does not exist yet
		filepath.Join(dir, "sub", "c.db-shm"), // through a linked folder
	} {
		f, err := outfile.Create(out, db)
		if !errors.Is(err, outfile.ErrInput) {
			if f != nil {
				f.Abort()
			}
			t.Errorf("Create(%q, %q) = %v; want ErrInput", out, db, err)
		}
	}
	if b, _ := os.ReadFile(db); string(b) != "cassette" {
		t.Errorf("the input holds %q after the refusals", b)
	}
}

func TestFile_CommitAndAbort(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.jsonl")
	if err := os.WriteFile(out, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := outfile.Create(out, filepath.Join(dir, "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("half")
	f.Abort()
	if b, _ := os.ReadFile(out); string(b) != "old" {
		t.Errorf("after Abort the output holds %q; want the old %q", b, "old")
	}
	f, err = outfile.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("new")
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	f.Abort() // harmless after Commit
	if b, _ := os.ReadFile(out); string(b) != "new" {
		t.Errorf("after Commit the output holds %q; want %q", b, "new")
	}
	fi, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fi.Mode().Perm(), outfile.Mode; got != want {
		t.Errorf("mode of the output = %v; want %v", got, want)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("the folder holds %d files; want only the output (no temporary left)", len(ents))
	}
}

// TestCreate_NotRegular: a named pipe (as /dev/stdout may be) is
// written directly, never replaced.
func TestCreate_NotRegular(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	got := make(chan []byte, 1)
	go func() {
		b, _ := os.ReadFile(fifo)
		got <- b
	}()
	f, err := outfile.Create(fifo)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("through the pipe")
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if b := <-got; string(b) != "through the pipe" {
		t.Errorf("the reader got %q", b)
	}
	fi, err := os.Lstat(fifo)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("%s is no longer a named pipe after Commit: %v", fifo, fi.Mode())
	}
}
