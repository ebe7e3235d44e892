package store_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpvcr/mcpvcr/store"
)

// crashEnv makes the test binary a child that records until it is killed.
const crashEnv = "MCPVCR_STORE_CRASH_CHILD"

func TestDB_KillNine(t *testing.T) {
	if path := os.Getenv(crashEnv); path != "" {
		crashChild(path)
		return
	}
	if testing.Short() {
		t.Skip("starts a child process")
	}
	path := filepath.Join(t.TempDir(), "crash.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestDB_KillNine$")
	cmd.Env = append(os.Environ(), crashEnv+"="+path)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill() })

	// Wait until the child has committed enough, then kill it while it
	// keeps appending.
	const enough = 3000
	committed := 0
	sc := bufio.NewScanner(out)
	for committed < enough && sc.Scan() {
		if n, ok := strings.CutPrefix(sc.Text(), "committed "); ok {
			committed, _ = strconv.Atoi(n)
		}
	}
	if committed < enough {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("child stopped after %d committed frames: %v\n%s", committed, sc.Err(), stderr.Bytes())
	}
	must(t, cmd.Process.Kill())
	cmd.Wait()

	ctx := context.Background()
	d := openPath(t, path)
	r, err := d.Check(ctx)
	must(t, err)
	if !r.OK() {
		t.Errorf("Check() after kill -9 = %s", r)
	}
	fs, err := d.Frames(ctx, 1)
	must(t, err)
	if len(fs) < committed {
		t.Errorf("len(Frames()) after kill -9 = %d; want at least the %d reported committed", len(fs), committed)
	}
	for i, f := range fs {
		if f.Seq != int64(i+1) {
			t.Fatalf("Frames()[%d].Seq = %d; want a gap-free prefix", i, f.Seq)
		}
	}
	t.Logf("kill -9 after %d committed: %d frames survived", committed, len(fs))
}

// crashChild appends frames to the cassette at path in a loop, reporting
// every 500 committed frames on stdout, until it is killed. It gives up
// after a bound, in case its parent is gone.
func crashChild(path string) {
	ctx := context.Background()
	d, err := store.Open(ctx, path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	s := &store.Session{Transport: store.Stdio}
	st := &store.Stream{Kind: store.StdoutStream}
	if err := d.CreateSession(ctx, s); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	st.SessionID = s.ID
	if err := d.OpenStream(ctx, st); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	raw := []byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"` + strings.Repeat("x", 900) + `"}}` + "\n")
	for seq := int64(1); seq < 5_000_000; seq++ {
		f := &store.Frame{SessionID: s.ID, StreamID: st.ID, Seq: seq, Direction: store.ServerToClient, Raw: raw, Retry: -1}
		f.Derive(st.Kind)
		if err := d.Append(ctx, f); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		if seq%500 == 0 {
			if err := d.Flush(ctx); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(2)
			}
			fmt.Printf("committed %d\n", seq)
		}
	}
	os.Exit(3)
}
