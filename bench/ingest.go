package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcpvcr/mcpvcr/store"
)

// ingest appends n frames of size bytes to one session of a new cassette
// in dir, one Append each, then waits for them with Flush. It returns the
// frames per second, counting from the first Append to the end of Flush.
func ingest(ctx context.Context, dir string, size, n int) (float64, error) {
	path := filepath.Join(dir, fmt.Sprintf("ingest-%d.db", size))
	defer removeCassette(path)
	return ingestInto(ctx, path, size, n)
}

// ingestInto is ingest into a new session of the cassette at path, which
// may exist.
func ingestInto(ctx context.Context, path string, size, n int) (float64, error) {
	db, err := store.Open(ctx, path)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	s := &store.Session{Transport: store.Stdio, Name: "ingest"}
	if err := db.CreateSession(ctx, s); err != nil {
		return 0, err
	}
	st := &store.Stream{SessionID: s.ID, Kind: store.StdoutStream}
	if err := db.OpenStream(ctx, st); err != nil {
		return 0, err
	}
	tmpl := store.Frame{SessionID: s.ID, StreamID: st.ID, Direction: store.ServerToClient, Raw: notification(size)}
	tmpl.Derive(st.Kind)
	start := time.Now()
	for i := range n {
		f := new(store.Frame)
		*f = tmpl
		f.Seq = int64(i + 1)
		f.Offset = time.Since(start)
		if err := db.Append(ctx, f); err != nil {
			return 0, err
		}
	}
	if err := db.Flush(ctx); err != nil {
		return 0, err
	}
	rate := float64(n) / time.Since(start).Seconds()
	return rate, db.Close()
}

// notification returns a JSON-RPC notification line of size bytes.
func notification(size int) []byte {
	const head, tail = `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"`, `"}}` + "\n"
	return []byte(head + strings.Repeat("x", max(0, size-len(head)-len(tail))) + tail)
}

// removeCassette removes a cassette file and its SQLite side files.
func removeCassette(path string) {
	for _, suffix := range []string{"", "-wal", "-shm"} {
		os.Remove(path + suffix)
	}
}
