package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
)

// cancelToken is the progress token of the cancelled calls.
const cancelToken = "cancel-1"

// A cancelRun is one client run of the cancellation tests: it connects,
// lists the tools, calls tool with args and progress token cancelToken,
// cancels the call when the progress notification numbered cancelAt
// arrives (never when 0), then waits until the one numbered waitFor has
// arrived (the server keeps sending after a cancellation) and calls echo,
// so that what came after the cancellation is seen before the run ends.
type cancelRun struct {
	tool     string
	args     map[string]any
	cancelAt float64
	waitFor  float64
	// echo is the echo tool's argument name ("message" for
	// server-everything, "text" for the Go SDK test server).
	echo string
}

// progressLog collects the progress values a client receives, in order.
type progressLog struct {
	mu      sync.Mutex // guards got and changed
	got     []float64
	changed chan struct{}
}

func newProgressLog() *progressLog { return &progressLog{changed: make(chan struct{})} }

func (p *progressLog) add(v float64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.got = append(p.got, v)
	close(p.changed)
	p.changed = make(chan struct{})
}

// wait blocks until progress v has arrived or ctx is done.
func (p *progressLog) wait(ctx context.Context, v float64) error {
	for {
		p.mu.Lock()
		for _, g := range p.got {
			if g == v {
				p.mu.Unlock()
				return nil
			}
		}
		ch := p.changed
		p.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("progress %v never came: %w", v, ctx.Err())
		}
	}
}

// do runs r as a client named info over transport at version and returns
// what it saw: the progress values in order, with "cancel" where the
// client cancelled, how the call ended and what echo answered after.
func (r cancelRun) do(ctx context.Context, info *mcp.Implementation, transport mcp.Transport, version string) map[string]any {
	prog := newProgressLog()
	var mu sync.Mutex
	var seen []any
	cancelled := make(chan struct{})
	var once sync.Once
	callCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The SDK sends the cancellation from a goroutine of its own: the run
	// goes on only once it is written, or the session may close first and
	// one run record it where another does not.
	watch := newWriteWatch(transport, isCancellation)
	transport = watch
	c := mcp.NewClient(info, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			if req.Params.ProgressToken != cancelToken {
				return
			}
			mu.Lock()
			seen = append(seen, req.Params.Progress)
			mu.Unlock()
			if r.cancelAt > 0 && req.Params.Progress == r.cancelAt {
				once.Do(func() {
					mu.Lock()
					seen = append(seen, "cancel")
					mu.Unlock()
					cancel()
					close(cancelled)
				})
			}
			prog.add(req.Params.Progress)
		},
	})
	out := map[string]any{}
	cs, err := c.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		return map[string]any{"connect": "error: " + err.Error()}
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	out["tools"] = len(tools.Tools)
	if err != nil {
		out["tools"] = "error: " + err.Error()
	}
	res, err := cs.CallTool(callCtx, &mcp.CallToolParams{Name: r.tool, Arguments: r.args, Meta: mcp.Meta{"progressToken": cancelToken}})
	switch {
	case errors.Is(err, context.Canceled):
		out["call"] = "cancelled"
		waitCtx, stop := context.WithTimeout(ctx, 10*time.Second)
		select {
		case <-watch.seen:
		case <-waitCtx.Done():
			out["cancellation"] = "never written"
		}
		stop()
	case err != nil:
		out["call"] = "error: " + err.Error()
	default:
		out["call"] = jsonValueOf(res)
	}
	if r.waitFor > 0 {
		waitCtx, stop := context.WithTimeout(ctx, 10*time.Second)
		if err := prog.wait(waitCtx, r.waitFor); err != nil {
			out["wait"] = err.Error()
		}
		stop()
	}
	echo, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{r.echo: "after"}})
	if err != nil {
		out["echo"] = "error: " + err.Error()
	} else {
		out["echo"] = jsonValueOf(echo)
	}
	mu.Lock()
	out["progress"] = append([]any(nil), seen...)
	mu.Unlock()
	return out
}

