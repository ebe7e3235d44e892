// Command locker holds the write lock of a cassette, as a busy recorder
// sharing it would, for the tests of mcpvcr record under contention:
//
//	locker CASSETTE
//
// It opens the cassette and starts an import from its stdin, which holds
// the write lock in one transaction while it reads; it prints "locked"
// once the lock is held and lets go when stdin ends (the empty import is
// refused and rolled back).
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/mcpvcr/mcpvcr/store"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: locker CASSETTE")
		os.Exit(2)
	}
	ctx := context.Background()
	db, err := store.Open(ctx, os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "locker:", err)
		os.Exit(1)
	}
	_, _ = db.Import(ctx, &signalReader{r: os.Stdin})
	if err := db.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "locker:", err)
		os.Exit(1)
	}
}

// signalReader prints "locked" at its first Read: Import reads inside its
// transaction, which holds the lock.
type signalReader struct {
	r    io.Reader
	once sync.Once
}

func (s *signalReader) Read(p []byte) (int, error) {
	s.once.Do(func() { fmt.Println("locked") })
	return s.r.Read(p)
}
