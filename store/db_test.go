package store_test

import (
	"context"
	"database/sql"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	_ "github.com/mattn/go-sqlite3"

	"github.com/mcpvcr/mcpvcr/store"
)

func TestDB_RoundTrip(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "cassette.db")
	d, err := store.Open(ctx, path)
	must(t, err)
	want := recordSample(t, d)
	must(t, d.Close())

	// Read it back through a new handle, so nothing comes from memory.
	d = openPath(t, path)
	got, err := d.Sessions(ctx)
	must(t, err)
	if diff := cmp.Diff(want.sessions, got); diff != "" {
		t.Errorf("Sessions() mismatch (-want +got):\n%s", diff)
	}
	for _, s := range want.sessions {
		one, err := d.Session(ctx, s.ID)
		must(t, err)
		if diff := cmp.Diff(s, one); diff != "" {
			t.Errorf("Session(%d) mismatch (-want +got):\n%s", s.ID, diff)
		}
		sts, err := d.Streams(ctx, s.ID)
		must(t, err)
		if diff := cmp.Diff(want.streams[s.ID], sts); diff != "" {
			t.Errorf("Streams(%d) mismatch (-want +got):\n%s", s.ID, diff)
		}
		fs, err := d.Frames(ctx, s.ID)
		must(t, err)
		if diff := cmp.Diff(want.frames[s.ID], fs); diff != "" {
			t.Errorf("Frames(%d) mismatch (-want +got):\n%s", s.ID, diff)
		}
	}
	r, err := d.Check(ctx)
	must(t, err)
	if !r.OK() {
		t.Errorf("Check() = %s", r)
	}
}

func TestDB_RoundTripDerived(t *testing.T) {
	// Spot checks that the sample holds what it claims to, so that the
	// round trip above is not comparing empty fields.
	d := openDB(t)
	smp := recordSample(t, d)
	fs := smp.frames[smp.sessions[0].ID]
	tests := []struct {
		name string
		got  any
		want any
	}{
		{"BatchMembers", len(fs[4].Members), 3},
		{"BatchMemberID", fs[4].Members[0].ID, `"a"`},
		{"BatchMemberMethod", fs[4].Members[1].Method, "notifications/cancelled"},
		{"PrimingData", fs[1].Data == nil, true},
		{"SSEData", string(fs[2].Data), `{"jsonrpc":"2.0","id":1,"result":{}}`},
		{"Malformed", fs[5].Malformed, true},
		{"CommentNotMalformed", fs[3].Malformed, false},
		{"EmptyEventID", fs[7].HasEventID, true},
		{"RetryZero", fs[8].Retry, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("got %v; want %v", tt.got, tt.want)
			}
		})
	}
}

func TestOpen_NewFile(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.db")
	must(t, os.WriteFile(empty, nil, 0o644))
	tests := []struct {
		name string
		path string
	}{
		{"Missing", filepath.Join(dir, "new.db")},
		{"ZeroBytes", empty},
		{"OddCharacters", filepath.Join(dir, "a?b#c%20d.db")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := store.Open(ctx, tt.path)
			must(t, err)
			s := &store.Session{Transport: store.Stdio}
			must(t, d.CreateSession(ctx, s))
			must(t, d.Close())
			d = openPath(t, tt.path)
			ss, err := d.Sessions(ctx)
			must(t, err)
			if got, want := len(ss), 1; got != want {
				t.Errorf("len(Sessions()) = %d; want %d", got, want)
			}
		})
	}
}

func TestOpen_NotCassette(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	text := filepath.Join(dir, "notes.txt")
	must(t, os.WriteFile(text, []byte("hello, world\n"), 0o644))
	short := filepath.Join(dir, "short")
	must(t, os.WriteFile(short, []byte("SQL"), 0o644))
	other := filepath.Join(dir, "other.db")
	db, err := sql.Open("sqlite3", other)
	must(t, err)
	_, err = db.Exec("CREATE TABLE users (name TEXT); INSERT INTO users VALUES ('ann')")
	must(t, err)
	must(t, db.Close())

	for _, path := range []string{text, short, other} {
		t.Run(filepath.Base(path), func(t *testing.T) {
			before, err := os.ReadFile(path)
			must(t, err)
			_, err = store.Open(ctx, path)
			if !errors.Is(err, store.ErrNotCassette) {
				t.Fatalf("Open(%q) = %v; want ErrNotCassette", path, err)
			}
			if !strings.Contains(err.Error(), path) {
				t.Errorf("Open(%q) = %q; want the path in the message", path, err)
			}
			after, err := os.ReadFile(path)
			must(t, err)
			if string(before) != string(after) {
				t.Errorf("Open(%q) changed the file", path)
			}
		})
	}
}