// everythingCancelRuns are the runs of a cassette of server-everything's
// trigger-long-running-operation (6 steps): cancelled at progress 2 with
// the server going on (progress 3 to 6 after the cancellation, no
// result), then the same call not cancelled (every step and the result).
// Both share their opening frames and the call itself.
// Over Streamable HTTP the client ends the call's SSE stream as it
// cancels (after is false), so nothing after the cancellation reaches it.
func everythingCancelRuns(after bool) []cancelRun {
	args := map[string]any{"duration": 1.2, "steps": 6}
	cancelled := cancelRun{tool: "trigger-long-running-operation", args: args, cancelAt: 2, echo: "message"}
	if after {
		cancelled.waitFor = 6
	}
	return []cancelRun{
		cancelled,
		{tool: "trigger-long-running-operation", args: args, waitFor: 6, echo: "message"},
	}
}

// gosdkCancelRuns are the runs of a cassette of the Go SDK test server:
// tool stubborn cancelled at its progress "started", answering anyway
// with a late error (fail) or a late result, after progress "after
// cancel". after is as for everythingCancelRuns; where it is set, the run
// waits for that progress, which the server sends after the cancellation.
func gosdkCancelRuns(after bool) []cancelRun {
	runs := []cancelRun{
		{tool: "stubborn", args: map[string]any{"fail": true}, cancelAt: 1, echo: "text"},
		{tool: "stubborn", args: map[string]any{}, cancelAt: 1, echo: "text"},
	}
	if after {
		for i := range runs {
			runs[i].waitFor = 2
		}
	}
	return runs
}

// recordStdioRuns records each run through its own mcpvcr record -- argv
// into one cassette and returns it with what each live run saw.
func recordStdioRuns(t *testing.T, argv []string, version string, runs []cancelRun) (string, []map[string]any) {
	t.Helper()
	ctx := testCtx(t)
	db := filepath.Join(t.TempDir(), "c.db")
	var live []map[string]any
	for i, r := range runs {
		rec := exec.Command(mcpvcrBin, append([]string{"record", "--cassette", db, "--name", fmt.Sprintf("run-%d", i), "--"}, argv...)...)
		live = append(live, r.do(ctx, recordedClient, &mcp.CommandTransport{Command: rec, TerminateDuration: 200 * time.Millisecond}, version))
	}
	if d := os.Getenv("MCPVCR_KEEP"); d != "" { // keep the cassette for a look
		mcpvcr(t, "", "export", "--cassette", db, "-o", d)
	}
	return db, live
}

// replayStdioRun replays db (no SESSION argument) to run r, as a client
// named upgradedClient, and returns what it saw and replay's stderr and
// exit code.
func replayStdioRun(t *testing.T, db string, r cancelRun, version string, flags ...string) (map[string]any, string, int) {
	t.Helper()
	ctx := testCtx(t)
	var stderr syncBuffer
	rep := exec.Command(mcpvcrBin, append([]string{"replay", "--stdio", "--cassette", db}, flags...)...)
	rep.Stderr = &stderr
	got := r.do(ctx, upgradedClient, &mcp.CommandTransport{Command: rep, TerminateDuration: 5 * time.Second}, version)
	if rep.ProcessState == nil && rep.Process != nil {
		_ = rep.Process.Kill()
		_ = rep.Wait()
	}
	return got, stderr.String(), rep.ProcessState.ExitCode()
}

// dumpSessionsOnFailure logs the timeline of sessions 1 to n of db if the
// test fails.
func dumpSessionsOnFailure(tb testing.TB, db string, n int) {
	tb.Cleanup(func() {
		if tb.Failed() {
			for i := 1; i <= n; i++ {
				tb.Logf("recording:\n%s", mcpvcr(tb, "", "show", fmt.Sprint(i), "--cassette", db).stdout)
			}
		}
	})
}

// checkReplay requires a replayed run to see what the live one saw, with
// every client frame matched and no stall reported.
func checkReplay(t *testing.T, i int, live, got map[string]any, stderr string, code int) {
	t.Helper()
	if diff := cmp.Diff(live, got); diff != "" {
		t.Errorf("run %d: replay differs from the live run (-live +replay):\n%s\nreplay stderr:\n%s", i, diff, stderr)
	}
	if code != 0 || !strings.Contains(stderr, " 0 unmatched") || strings.Contains(stderr, "a request waits") {
		t.Errorf("run %d: replay exited %d; want 0, every frame matched and no stall:\n%s", i, code, stderr)
	}
}

