package main

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
)

// TestCancel_TSClientCloseStream is the closest the TypeScript SDK client
// (1.32.2, which speaks 2025-11-25 at most: no 2026-07-28, where closing
// the response stream is the cancellation) comes to issue #28's case 2.
// Its AbortSignal POSTs notifications/cancelled and leaves the call's SSE
// stream open, so the one way it closes a response stream is closing its
// transport: here at progress 2 of server-everything's long-running
// operation, nothing POSTed, the stream recorded client-aborted. Another
// session of the cassette runs the call to its end. Replayed to a client
// with another clientInfo, each run sees what its live run saw; the
// closed stream ends where the client closed it, and what the recording
// holds after that is neither waited for nor counted as unmatched.
func TestCancel_TSClientCloseStream(t *testing.T) {
	everything := mcptest.Everything(t)
	node := everything[0]
	runs := [][]string{{"CANCEL_AT=2", "CANCEL_BY=close"}, {"WAIT_FOR=6"}}
	db := filepath.Join(t.TempDir(), "c.db")
	dumpSessionsOnFailure(t, db, len(runs))
	upstream := mcptest.EverythingHTTP(t, mcptest.StreamableHTTP)
	var live []map[string]any
	for i, env := range runs {
		rec := startServing(t, "record", "--cassette", db, "--name", fmt.Sprintf("run-%d", i), "--upstream", upstream, "--listen", "127.0.0.1:0")
		got, _ := tsCancelRunEnv(t, node, append([]string{"CLIENT_NAME=recorded"}, env...), "http", rec.URL)
		live = append(live, got)
		if code := rec.Stop(); code != 0 {
			t.Fatalf("record run %d exited %d:\n%s", i, code, rec.stderr)
		}
	}
	if want := []any{1.0, 2.0, "close"}; !cmp.Equal(live[0]["progress"], want) {
		t.Fatalf("live closing run saw progress %v; want %v", live[0]["progress"], want)
	}
	show := mcpvcr(t, "", "show", "1", "--cassette", db).stdout
	if stream := callStream(show, "tools/call trigger-long"); stream == "" || !regexp.MustCompile(`(?m)\s`+stream+`\s+end\s+client-aborted$`).MatchString(show) ||
		strings.Contains(show, "notifications/cancelled") {
		t.Fatalf("the recording does not end the call's stream client-aborted with nothing POSTed:\n%s", show)
	}
	for i, env := range runs {
		rep := startServing(t, "replay", "--cassette", db, "--listen", "127.0.0.1:0")
		got, _ := tsCancelRunEnv(t, node, append([]string{"CLIENT_NAME=upgraded"}, env...), "http", rep.URL+"/mcp")
		code := rep.Stop()
		checkReplay(t, i, live[i], got, rep.stderr.String(), code)
	}
}

// callStream returns the stream (post#5) of the first row of show's
// timeline that holds what, or "".
func callStream(show, what string) string {
	for _, line := range strings.Split(show, "\n") {
		if f := strings.Fields(line); strings.Contains(line, what) && len(f) > 3 {
			return f[3]
		}
	}
	return ""
}

// TestCancel_TSClientLateAnswer is case 1 of issue #28 with the
// TypeScript SDK client against the Go SDK test server, over stdio and
// Streamable HTTP (2025-06-18 and later, as the SDK negotiates): tool
// stubborn cancelled at its progress "started" answers anyway, after
// progress "after cancel", with a late result in one session and a late
// error in the other. The client's AbortSignal POSTs notifications/cancelled
// and, over HTTP, keeps reading the call's stream, so it sees the progress
// after its cancellation there too. Each replayed run sees what its live
// run saw, with nothing unmatched and no stall.
func TestCancel_TSClientLateAnswer(t *testing.T) {
	node := mcptest.Everything(t)[0]
	server := mcptest.BuildServer(t)
	runs := []string{`{"fail":true}`, `{}`}
	env := func(name, args string) []string {
		return []string{"CLIENT_NAME=" + name, "TOOL=stubborn", "ARGS=" + args, "ECHO_ARG=text", "CANCEL_AT=1", "WAIT_FOR=2"}
	}
	check := func(t *testing.T, live []map[string]any) {
		t.Helper()
		for i := range live {
			if want := []any{1.0, "cancel", 2.0}; !cmp.Equal(live[i]["progress"], want) || live[i]["call"] != "cancelled" {
				t.Fatalf("live run %d = %v; want progress %v and the call cancelled", i, live[i], want)
			}
		}
	}
	t.Run("stdio", func(t *testing.T) {
		t.Parallel()
		db := filepath.Join(t.TempDir(), "c.db")
		dumpSessionsOnFailure(t, db, len(runs))
		var live []map[string]any
		for _, args := range runs {
			got, _ := tsCancelRunEnv(t, node, env("recorded", args), "stdio", mcpvcrBin, "record", "--cassette", db, "--", server, "-stubborn")
			live = append(live, got)
		}
		check(t, live)
		for i, args := range runs {
			got, stderr := tsCancelRunEnv(t, node, env("upgraded", args), "stdio", mcpvcrBin, "replay", "--stdio", "--cassette", db)
			checkReplay(t, i, live[i], got, stderr, 0)
		}
	})
	t.Run("http", func(t *testing.T) {
		t.Parallel()
		db := filepath.Join(t.TempDir(), "c.db")
		dumpSessionsOnFailure(t, db, len(runs))
		upstream := mcptest.StartServer(t, "-transport", "http", "-stubborn")
		var live []map[string]any
		for _, args := range runs {
			rec := startServing(t, "record", "--cassette", db, "--upstream", upstream, "--listen", "127.0.0.1:0")
			got, _ := tsCancelRunEnv(t, node, env("recorded", args), "http", rec.URL)
			live = append(live, got)
			if code := rec.Stop(); code != 0 {
				t.Fatalf("record exited %d:\n%s", code, rec.stderr)
			}
		}
		check(t, live)
		for i, args := range runs {
			rep := startServing(t, "replay", "--cassette", db, "--listen", "127.0.0.1:0")
			got, _ := tsCancelRunEnv(t, node, env("upgraded", args), "http", rep.URL+"/mcp")
			code := rep.Stop()
			checkReplay(t, i, live[i], got, rep.stderr.String(), code)
		}
	})
}
