package main

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
	"github.com/mcpvcr/mcpvcr/store"
)

// TestRecord_ManyRecorders starts 8 mcpvcr record processes at the same
// instant on one cassette, as a client app starts one per configured
// server, each with the Go SDK test server behind it and a Go SDK client
// in front, for 20 rounds: even rounds on a new file, odd rounds on the
// file of the round before. Meanwhile another process runs ls, show and
// replay on the same file. Every session must be recorded whole, and
// mcpvcr check must find nothing.
//
// The first two rounds run the binary built with the race detector; the
// others a plain build, which starts and runs ten times faster: the
// detector's value is in-process, where TestDB_ManyWriters in store
// covers the same paths.
func TestRecord_ManyRecorders(t *testing.T) {
	parallel(t)
	const recorders, rounds, raceRounds = 8, 20, 2
	if testing.Short() {
		t.Skip("starts 360 processes")
	}
	server := mcptest.BuildServer(t)
	plain := plainBin(t)
	dir := t.TempDir()
	var db string
	for round := range rounds {
		if round%2 == 0 {
			db = filepath.Join(dir, fmt.Sprintf("r%02d.db", round))
		}
		bin := mcpvcrBin
		if round >= raceRounds {
			bin = plain
		}
		ok := t.Run(fmt.Sprintf("round%02d", round), func(t *testing.T) {
			ctx := testCtx(t)
			start := make(chan struct{})
			var wg sync.WaitGroup
			errs := make(chan error, recorders)
			for c := range recorders {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					errs <- recordOne(ctx, bin, db, fmt.Sprintf("round%02d-rec%d", round, c), server)
				}()
			}
			// On a file that already holds sessions, read it with other
			// processes while the recorders write.
			stopReading := make(chan struct{})
			readDone := make(chan error, 1)
			if round%2 == 1 {
				go func() { readDone <- readWhileRecording(ctx, bin, db, stopReading) }()
			} else {
				readDone <- nil
			}
			close(start) // the barrier: every recorder starts now
			wg.Wait()
			close(stopReading)
			close(errs)
			for err := range errs {
				if err != nil {
					t.Error(err)
				}
			}
			if err := <-readDone; err != nil {
				t.Error(err)
			}
			checkAllRecorded(t, bin, db, (round%2+1)*recorders)
		})
		if !ok {
			break
		}
	}
}

// recordOne runs one recorder in front of server, driven by a Go SDK
// client that lists tools and calls echo.
func recordOne(ctx context.Context, bin, db, name, server string) error {
	var stderr bytes.Buffer
	rec := exec.Command(bin, "record", "--cassette", db, "--name", name, "--", server)
	rec.Stderr = &stderr
	cs, err := mcptest.NewClient().Connect(ctx, &mcp.CommandTransport{Command: rec}, nil)
	if err != nil {
		return fmt.Errorf("%s: connect: %w; stderr:\n%s", name, err, stderr.String())
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		cs.Close()
		return fmt.Errorf("%s: tools/list: %w", name, err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": name}})
	if err != nil {
		cs.Close()
		return fmt.Errorf("%s: tools/call echo: %w", name, err)
	}
	if res.IsError {
		cs.Close()
		return fmt.Errorf("%s: tools/call echo: error result %v", name, res.Content)
	}
	if err := cs.Close(); err != nil {
		return fmt.Errorf("%s: close: %w; stderr:\n%s", name, err, stderr.String())
	}
	if code := rec.ProcessState.ExitCode(); code != 0 {
		return fmt.Errorf("%s: mcpvcr record exited %d; stderr:\n%s", name, code, stderr.String())
	}
	return nil
}

// readWhileRecording runs mcpvcr ls, show 1 and replay 1 (with a client
// that lists tools) on db, one after the other, until stop is closed, and
// at least once each. Each must succeed.
func readWhileRecording(ctx context.Context, bin, db string, stop <-chan struct{}) error {
	for {
		for _, args := range [][]string{{"ls"}, {"show", "1"}} {
			cmd := exec.Command(bin, append(args, "--cassette", db)...)
			if out, err := cmd.CombinedOutput(); err != nil {
				return fmt.Errorf("mcpvcr %s while recording: %w\n%s", strings.Join(args, " "), err, out)
			}
		}
		var stderr bytes.Buffer
		rep := exec.Command(bin, "replay", "1", "--stdio", "--cassette", db)
		rep.Stderr = &stderr
		cs, err := mcptest.NewClient().Connect(ctx, &mcp.CommandTransport{Command: rep}, nil)
		if err != nil {
			return fmt.Errorf("mcpvcr replay while recording: connect: %w\n%s", err, stderr.String())
		}
		_, err = cs.ListTools(ctx, nil)
		cs.Close()
		if err != nil {
			return fmt.Errorf("mcpvcr replay while recording: tools/list: %w\n%s", err, stderr.String())
		}
		select {
		case <-stop:
			return nil
		default:
		}
	}
}

// checkAllRecorded requires db to hold n sessions, each ended with exit
// code 0 and holding every frame of the client's script, and mcpvcr
// check to find nothing.
func checkAllRecorded(t *testing.T, bin, db string, n int) {
	t.Helper()
	if out, err := exec.Command(bin, "check", "--cassette", db).CombinedOutput(); err != nil {
		t.Errorf("mcpvcr check: %v; want exit 0:\n%s", err, out)
	}
	ctx := testCtx(t)
	d, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ss, err := d.Sessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(ss) != n {
		t.Errorf("cassette holds %d sessions; want %d", len(ss), n)
	}
	names := make(map[string]bool)
	for _, s := range ss {
		if names[s.Name] {
			t.Errorf("session %d: name %q recorded twice", s.ID, s.Name)
		}
		names[s.Name] = true
		fs, err := d.Frames(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		// The client's three requests (server/discover or initialize,
		// tools/list, tools/call) and their answers; the server's stderr
		// may add lines.
		var c2s, s2c, echoed int
		for _, f := range fs {
			switch {
			case f.Direction == store.ClientToServer && f.Kind == store.KindRequest:
				c2s++
			case f.Direction == store.ServerToClient && f.Kind.IsResponse():
				s2c++
			}
			if bytes.Contains(f.Raw, []byte(`"text":"`+s.Name+`"`)) {
				echoed++
			}
		}
		if s.EndedAt.IsZero() || s.ExitCode != 0 || c2s != 3 || s2c != 3 || echoed != 2 {
			t.Errorf("session %d %q: ended %v, exit %d, %d requests, %d answers, name in %d frames; want ended, 0, 3, 3, 2",
				s.ID, s.Name, s.EndedAt, s.ExitCode, c2s, s2c, echoed)
			t.Logf("recording:\n%s", mcpvcr(t, "", "show", fmt.Sprint(s.ID), "--cassette", db).stdout)
		}
	}
}

var plain struct {
	once sync.Once
	path string
	err  error
}

// plainBin builds mcpvcr without the race detector, once per test
// process, beside mcpvcrBin.
func plainBin(tb testing.TB) string {
	tb.Helper()
	plain.once.Do(func() {
		plain.path = filepath.Join(filepath.Dir(mcpvcrBin), "mcpvcr-plain")
		out, err := exec.Command("go", "build", "-o", plain.path, ".").CombinedOutput()
		if err != nil {
			plain.err = fmt.Errorf("build mcpvcr: %w\n%s", err, out)
		}
	})
	if plain.err != nil {
		tb.Fatal(plain.err)
	}
	return plain.path
}
