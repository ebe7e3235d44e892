//go:build unix

package store

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// sqliteShared is the byte range of SQLite's SHARED locks on a database
// file (os_unix.c: SHARED_FIRST, SHARED_SIZE).
const sqliteSharedFirst, sqliteSharedSize = 0x40000002, 510

// TestHeldFile_LockProbe is the child of TestHeldFile_LocksSurvive: it
// reports whether another process holds a lock on the SHARED range of
// the file MCPVCR_LOCK_PROBE names.
func TestHeldFile_LockProbe(t *testing.T) {
	path := os.Getenv("MCPVCR_LOCK_PROBE")
	if path == "" {
		t.Skip("the child of TestHeldFile_LocksSurvive")
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: 0, Start: sqliteSharedFirst, Len: sqliteSharedSize}
	if err := syscall.FcntlFlock(f.Fd(), syscall.F_GETLK, &lk); err != nil {
		t.Fatal(err)
	}
	if lk.Type == syscall.F_UNLCK {
		os.Stdout.WriteString("LOCK=none\n")
	} else {
		os.Stdout.WriteString("LOCK=held\n")
	}
}

// TestHeldFile_LocksSurvive: while a DB of this process has a cassette
// open, opening the same file again (OpenFile, as ls or replay do, and
// closing that), Sniff and Probe must not drop the DB's SQLite locks,
// which another process sees; without them, the last other process to
// close the cassette deletes its -wal while this one still writes to it.
func TestHeldFile_LocksSurvive(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "c.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// A read keeps a connection, and its SHARED lock, open.
	if _, err := db.Sessions(ctx); err != nil {
		t.Fatal(err)
	}
	probe := func() string {
		t.Helper()
		cmd := exec.Command(os.Args[0], "-test.run=^TestHeldFile_LockProbe$", "-test.v")
		cmd.Env = append(os.Environ(), "MCPVCR_LOCK_PROBE="+path)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("lock probe: %v\n%s", err, out)
		}
		switch {
		case strings.Contains(string(out), "LOCK=held"):
			return "held"
		case strings.Contains(string(out), "LOCK=none"):
			return "none"
		}
		t.Fatalf("lock probe said nothing:\n%s", out)
		return ""
	}
	if got := probe(); got != "held" {
		t.Fatalf("with the cassette open, another process sees lock %s; want held (is the probe right?)", got)
	}
	again, err := OpenFile(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := again.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := Sniff(path); err != nil {
		t.Fatal(err)
	}
	if err := Probe(path); err != nil {
		t.Fatal(err)
	}
	if got := probe(); got != "held" {
		t.Errorf("after OpenFile, Close, Sniff and Probe of the same file, another process sees lock %s; want held: a descriptor of ours was closed", got)
	}
}