// TestCancel_EverythingStdio (issue #28, the core case): server-everything
// over stdio at 2025-06-18, a long-running operation cancelled at its
// second progress notification while the server goes on sending progress
// and never answers; the same call not cancelled in another session of the
// cassette. Replayed to a client with another clientInfo, each run sees
// what its live run saw: progress 1 and 2 before the cancellation, 3 to 6
// after it, no answer and no stall; or every step and the result.
func TestCancel_EverythingStdio(t *testing.T) {
	runs := everythingCancelRuns(true)
	db, live := recordStdioRuns(t, mcptest.Everything(t), mcptest.V20250618, runs)
	dumpSessionsOnFailure(t, db, len(runs))
	if want := []any{1.0, 2.0, "cancel", 3.0, 4.0, 5.0, 6.0}; !cmp.Equal(live[0]["progress"], want) {
		t.Fatalf("live cancelled run saw progress %v; want %v (the server going on after the cancellation)", live[0]["progress"], want)
	}
	for i, r := range runs {
		got, stderr, code := replayStdioRun(t, db, r, mcptest.V20250618)
		checkReplay(t, i, live[i], got, stderr, code)
	}
	checkAfterCancelMarks(t, db, 3)
}

// checkAfterCancelMarks requires the timeline of session 1 in show, and
// its HTML report, to mark as sent after the cancellation every progress
// notification recorded after it, of which there are at least least.
func checkAfterCancelMarks(t *testing.T, db string, least int) {
	t.Helper()
	show := mcpvcr(t, "", "show", "1", "--cassette", db)
	want := 0
	if _, after, ok := strings.Cut(show.stdout, "notifications/cancelled"); ok {
		want = strings.Count(after, "notifications/progress")
	}
	if got := strings.Count(show.stdout, "after-cancel=#"); got != want || want < least {
		t.Errorf("show marks %d frames after-cancel; want the %d progress notifications after the cancellation (at least %d):\n%s", got, want, least, show.stdout)
	}
	out := filepath.Join(t.TempDir(), "report.html")
	if res := mcpvcr(t, "", "export", "1", "--cassette", db, "--format", "html", "-o", out); res.code != 0 {
		t.Fatalf("export --format html exited %d: %s", res.code, res.stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(string(b), `"acx":`); got != want {
		t.Errorf("the HTML report marks %d frames after a cancellation; want %d", got, want)
	}
}

// recordHTTPRuns records each run through one mcpvcr record --upstream
// into one cassette and returns it with what each live run saw.
func recordHTTPRuns(t *testing.T, upstream, version string, runs []cancelRun) (string, []map[string]any) {
	t.Helper()
	ctx := testCtx(t)
	db := filepath.Join(t.TempDir(), "c.db")
	var live []map[string]any
	for i, r := range runs {
		rec := startServing(t, "record", "--cassette", db, "--name", fmt.Sprintf("run-%d", i), "--upstream", upstream, "--listen", "127.0.0.1:0")
		live = append(live, r.do(ctx, recordedClient, &mcp.StreamableClientTransport{Endpoint: rec.URL}, version))
		if code := rec.Stop(); code != 0 {
			t.Fatalf("record run %d exited %d:\n%s", i, code, rec.stderr)
		}
	}
	if d := os.Getenv("MCPVCR_KEEP"); d != "" { // keep the cassette for a look
		mcpvcr(t, "", "export", "--cassette", db, "-o", d)
	}
	return db, live
}

// replayHTTPRuns replays db with replay --listen (no SESSION argument) to
// each run, one after the other, as a client named upgradedClient, and
// checks each against its live run.
func replayHTTPRuns(t *testing.T, db string, runs []cancelRun, live []map[string]any, version string, flags ...string) {
	t.Helper()
	ctx := testCtx(t)
	for i, r := range runs {
		rep := startServing(t, append([]string{"replay", "--cassette", db, "--listen", "127.0.0.1:0"}, flags...)...)
		got := r.do(ctx, upgradedClient, &mcp.StreamableClientTransport{Endpoint: rep.URL + "/mcp"}, version)
		code := rep.Stop()
		want := live[i]
		if r.cancelAt > 0 && r.waitFor == 0 {
			want, got = beforeCancel(want), beforeCancel(got)
		}
		checkReplay(t, i, want, got, rep.stderr.String(), code)
	}
}

// beforeCancel returns run's outcome with its progress cut after the
// client's cancellation. The Go SDK client ends a call's SSE stream as
// its context is cancelled, from a goroutine of its own: whether progress
// the server sends after the cancellation still reaches the handler is a
// race inside the client, which the live run can win (CI saw [1 cancel
// 2] recorded) and its replay lose, with replay having sent the same
// frames at once. What came before the cancellation, the call's outcome,
// the echo after it and a replay with every frame matched are still
// required.
func beforeCancel(run map[string]any) map[string]any {
	out := maps.Clone(run)
	if p, ok := run["progress"].([]any); ok {
		if i := slices.Index(p, any("cancel")); i >= 0 {
			out["progress"] = p[:i+1]
		}
	}
	return out
}

// TestCancel_EverythingHTTP is TestCancel_EverythingStdio over Streamable
// HTTP (2025-06-18): the cancellation is a POST of its own while the
// call's SSE stream goes on carrying progress.
func TestCancel_EverythingHTTP(t *testing.T) {
	runs := everythingCancelRuns(false)
	db, live := recordHTTPRuns(t, mcptest.EverythingHTTP(t, mcptest.StreamableHTTP), mcptest.V20250618, runs)
	dumpSessionsOnFailure(t, db, len(runs))
	replayHTTPRuns(t, db, runs, live, mcptest.V20250618)
}

// TestCancel_GoSDKStdio: the Go SDK test server over stdio (2025-06-18,
// and 2026-07-28, where the notification is the only way to cancel)
// answering cancelled calls anyway: with a late error (slow), and with
// progress after the cancellation and a late result (stubborn). Replayed
// to a client with another clientInfo, each run sees what its live run
// saw, with no stall; a client that does not cancel the stubborn call
// gets, once --wait is over, what the recording holds after the
// cancellation: progress "after cancel" and the late result.
func TestCancel_GoSDKStdio(t *testing.T) {
	for _, v := range []string{mcptest.V20250618, mcptest.V20260728} {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			runs := gosdkCancelRuns(true)
			db, live := recordStdioRuns(t, []string{mcptest.BuildServer(t), "-stubborn"}, v, runs)
			dumpSessionsOnFailure(t, db, len(runs))
			if want := []any{1.0, "cancel", 2.0}; !cmp.Equal(live[1]["progress"], want) {
				t.Fatalf("live stubborn run saw progress %v; want %v", live[1]["progress"], want)
			}
			for i, r := range runs {
				got, stderr, code := replayStdioRun(t, db, r, v)
				checkReplay(t, i, live[i], got, stderr, code)
			}
			t.Run("NotCancelled", func(t *testing.T) {
				// It still waits for progress 2: the SDK hands a
				// notification to its handler apart from the answer
				// that follows it, so the call may return first.
				r := runs[1]
				r.cancelAt = 0
				got, stderr, code := replayStdioRun(t, db, r, v, "--wait", "1s")
				checkLateAnswer(t, got, stderr, code)
			})
		})
	}
}

