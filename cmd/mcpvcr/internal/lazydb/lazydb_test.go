package lazydb

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/mcpvcr/mcpvcr/store"
)

// TestDB_WaitsForOpen: a call made while the cassette opens waits for it
// (or for its ctx), and then reaches the cassette.
func TestDB_WaitsForOpen(t *testing.T) {
	release := make(chan struct{})
	path := filepath.Join(t.TempDir(), "c.db")
	l := Open(func() (*store.DB, error) {
		<-release
		return store.Open(context.Background(), path)
	})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := l.CreateSession(ctx, &store.Session{Transport: store.Stdio}); !errors.Is(err, context.Canceled) {
		t.Fatalf("CreateSession before the open, ctx done = %v; want context.Canceled", err)
	}
	close(release)
	s := &store.Session{Transport: store.Stdio}
	if err := l.CreateSession(context.Background(), s); err != nil || s.ID == 0 {
		t.Fatalf("CreateSession = %v, id %d; want a session", err, s.ID)
	}
	if err := l.OpenErr(); err != nil {
		t.Errorf("OpenErr = %v", err)
	}
	if err := l.Close(); err != nil {
		t.Errorf("Close = %v", err)
	}
}

// TestDB_OpenFails: every call, and Close, returns the open's error.
func TestDB_OpenFails(t *testing.T) {
	bad := errors.New("locked")
	l := Open(func() (*store.DB, error) { return nil, bad })
	if err := l.Append(context.Background(), &store.Frame{}); !errors.Is(err, bad) {
		t.Errorf("Append = %v; want %v", err, bad)
	}
	if err := l.Close(); !errors.Is(err, bad) {
		t.Errorf("Close = %v; want %v", err, bad)
	}
	if err := l.OpenErr(); !errors.Is(err, bad) {
		t.Errorf("OpenErr = %v; want %v", err, bad)
	}
}
