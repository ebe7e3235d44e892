package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
)

// TestCancel_Initialize (no revision lets a client cancel initialize; no
// SDK client does, so a hand-written one does it here), with the Go SDK
// test server and server-everything over stdio: a cassette holds a
// session whose client cancelled its initialize and one whose client did
// not, sharing their opening frame. Each is replayed as recorded to a
// client with another clientInfo that does the same; --strict reports the
// cancellation, and only it, and exits 1.
func TestCancel_Initialize(t *testing.T) {
	servers := []struct {
		name string
		argv func(testing.TB) []string
		echo string // the echo tool's argument
	}{
		{"gosdk", func(tb testing.TB) []string { return []string{mcptest.BuildServer(tb)} }, "text"},
		{"everything", mcptest.Everything, "message"},
	}
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			t.Parallel()
			argv := srv.argv(t)
			db := filepath.Join(t.TempDir(), "c.db")
			dumpSessionsOnFailure(t, db, 2)
			initialize := func(name string) string {
				return `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"` + name + `","version":"1"}}}`
			}
			var got []string
			// readTo appends every line up to the answer with id to got.
			readTo := func(c *lineClient, id string) {
				for {
					line, err := c.out.ReadString('\n')
					if err != nil {
						t.Fatalf("read the answer %s: %v (so far %q)\n%s", id, err, got, c.stderr)
					}
					got = append(got, line)
					if strings.Contains(line, `"id":`+id+`}`) || strings.Contains(line, `"id":`+id+`,`) {
						return
					}
				}
			}
			script := func(c *lineClient, name string, cancel bool) []string {
				got = nil
				c.send(initialize(name))
				if cancel {
					// server-everything does not answer a cancelled
					// initialize (the Go SDK server does), so the client
					// goes on without waiting for it.
					c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"changed my mind"}}`)
				} else {
					readTo(c, "1")
				}
				c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
				c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"` + srv.echo + `":"hi"}}}`)
				readTo(c, "2")
				return got
			}
			var live [][]string
			for _, cancel := range []bool{true, false} {
				rec := startLineClient(t, append([]string{"record", "--cassette", db, "--"}, argv...)...)
				live = append(live, script(rec, "recorded", cancel))
				if code := rec.close(); code != 0 {
					t.Fatalf("record exited %d:\n%s", code, rec.stderr)
				}
			}
			for i, cancel := range []bool{true, false} {
				for _, strict := range []bool{false, true} {
					args := []string{"replay", "--stdio", "--cassette", db}
					if strict {
						args = append(args, "--strict")
					}
					rep := startLineClient(t, args...)
					got := script(rep, "upgraded", cancel)
					code := rep.close()
					if diff := cmp.Diff(live[i], got); diff != "" {
						t.Errorf("cancel=%t strict=%t: replay differs from the live run (-live +replay):\n%s\n%s", cancel, strict, diff, rep.stderr)
					}
					stderr := rep.stderr.String()
					switch {
					case strict && cancel && (code != 1 || !strings.Contains(stderr, "initialize must not be cancelled")):
						t.Errorf("replay --strict exited %d; want 1 and the cancelled initialize reported:\n%s", code, stderr)
					case !(strict && cancel) && (code != 0 || !strings.Contains(stderr, " 0 unmatched") || strings.Contains(stderr, "must not be cancelled")):
						t.Errorf("cancel=%t strict=%t: replay exited %d; want 0, every frame matched and nothing reported:\n%s", cancel, strict, code, stderr)
					}
				}
			}
		})
	}
}

// abandonRun is a client run for TestCancel_ServerCancelsOwnRequest: it
// calls tool (abandon or elicit) and answers the server's elicitation:
// abandon's only once the server has cancelled it (a late answer), any
// other at once.
func abandonRun(ctx context.Context, info *mcp.Implementation, transport mcp.Transport, version, tool string) map[string]any {
	var mu sync.Mutex
	out := map[string]any{}
	handled := make(chan struct{}) // closed once abandon's elicitation was cancelled
	watch := newWriteWatch(transport, isAnswer)
	transport = watch
	c := mcp.NewClient(info, &mcp.ClientOptions{
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			if req.Params.Message == mcptest.AbandonMessage {
				<-ctx.Done() // the server's notifications/cancelled
				mu.Lock()
				out["elicitation"] = "cancelled by the server: " + context.Cause(ctx).Error()
				mu.Unlock()
				close(handled)
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "late"}}, nil
		},
	})
	cs, err := c.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		return map[string]any{"connect": "error: " + err.Error()}
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}})
	mu.Lock()
	if err != nil {
		out["call"] = "error: " + err.Error()
	} else {
		out["call"] = jsonValueOf(res)
	}
	mu.Unlock()
	if tool == "abandon" {
		// Go on once the late answer is out, so that it is recorded
		// before the session ends.
		for _, ch := range []chan struct{}{handled, watch.seen} {
			select {
			case <-ch:
			case <-ctx.Done():
			}
		}
	}
	echo, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "after"}})
	mu.Lock()
	out["echo"] = jsonValueOf(echo)
	if err != nil {
		out["echo"] = "error: " + err.Error()
	}
	mu.Unlock()
	cs.Close()
	mu.Lock()
	defer mu.Unlock()
	return maps.Clone(out)
}

