package view_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpvcr/mcpvcr/internal/causal"
	"github.com/mcpvcr/mcpvcr/store"
)

// cassette imports a committed cassette and returns its first session.
func cassette(t testing.TB, name string) *store.Recording {
	t.Helper()
	in, err := os.ReadFile(filepath.Join("..", "cassettes", name))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "cassette.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ids, err := db.Import(ctx, bytes.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	r, err := db.Recording(ctx, ids[0])
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// synthetic builds a stdio session of n frames: tools/call requests with
// their results, a progress notification now and then, and stderr lines.
func synthetic(n int) *store.Recording {
	r := &store.Recording{
		Session: store.Session{ID: 1, Name: "synthetic", Transport: store.Stdio, Revision: "2025-06-18", Era: "legacy",
			Upstream: "./server", StartedAt: time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)},
		Streams: []store.Stream{{ID: 1, Kind: store.StdinStream}, {ID: 2, Kind: store.StdoutStream}, {ID: 3, Kind: store.StderrStream}},
	}
	r.Session.EndedAt = r.Session.StartedAt.Add(time.Duration(n) * time.Millisecond)
	add := func(stream int64, dir store.Direction, raw string) {
		seq := int64(len(r.Frames) + 1)
		f := store.Frame{SessionID: 1, StreamID: stream, Seq: seq, Direction: dir, Offset: time.Duration(seq) * time.Millisecond, Raw: []byte(raw)}
		f.Derive(r.Streams[stream-1].Kind)
		r.Frames = append(r.Frames, f)
	}
	for id := 1; len(r.Frames) < n; id++ {
		switch {
		case id%50 == 0:
			add(3, store.ServerToClient, fmt.Sprintf("server: handled %d calls\n", id))
		case id%10 == 0:
			add(2, store.ServerToClient, fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%d,"progress":%d,"total":100}}`+"\n", id-1, id%100))
		default:
			add(1, store.ClientToServer, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"add","arguments":{"a":%d,"b":%d},"_meta":{"progressToken":%d}}}`+"\n", id, id, 2*id, id))
			if len(r.Frames) < n {
				add(2, store.ServerToClient, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"the sum of %d and %d is %d"}],"structuredContent":{"sum":%d}}}`+"\n", id, id, 2*id, 3*id, 3*id))
			}
		}
	}
	for i := range r.Streams {
		r.Streams[i].SessionID, r.Streams[i].Closed, r.Streams[i].End = 1, time.Duration(n+1)*time.Millisecond, store.EndComplete
	}
	return r
}

// countMethod counts the frames a method filter keeps: the method's
// requests and notifications, and the answers to its requests.
func countMethod(r *store.Recording, method string) int {
	links := causal.Link(r)
	n := 0
	for _, f := range r.Frames {
		if f.Method == method || links.Method[f.Seq] == method {
			n++
		}
	}
	return n
}

func closingScripts(page string) int { return strings.Count(strings.ToLower(page), "</script") }

// must fails the test at once on err.
func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// openDB opens a fresh cassette, closed at the end of the test.
func openDB(t testing.TB) *store.DB {
	t.Helper()
	d, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "cassette.db"))
	if err != nil {
		t.Fatalf("Open() = %v", err)
	}
	t.Cleanup(func() {
		if err := d.Close(); err != nil {
			t.Errorf("Close() = %v", err)
		}
	})
	return d
}