// checkLateAnswer requires a client that did not cancel the stubborn call
// to get the recorded late result, with the progress sent after the
// cancellation, and replay to say why it came late.
func checkLateAnswer(t *testing.T, got map[string]any, stderr string, code int) {
	t.Helper()
	var text any
	res, _ := got["call"].(map[string]any)
	if content, _ := res["content"].([]any); len(content) > 0 {
		first, _ := content[0].(map[string]any)
		text = first["text"]
	}
	if text != mcptest.StubbornResult || !cmp.Equal(got["progress"], []any{1.0, 2.0}) {
		t.Errorf("a client that does not cancel got %v; want progress [1 2] and the late result %q", got, mcptest.StubbornResult)
	}
	if code != 0 || !strings.Contains(stderr, " 0 unmatched") || !strings.Contains(stderr, "cancelled it (notifications/cancelled") {
		t.Errorf("replay exited %d; want 0, every frame matched and a line naming the recorded cancellation:\n%s", code, stderr)
	}
}

// TestCancel_GoSDKHTTP is TestCancel_GoSDKStdio over Streamable HTTP
// (2025-06-18 with SSE answers, and with JSON answers, where the
// cancelled POST was still waiting for its response headers; and
// 2026-07-28, where closing the stream is
// the cancellation and nothing is POSTed): the client ends the call's
// stream as it cancels, so the late frames are the recording's, not the client's, to
// see; replay must neither wait for them nor report them. A client that
// does not cancel the stubborn call waits for an answer the recording
// does not hold: after --wait it gets -32019 naming the recorded
// cancellation, and replay exits 1.
func TestCancel_GoSDKHTTP(t *testing.T) {
	for _, v := range []string{mcptest.V20250618, mcptest.V20250618 + "-json", mcptest.V20260728} {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			args := []string{"-transport", "http", "-stubborn"}
			if mcptest.Modern(v) {
				args = append(args, "-stateless")
			}
			after := false
			if json := strings.TrimSuffix(v, "-json"); json != v {
				// JSON answers: the cancelled POST still waits for its
				// response headers when the client gives up on it, and
				// progress comes on the GET stream, after the
				// cancellation too.
				v, args, after = json, append(args, "-json"), true
			}
			runs := gosdkCancelRuns(after)
			db, live := recordHTTPRuns(t, mcptest.StartServer(t, args...), v, runs)
			dumpSessionsOnFailure(t, db, len(runs))
			replayHTTPRuns(t, db, runs, live, v)
			t.Run("NotCancelled", func(t *testing.T) {
				r := runs[1]
				r.cancelAt, r.waitFor = 0, 0
				found, late := resultRecorded(t, db, 2, "stubborn")
				if found && late {
					// Progress 2 came before the late result, and the SDK
					// may hand the result to the call before it hands
					// the progress to its handler.
					r.waitFor = 2
				}
				rep := startServing(t, "replay", "--cassette", db, "--listen", "127.0.0.1:0", "--wait", "1s")
				got := r.do(testCtx(t), upgradedClient, &mcp.StreamableClientTransport{Endpoint: rep.URL + "/mcp"}, v)
				code := rep.Stop()
				switch {
				case found && late:
					// The server's late result reached the proxy before the
					// client closed the call's stream (a race of the live
					// run): it is the recording's answer, after --wait.
					checkLateAnswer(t, got, rep.stderr.String(), code)
					return
				case found:
					// It came even before the client cancelled: an answer
					// like any other.
					if res, _ := got["call"].(map[string]any); res == nil || code != 0 {
						t.Errorf("the recording answers the call before its cancellation; the client got %v and replay exited %d:\n%s", got["call"], code, rep.stderr)
					}
					return
				}
				msg, _ := got["call"].(string)
				if !strings.Contains(msg, "the recorded client cancelled it") {
					t.Errorf("a client that does not cancel got call = %v; want -32019 naming the recorded cancellation", got["call"])
				}
				if code != 1 || !strings.Contains(rep.stderr.String(), "1 unmatched") {
					t.Errorf("replay exited %d; want 1 and the stalled call reported:\n%s", code, rep.stderr)
				}
			})
		})
	}
}

// resultRecorded reports whether session id of db holds a result to a
// tools/call of tool, and whether it came after a cancellation.
func resultRecorded(t *testing.T, db string, id int, tool string) (found, afterCancel bool) {
	t.Helper()
	var show struct {
		Frames []struct {
			Kind, Method, Name string
			Flags              []string
		}
	}
	if err := json.Unmarshal([]byte(mcpvcr(t, "", "show", strconv.Itoa(id), "--cassette", db, "--format", "json").stdout), &show); err != nil {
		t.Fatal(err)
	}
	for _, f := range show.Frames {
		if f.Kind == "result" && f.Method == "tools/call" && f.Name == tool {
			return true, slices.ContainsFunc(f.Flags, func(fl string) bool { return strings.HasPrefix(fl, "after-cancel=") })
		}
	}
	return false, false
}