// A writeWatch is a client transport that closes seen once the client
// has written a message that match accepts, and the write has returned.
type writeWatch struct {
	mcp.Transport
	match func(jsonrpc.Message) bool
	seen  chan struct{}
	once  sync.Once
}

func newWriteWatch(t mcp.Transport, match func(jsonrpc.Message) bool) *writeWatch {
	return &writeWatch{Transport: t, match: match, seen: make(chan struct{})}
}

// Connect connects the transport and watches what the client writes.
func (w *writeWatch) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := w.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &watchedConn{Connection: c, w: w}, nil
}

// A watchedConn is the connection of a writeWatch.
type watchedConn struct {
	mcp.Connection
	w *writeWatch
}

// Write writes msg and, if the watch matches it, closes seen.
func (c *watchedConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	err := c.Connection.Write(ctx, msg)
	if c.w.match(msg) {
		c.w.once.Do(func() { close(c.w.seen) })
	}
	return err
}

// isAnswer matches a client's answer to a server request.
func isAnswer(msg jsonrpc.Message) bool {
	_, ok := msg.(*jsonrpc.Response)
	return ok
}

// isCancellation matches a notifications/cancelled.
func isCancellation(msg jsonrpc.Message) bool {
	req, ok := msg.(*jsonrpc.Request)
	return ok && !req.IsCall() && req.Method == "notifications/cancelled"
}

// TestCancel_ServerCancelsOwnRequest (legacy, over stdio and Streamable
// HTTP): the Go SDK server cancels its own elicitation/create and the
// client answers it late; another session of the cassette answers an
// elicitation at once. Replayed to a client with another clientInfo, the
// server's cancellation goes out as recorded, the late answer is taken,
// and each run sees what its live run saw. Over HTTP the server runs with
// [mcptest.BlockingCancelNotify]: without it the Go SDK server mostly
// drops its cancellation (it goes out after the tool's answer has ended
// the stream it belongs on), and the client never sees one.
func TestCancel_ServerCancelsOwnRequest(t *testing.T) {
	tools := []string{"abandon", "elicit"}
	v := mcptest.V20250618
	t.Run("stdio", func(t *testing.T) {
		t.Parallel()
		ctx := testCtx(t)
		db := filepath.Join(t.TempDir(), "c.db")
		dumpSessionsOnFailure(t, db, len(tools))
		server := mcptest.BuildServer(t)
		var live []map[string]any
		for _, tool := range tools {
			rec := exec.Command(mcpvcrBin, "record", "--cassette", db, "--", server, "-stubborn")
			live = append(live, abandonRun(ctx, recordedClient, &mcp.CommandTransport{Command: rec}, v, tool))
		}
		if !strings.Contains(fmt.Sprint(live[0]["elicitation"]), "cancelled by the server") {
			t.Fatalf("live abandon run = %v; want the elicitation cancelled by the server", live[0])
		}
		checkLateAnswerMarked(t, db)
		for i, tool := range tools {
			var stderr syncBuffer
			rep := exec.Command(mcpvcrBin, "replay", "--stdio", "--cassette", db)
			rep.Stderr = &stderr
			got := abandonRun(ctx, upgradedClient, &mcp.CommandTransport{Command: rep}, v, tool)
			checkReplay(t, i, live[i], got, stderr.String(), rep.ProcessState.ExitCode())
		}
	})
	t.Run("http", func(t *testing.T) {
		t.Parallel()
		ctx := testCtx(t)
		db := filepath.Join(t.TempDir(), "c.db")
		dumpSessionsOnFailure(t, db, len(tools))
		upstream := mcptest.StartServerEnv(t, []string{mcptest.BlockingCancelNotify}, "-transport", "http", "-stubborn")
		var live []map[string]any
		for _, tool := range tools {
			rec := startServing(t, "record", "--cassette", db, "--upstream", upstream, "--listen", "127.0.0.1:0")
			live = append(live, abandonRun(ctx, recordedClient, &mcp.StreamableClientTransport{Endpoint: rec.URL}, v, tool))
			if code := rec.Stop(); code != 0 {
				t.Fatalf("record %s exited %d:\n%s", tool, code, rec.stderr)
			}
		}
		if !strings.Contains(fmt.Sprint(live[0]["elicitation"]), "cancelled by the server") {
			t.Fatalf("live abandon run = %v; want the elicitation cancelled by the server", live[0])
		}
		checkLateAnswerMarked(t, db)
		for i, tool := range tools {
			rep := startServing(t, "replay", "--cassette", db, "--listen", "127.0.0.1:0")
			got := abandonRun(ctx, upgradedClient, &mcp.StreamableClientTransport{Endpoint: rep.URL + "/mcp"}, v, tool)
			code := rep.Stop()
			checkReplay(t, i, live[i], got, rep.stderr.String(), code)
		}
	})
}

