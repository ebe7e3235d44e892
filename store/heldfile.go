package store

import (
	"io"
	"os"
	"slices"
	"sync"
)

// Closing any descriptor of a file drops every POSIX advisory lock this
// process holds on it, SQLite's included: SQLite keeps its own
// descriptors open for that reason, but cannot know of ours (see
// "How To Corrupt An SQLite Database File", §2.2). A cassette in WAL mode
// whose SHARED lock is dropped looks closed to other processes: the last
// of them to close checkpoints it and deletes its -wal and -shm files
// while this process still writes to them, and those writes are lost.
//
// So this package never closes a descriptor of a cassette that a DB of
// this process has open: the descriptor a DB is opened with is held until
// the last DB of this process on that file closes, and every read of a
// cassette's first bytes (Sniff, Probe, a second Open) goes through a
// held descriptor when there is one.

// heldFile is a descriptor held for the DBs of this process that have
// its file open.
type heldFile struct {
	f    *os.File
	fi   os.FileInfo
	refs int
}

// held is the descriptors held, one per file.
var held struct {
	sync.Mutex
	files []*heldFile
}

// lookupHeld returns the descriptor held for the file at path, or nil.
// held must be locked.
func lookupHeld(path string) *heldFile {
	fi, err := os.Stat(path)
	if err != nil {
		return nil
	}
	for _, h := range held.files {
		if os.SameFile(h.fi, fi) {
			return h
		}
	}
	return nil
}

// holdFile returns a reference to a descriptor of the file at abs, for a
// DB about to open it: the one held already, or a new one, opened
// read-write (creating the file, 0600) when write is set and read-only
// otherwise. The DB calls release once its connections are closed.
func holdFile(abs string, write bool) (*heldFile, error) {
	held.Lock()
	defer held.Unlock()
	if h := lookupHeld(abs); h != nil {
		h.refs++
		return h, nil
	}
	flag := os.O_RDONLY
	if write {
		flag = os.O_RDWR | os.O_CREATE
	}
	f, err := os.OpenFile(abs, flag, 0o600)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	h := &heldFile{f: f, fi: fi, refs: 1}
	held.files = append(held.files, h)
	return h, nil
}

// release gives back a reference from holdFile; the last one closes the
// descriptor. Calling it on nil does nothing.
func (h *heldFile) release() {
	if h == nil {
		return
	}
	held.Lock()
	defer held.Unlock()
	if h.refs--; h.refs > 0 {
		return
	}
	held.files = slices.DeleteFunc(held.files, func(o *heldFile) bool { return o == h })
	h.f.Close()
}

// readHead returns the first n bytes of the file at path, fewer if it is
// shorter: through the descriptor held for it when a DB of this process
// has it open, else through one of its own, which it closes (no DB of
// this process can take a lock on the file meanwhile: holdFile waits).
func readHead(path string, n int) ([]byte, error) {
	held.Lock()
	defer held.Unlock()
	var ra io.ReaderAt
	if h := lookupHeld(path); h != nil {
		ra = h.f
	} else {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		ra = f
	}
	buf := make([]byte, n)
	k, err := ra.ReadAt(buf, 0)
	if err == io.EOF {
		err = nil
	}
	return buf[:k], err
}
