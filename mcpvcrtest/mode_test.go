package mcpvcrtest_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/mcpvcr/mcpvcr/mcpvcrtest"
	"github.com/mcpvcr/mcpvcr/store"
)

// fatalTB is a recTB whose Fatalf is recorded too, and ends the goroutine
// that called it, as testing.T's does: call the code under test through
// run.
type fatalTB struct {
	recTB
	fatal string
}

func (f *fatalTB) Fatalf(format string, args ...any) {
	f.fatal = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// run calls fn on another goroutine and waits for it to return or Fatalf.
func (f *fatalTB) run(fn func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	<-done
}

// namedTB is a recTB with another name: the name of the test Proxy
// records for.
type namedTB struct {
	recTB
	name string
}

func (n *namedTB) Name() string { return n.name }

// sessionNames lists the names of the sessions of cassette.
func sessionNames(t *testing.T, cassette string) []string {
	t.Helper()
	recs, err := store.LoadFile(context.Background(), cassette)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range recs {
		names = append(names, r.Session.Name)
	}
	return names
}

// TestProxy_GoVCRModes runs each go-vcr mode against a live server whose
// answers count its calls, so that a replay (the recorded count) and a
// live call (the count goes on) tell apart, and checks what each writes.
func TestProxy_GoVCRModes(t *testing.T) {
	t.Setenv(mcpvcrtest.ModeEnv, "")
	upstream, calls := liveServer(t)
	dir := t.TempDir()

	// The default, record once: a missing cassette is recorded, an
	// existing one replayed.
	once := filepath.Join(dir, "once.jsonl")
	for i, want := range []string{"2 (call 1)", "2 (call 1)"} {
		t.Run(fmt.Sprintf("RecordOnce%d", i), func(t *testing.T) {
			srv := mcpvcrtest.Proxy(t, once, upstream)
			if got := addThrough(t, srv, "client", 1); got != want {
				t.Errorf("add(1) = %q; want %q", got, want)
			}
		})
	}
	if *calls != 1 {
		t.Fatalf("record once called the server %d times; want 1", *calls)
	}

	// Replay only: a missing cassette fails the test at once, writes
	// nothing and never contacts the server.
	t.Run("ReplayOnlyMissing", func(t *testing.T) {
		missing := filepath.Join(dir, "missing.jsonl")
		ft := &fatalTB{recTB: recTB{TB: t}}
		ft.run(func() { mcpvcrtest.Proxy(ft, missing, upstream, mcpvcrtest.ModeReplayOnly) })
		ft.finish()
		if !strings.Contains(ft.fatal, "mode replay-only: cassette "+missing) || !strings.Contains(ft.fatal, "try: record it once: go test -run '^TestProxy_GoVCRModes/ReplayOnlyMissing$' -mcpvcr=record-once") {
			t.Errorf("Fatalf = %q; want the missing cassette and how to record it", ft.fatal)
		}
		if _, err := os.Stat(missing); !os.IsNotExist(err) {
			t.Errorf("replay-only wrote %s: %v", missing, err)
		}
	})
	// Replay only, by flag, over a cassette: the recorded answer.
	t.Run("ReplayOnlyFlag", func(t *testing.T) {
		setFlag(t, "replay-only")
		before, _ := os.ReadFile(once)
		srv := mcpvcrtest.Proxy(t, once, upstream)
		if got, want := addThrough(t, srv, "client", 1), "2 (call 1)"; got != want {
			t.Errorf("add(1) = %q; want %q", got, want)
		}
		t.Cleanup(func() {
			if after, _ := os.ReadFile(once); string(after) != string(before) {
				t.Errorf("replay-only changed the cassette")
			}
		})
	})
	if *calls != 1 {
		t.Fatalf("replay-only called the server: %d calls; want 1", *calls)
	}

	// New episodes: one cassette shared by two tests. Each records its
	// own sessions once, appended to the other's; after that both replay.
	shared := filepath.Join(dir, "shared.db")
	t.Setenv(mcpvcrtest.ModeEnv, "replay-with-new-episodes")
	for round := range 2 {
		for _, name := range []string{"A", "B"} {
			nt := &namedTB{recTB: recTB{TB: t}, name: "Suite/" + name}
			srv := mcpvcrtest.Proxy(nt, shared, upstream)
			got := addThrough(t, srv, "client", 10)
			if name == "B" && got != "11 (call 3)" || name == "A" && got != "11 (call 2)" {
				t.Errorf("round %d, test %s: add(10) = %q; want the answer recorded in round 0", round, name, got)
			}
			if errs := nt.finish(); errs != "" {
				t.Errorf("round %d, test %s: %s", round, name, errs)
			}
		}
	}
	t.Setenv(mcpvcrtest.ModeEnv, "")
	if *calls != 3 {
		t.Errorf("new episodes called the server %d times in all; want 3 (once per test)", *calls)
	}
	if got, want := strings.Join(sessionNames(t, shared), " "), "Suite/A Suite/B"; got != want {
		t.Errorf("shared cassette sessions = %s; want %s", got, want)
	}

	// Record only: re-records, replacing the cassette.
	t.Run("RecordOnly", func(t *testing.T) {
		srv := mcpvcrtest.Proxy(t, shared, upstream, mcpvcrtest.ModeRecordOnly)
		if got, want := addThrough(t, srv, "client", 1), "2 (call 4)"; got != want {
			t.Errorf("add(1) = %q; want %q, live", got, want)
		}
	})
	if got, want := strings.Join(sessionNames(t, shared), " "), "TestProxy_GoVCRModes/RecordOnly"; got != want {
		t.Errorf("after record-only, sessions = %s; want %s", got, want)
	}

	// Passthrough: live, and the cassette as it was.
	t.Run("Passthrough", func(t *testing.T) {
		t.Setenv(mcpvcrtest.ModeEnv, "ModePassthrough")
		before, _ := os.ReadFile(once)
		srv := mcpvcrtest.Proxy(t, once, upstream)
		if got, want := addThrough(t, srv, "client", 1), "2 (call 5)"; got != want {
			t.Errorf("add(1) = %q; want %q, live", got, want)
		}
		t.Cleanup(func() {
			if after, _ := os.ReadFile(once); string(after) != string(before) {
				t.Errorf("passthrough changed the cassette")
			}
		})
	})
}

// TestProxy_DiscardFailed: a test that fails leaves its cassette as it
// was: nothing for a new one, the old recording for an existing one.
func TestProxy_DiscardFailed(t *testing.T) {
	upstream, _ := liveServer(t)
	for _, name := range []string{"new.jsonl", "new.db"} {
		cassette := filepath.Join(t.TempDir(), name)
		rt := &recTB{TB: t}
		srv := mcpvcrtest.Proxy(rt, cassette, upstream, mcpvcrtest.ModeRecordOnly)
		addThrough(t, srv, "client", 1)
		rt.Errorf("the test under test failed")
		rt.finish()
		if _, err := os.Stat(cassette); !os.IsNotExist(err) {
			t.Errorf("%s: a failed test wrote its recording: %v", name, err)
		}
	}
}

func TestParseMode(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want mcpvcrtest.Mode
	}{
		{"", mcpvcrtest.ModeRecordOnce},
		{"record-once", mcpvcrtest.ModeRecordOnce},
		{"ModeRecordOnce", mcpvcrtest.ModeRecordOnce},
		{"replay-only", mcpvcrtest.ModeReplayOnly},
		{"ReplayOnly", mcpvcrtest.ModeReplayOnly},
		{"replay_with_new_episodes", mcpvcrtest.ModeReplayWithNewEpisodes},
		{"new-episodes", mcpvcrtest.ModeReplayWithNewEpisodes},
		{"record-only", mcpvcrtest.ModeRecordOnly},
		{"passthrough", mcpvcrtest.ModePassthrough},
		{"replay", mcpvcrtest.Replay},
		{"record", mcpvcrtest.Record},
		{"replay-or-record", mcpvcrtest.ReplayOrRecord},
		{"off", mcpvcrtest.Off},
	} {
		got, err := mcpvcrtest.ParseMode(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseMode(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
		if back, err := mcpvcrtest.ParseMode(got.String()); back != got || err != nil {
			t.Errorf("ParseMode(%q) = %v, %v; want %v", got.String(), back, err, got)
		}
	}
	if _, err := mcpvcrtest.ParseMode("rewind"); err == nil || !strings.Contains(err.Error(), "record-once (default), replay-only") {
		t.Errorf("ParseMode(rewind) = %v; want an error listing the modes", err)
	}
}

// TestCassette: one file per test and subtest under testdata, names made
// file-safe.
func TestCassette(t *testing.T) {
	got := map[string]string{}
	for _, name := range []string{"empty list", "a/b", "..", "con", "ünïcode:*?", strings.Repeat("x", 150)} {
		t.Run(name, func(t *testing.T) { got[name] = mcpvcrtest.Cassette(t) })
	}
	want := map[string]string{
		"empty list":             "testdata/TestCassette/empty_list.jsonl",
		"a/b":                    "testdata/TestCassette/a/b.jsonl",
		"..":                     "testdata/TestCassette/_...jsonl",
		"con":                    "testdata/TestCassette/_con.jsonl",
		"ünïcode:*?":             "testdata/TestCassette/__n__code___.jsonl",
		strings.Repeat("x", 150): "",
	}
	for name, w := range want {
		g := filepath.ToSlash(got[name])
		if w == "" {
			if base := filepath.Base(g); len(base) > 110 || !strings.HasPrefix(base, "xxxx") {
				t.Errorf("Cassette(%.10s…) = %s; want a name cut short", name, g)
			}
			continue
		}
		if g != w {
			t.Errorf("Cassette(%q) = %s; want %s", name, g, w)
		}
	}
	if got, want := mcpvcrtest.Cassette(t), filepath.Join("testdata", "TestCassette.jsonl"); got != want {
		t.Errorf("Cassette = %s; want %s", got, want)
	}
}