// checkLateAnswerMarked requires the timeline of session 1 in show, and
// its HTML report, to mark the client's answer to the elicitation the
// server had cancelled as sent after that cancellation, and nothing else.
func checkLateAnswerMarked(t *testing.T, db string) {
	t.Helper()
	show := mcpvcr(t, "", "show", "1", "--cassette", db).stdout
	var marked []string
	for _, line := range strings.Split(show, "\n") {
		if strings.Contains(line, "after-cancel=#") {
			marked = append(marked, line)
		}
	}
	if len(marked) != 1 || !strings.Contains(marked[0], "> ") || !strings.Contains(marked[0], "result       elicitation/create") {
		t.Errorf("show marks %q after a cancellation; want the client's late answer to elicitation/create only:\n%s", marked, show)
	}
	out := filepath.Join(t.TempDir(), "report.html")
	if res := mcpvcr(t, "", "export", "1", "--cassette", db, "--format", "html", "-o", out); res.code != 0 {
		t.Fatalf("export --format html exited %d: %s", res.code, res.stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(string(b), `"acx":`); got != 1 {
		t.Errorf("the HTML report marks %d frames after a cancellation; want 1, the late answer", got)
	}
}

// tsCancelScript is the TypeScript SDK client of the cancellation tests.
var tsCancelScript = filepath.Join("..", "..", "internal", "mcptest", "testdata", "tsclient", "cancel.mjs")

// tsCancelRun runs the TypeScript SDK client script with args (a
// transport and its target), named name, cancelling at progress cancelAt
// (never when 0) and waiting for progress waitFor (not when 0). It returns
// what the client saw and its stderr (which, over stdio, holds mcpvcr's).
func tsCancelRun(t *testing.T, node, name string, cancelAt, waitFor int, args ...string) (map[string]any, string) {
	t.Helper()
	return tsCancelRunEnv(t, node, []string{"CLIENT_NAME=" + name, fmt.Sprintf("CANCEL_AT=%d", cancelAt), fmt.Sprintf("WAIT_FOR=%d", waitFor)}, args...)
}

// tsCancelRunEnv is tsCancelRun with the script's settings given as env
// ("CLIENT_NAME=…", "CANCEL_AT=…", "TOOL=…": see the script).
func tsCancelRunEnv(t *testing.T, node string, env []string, args ...string) (map[string]any, string) {
	t.Helper()
	ctx := testCtx(t)
	cmd := exec.CommandContext(ctx, node, append([]string{tsCancelScript}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr syncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("TypeScript client %v: %v\n%s", args, err, stderr.String())
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(stdout.String()), &out); err != nil {
		t.Fatalf("TypeScript client printed %q: %v\n%s", stdout.String(), err, stderr.String())
	}
	return out, stderr.String()
}

// TestCancel_TSClient is the core case with the TypeScript SDK client
// (AbortSignal) instead of the Go one, over stdio and Streamable HTTP:
// two sessions of server-everything's long-running operation, one
// cancelled at progress 2 (the server goes on), one not; each replayed
// run sees what its live run saw.
func TestCancel_TSClient(t *testing.T) {
	everything := mcptest.Everything(t)
	node := everything[0]
	type run struct{ cancelAt, waitFor int }
	runs := []run{{2, 6}, {0, 6}}
	t.Run("stdio", func(t *testing.T) {
		t.Parallel()
		db := filepath.Join(t.TempDir(), "c.db")
		dumpSessionsOnFailure(t, db, len(runs))
		var live []map[string]any
		for _, r := range runs {
			got, _ := tsCancelRun(t, node, "recorded", r.cancelAt, r.waitFor, append([]string{"stdio", mcpvcrBin, "record", "--cassette", db, "--"}, everything...)...)
			live = append(live, got)
		}
		if want := []any{1.0, 2.0, "cancel", 3.0, 4.0, 5.0, 6.0}; !cmp.Equal(live[0]["progress"], want) {
			t.Fatalf("live cancelled run saw progress %v; want %v", live[0]["progress"], want)
		}
		for i, r := range runs {
			got, stderr := tsCancelRun(t, node, "upgraded", r.cancelAt, r.waitFor, "stdio", mcpvcrBin, "replay", "--stdio", "--cassette", db)
			checkReplay(t, i, live[i], got, stderr, 0)
		}
	})
	t.Run("http", func(t *testing.T) {
		t.Parallel()
		db := filepath.Join(t.TempDir(), "c.db")
		dumpSessionsOnFailure(t, db, len(runs))
		upstream := mcptest.EverythingHTTP(t, mcptest.StreamableHTTP)
		var live []map[string]any
		for _, r := range runs {
			rec := startServing(t, "record", "--cassette", db, "--upstream", upstream, "--listen", "127.0.0.1:0")
			got, _ := tsCancelRun(t, node, "recorded", r.cancelAt, r.waitFor, "http", rec.URL)
			live = append(live, got)
			if code := rec.Stop(); code != 0 {
				t.Fatalf("record exited %d:\n%s", code, rec.stderr)
			}
		}
		for i, r := range runs {
			rep := startServing(t, "replay", "--cassette", db, "--listen", "127.0.0.1:0")
			got, _ := tsCancelRun(t, node, "upgraded", r.cancelAt, r.waitFor, "http", rep.URL+"/mcp")
			code := rep.Stop()
			checkReplay(t, i, live[i], got, rep.stderr.String(), code)
		}
	})
}

// closeStreamCall POSTs a 2026-07-28 tools/call of stubborn, named name
// in _meta, to url, reads the SSE response up to its first event (the
// progress "started") and then, with close set, closes the stream, which
// is how a 2026-07-28 client cancels over HTTP (nothing is POSTed);
// otherwise it reads on to the end. It returns the events' data lines.
func closeStreamCall(t *testing.T, url, name string, close bool) []string {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"stubborn","arguments":{},"_meta":{"progressToken":"p5",` +
		`"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"` + name + `","version":"1"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`
	req, err := http.NewRequestWithContext(testCtx(t), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"MCP-Protocol-Version": mcptest.V20260728, "Mcp-Method": "tools/call", "Mcp-Name": "stubborn"} {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var data []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			data = append(data, d)
			if close {
				return data
			}
		}
	}
	return data
}

// TestCancel_ModernCloseStream (2026-07-28 over HTTP, nothing POSTed): a
// client closes the response stream of a call after its first event, as
// that revision cancels; the recording ends the stream client-aborted.
// Replayed to a client with another clientInfo that closes there too,
// replay sends the recorded event, reports no stall and nothing
// unmatched; to a client that keeps reading, after --wait the stream
// carries -32019 naming the closed stream, and replay exits 1.
func TestCancel_ModernCloseStream(t *testing.T) {
	db := filepath.Join(t.TempDir(), "c.db")
	dumpOnFailure(t, db)
	rec := startServing(t, "record", "--cassette", db, "--upstream", mcptest.StartServer(t, "-transport", "http", "-stateless", "-stubborn"), "--listen", "127.0.0.1:0")
	live := closeStreamCall(t, rec.URL, "recorded", true)
	if code := rec.Stop(); code != 0 {
		t.Fatalf("record exited %d:\n%s", code, rec.stderr)
	}
	if show := mcpvcr(t, "", "show", "1", "--cassette", db); !strings.Contains(show.stdout, "client-aborted") {
		t.Fatalf("the recording does not end the call's stream client-aborted:\n%s", show.stdout)
	}
	rep := startServing(t, "replay", "--cassette", db, "--listen", "127.0.0.1:0")
	got := closeStreamCall(t, rep.URL+"/mcp", "upgraded", true)
	code := rep.Stop()
	if diff := cmp.Diff(live, got); diff != "" {
		t.Errorf("replay differs from the live run (-live +replay):\n%s", diff)
	}
	if stderr := rep.stderr.String(); code != 0 || !strings.Contains(stderr, " 0 unmatched") || strings.Contains(stderr, "a request waits") {
		t.Errorf("replay exited %d; want 0, nothing unmatched and no stall:\n%s", code, stderr)
	}

	rep = startServing(t, "replay", "--cassette", db, "--listen", "127.0.0.1:0", "--wait", "1s")
	got = closeStreamCall(t, rep.URL+"/mcp", "upgraded", false)
	code = rep.Stop()
	if len(got) != 2 || got[0] != live[0] || !strings.Contains(got[1], "-32019") || !strings.Contains(got[1], "closed the response stream") {
		t.Errorf("a client that keeps reading got %q; want the recorded event, then -32019 naming the closed stream", got)
	}
	if code != 1 {
		t.Errorf("replay exited %d; want 1:\n%s", code, rep.stderr)
	}
}