func TestOpen_NewerSchema(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "future.db")
	d, err := store.Open(ctx, path)
	must(t, err)
	must(t, d.Close())
	db, err := sql.Open("sqlite3", path)
	must(t, err)
	_, err = db.Exec("PRAGMA user_version = 99")
	must(t, err)
	must(t, db.Close())

	_, err = store.Open(ctx, path)
	if !errors.Is(err, store.ErrNewerSchema) {
		t.Fatalf("Open() = %v; want ErrNewerSchema", err)
	}
	for _, want := range []string{path, "99", "newer mcpvcr"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Open() = %q; want it to mention %q", err, want)
		}
	}
}

func TestOpen_Unwritable(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	must(t, os.WriteFile(file, nil, 0o644))
	tests := []struct {
		name string
		path string
		want error
	}{
		{"MissingDir", filepath.Join(dir, "no", "such", "dir", "c.db"), fs.ErrNotExist},
		{"ParentIsFile", filepath.Join(file, "c.db"), syscall.ENOTDIR},
		{"Directory", dir, syscall.EISDIR},
	}
	if os.Geteuid() != 0 { // root may write anywhere
		ro := filepath.Join(dir, "ro")
		must(t, os.Mkdir(ro, 0o555))
		tests = append(tests, struct {
			name string
			path string
			want error
		}{"ReadOnlyDir", filepath.Join(ro, "c.db"), fs.ErrPermission})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := store.Open(ctx, tt.path)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Open(%q) = %v; want %v", tt.path, err, tt.want)
			}
			if !strings.Contains(err.Error(), tt.path) {
				t.Errorf("Open(%q) = %q; want the path in the message", tt.path, err)
			}
		})
	}
}

func TestOpen_IDsNotReused(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "c.db")
	d, err := store.Open(ctx, path)
	must(t, err)
	a, b := &store.Session{Transport: store.Stdio}, &store.Session{Transport: store.Stdio}
	must(t, d.CreateSession(ctx, a))
	must(t, d.CreateSession(ctx, b))
	st := newStdioStream(t, d, b.ID, store.StdinStream)
	must(t, d.Flush(ctx))
	must(t, d.DeleteSession(ctx, b.ID))
	must(t, d.Close())

	d = openPath(t, path)
	c := &store.Session{Transport: store.Stdio}
	must(t, d.CreateSession(ctx, c))
	st2 := newStdioStream(t, d, c.ID, store.StdinStream)
	if got, want := c.ID, b.ID+1; got != want {
		t.Errorf("CreateSession after reopen: ID = %d; want %d", got, want)
	}
	if got, want := st2.ID, st.ID+1; got != want {
		t.Errorf("OpenStream after reopen: ID = %d; want %d", got, want)
	}
}

func TestDB_Close(t *testing.T) {
	ctx := context.Background()
	before := runtime.NumGoroutine()
	d, err := store.Open(ctx, filepath.Join(t.TempDir(), "c.db"))
	must(t, err)
	recordSample(t, d)
	_, err = d.Frames(ctx, 1)
	must(t, err)
	must(t, d.Close())
	must(t, d.Close()) // twice is harmless

	s := &store.Session{Transport: store.Stdio}
	if err := d.CreateSession(ctx, s); !errors.Is(err, store.ErrClosed) {
		t.Errorf("CreateSession after Close = %v; want ErrClosed", err)
	}
	if _, err := d.Sessions(ctx); !errors.Is(err, store.ErrClosed) {
		t.Errorf("Sessions after Close = %v; want ErrClosed", err)
	}
	if err := d.Flush(ctx); !errors.Is(err, store.ErrClosed) {
		t.Errorf("Flush after Close = %v; want ErrClosed", err)
	}

	// database/sql stops its connection openers asynchronously after
	// Close, so give them a moment, without sleeping.
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		runtime.Gosched()
	}
	if got := runtime.NumGoroutine(); got > before {
		buf := make([]byte, 1<<16)
		t.Errorf("goroutines after Close = %d; want at most %d\n%s", got, before, buf[:runtime.Stack(buf, true)])
	}
}
