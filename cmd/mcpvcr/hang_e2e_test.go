package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
)

// rawTimeout bounds one raw request of the scenarios below: replay must
// answer each at once, so a request still open after it is a hang.
const rawTimeout = 10 * time.Second

// rawAnswer is what one raw HTTP request got.
type rawAnswer struct {
	status int
	ctype  string
	body   string
	sid    string
}

// rawDo sends one request to url and reads the whole answer, within
// rawTimeout. host, if set, is sent as Host; header "" values delete.
func rawDo(tb testing.TB, method, url, host, body string, header map[string]string) (rawAnswer, error) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), rawTimeout)
	defer cancel()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		tb.Fatal(err)
	}
	for k, v := range header {
		if v != "" {
			req.Header.Set(k, v)
		}
	}
	if host != "" {
		req.Host = host
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return rawAnswer{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	a := rawAnswer{status: resp.StatusCode, ctype: resp.Header.Get("Content-Type"), body: string(bytes.TrimSpace(b)), sid: resp.Header.Get("Mcp-Session-Id")}
	return a, err
}

const (
	scenarioInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"scenario","version":"1.0.0"}}}`
	scenarioList = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
)

// refusedThenAccepted is the scenario of a DNS-rebinding check: the same
// initialize first with a foreign Host and Origin, which a Go SDK server
// refuses with 403, then with loopback ones, accepted; then the session's
// tools/list and DELETE. It returns what each step got, step by step.
func refusedThenAccepted(tb testing.TB, url string) []rawAnswer {
	tb.Helper()
	post := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
	var out []rawAnswer
	step := func(method, host, body string, h map[string]string) rawAnswer {
		a, err := rawDo(tb, method, url, host, body, h)
		if err != nil {
			tb.Fatalf("step %d (%s %s): %v", len(out)+1, method, body, err)
		}
		out = append(out, a)
		return a
	}
	foreign := map[string]string{"Origin": "http://evil.example"}
	for k, v := range post {
		foreign[k] = v
	}
	step(http.MethodPost, "evil.example", scenarioInit, foreign)
	ok := step(http.MethodPost, "", scenarioInit, post)
	in := map[string]string{"Mcp-Session-Id": ok.sid, "MCP-Protocol-Version": "2025-11-25"}
	for k, v := range post {
		in[k] = v
	}
	step(http.MethodPost, "", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, in)
	step(http.MethodPost, "", scenarioList, in)
	step(http.MethodDelete, "", "", map[string]string{"Mcp-Session-Id": ok.sid})
	return out
}

// manySessions records n sessions against the Go SDK test server with
// sessions (JSON answers): Go SDK client runs sharing their opening
// (initialize, tools/list), and, as session refusedAt, the
// refusedThenAccepted scenario. It returns the cassette and what the
// scenario got live.
func manySessions(t *testing.T, n, refusedAt int) (string, []rawAnswer) {
	t.Helper()
	upstream := mcptest.StartServer(t, "-transport", "http")
	db := filepath.Join(t.TempDir(), "many.db")
	// --allow-origin lets the foreign request through to the server, whose
	// own refusal is what the recording must hold.
	rec := startServing(t, "record", "--cassette", db, "--upstream", upstream, "--listen", "127.0.0.1:0", "--allow-origin", "http://evil.example")
	suite := multiSuite{version: mcptest.V20251125, script: gosdkRun}
	ctx := testCtx(t)
	var live []rawAnswer
	for i := range n {
		if i == refusedAt {
			live = refusedThenAccepted(t, rec.URL)
			continue
		}
		suite.clientRun(ctx, recordedClient, &mcp.StreamableClientTransport{Endpoint: rec.URL}, i%multiRuns)
	}
	if code := rec.Stop(); code != 0 {
		t.Fatalf("record exited %d:\n%s", code, rec.stderr)
	}
	return db, live
}

// TestReplay_RefusedThenAccepted: among many sessions sharing the opening,
// the one whose initialize was first refused (foreign Host and Origin) and
// then accepted replays step by step as recorded: the refusal and the
// acceptance are told apart by the request's shape and answered at once.
func TestReplay_RefusedThenAccepted(t *testing.T) {
	parallel(t)
	db, live := manySessions(t, 30, 5)
	if live[0].status != http.StatusForbidden || live[1].status != http.StatusOK {
		t.Fatalf("live: the foreign initialize got %d and the loopback one %d; want 403 and 200", live[0].status, live[1].status)
	}
	rep := startServing(t, "replay", "--cassette", db, "--listen", "127.0.0.1:0")
	got := refusedThenAccepted(t, rep.URL+"/mcp")
	for i := range live {
		if got[i].status != live[i].status || got[i].body != live[i].body {
			t.Errorf("step %d: replay answered %d %q; live %d %q", i+1, got[i].status, got[i].body, live[i].status, live[i].body)
		}
	}
	if code := rep.Stop(); code != 0 || !strings.Contains(rep.stderr.String(), " 0 unmatched") {
		t.Errorf("replay exited %d; want 0 and nothing unmatched:\n%s", code, rep.stderr)
	}
}

// TestReplay_GETWithoutSession: a GET to the endpoint without
// Mcp-Session-Id (curl, a health check), with or without Accept, is a
// shape no recorded request has: replay answers it at once with a 400
// naming the closest recorded request, says so on stderr as it answers,
// and exits 1 reporting the invented answer.
func TestReplay_GETWithoutSession(t *testing.T) {
	parallel(t)
	for _, accept := range []string{"", "text/event-stream"} {
		t.Run("accept="+accept, func(t *testing.T) {
			rep := startServing(t, "replay", "--cassette", filepath.Join(cassetteDir, "multi-gosdk-http-json.jsonl"), "--listen", "127.0.0.1:0")
			got, err := rawDo(t, http.MethodGet, rep.URL+"/mcp", "", "", map[string]string{"Accept": accept})
			if err != nil {
				t.Fatalf("GET without Mcp-Session-Id: %v", err)
			}
			if got.status != http.StatusBadRequest || !strings.Contains(got.body, "Mcp-Session-Id absent (recorded present)") || !strings.Contains(got.body, "closest is session 1") {
				t.Errorf("GET without Mcp-Session-Id = %d %q; want 400 naming the closest recorded request and the missing header", got.status, got.body)
			}
			code := rep.Stop()
			// Logged as it answered: before the summary written at exit.
			out := rep.stderr.String()
			warned, reported := strings.Index(out, "answered a request of its own"), strings.Index(out, "invented an answer: GET /mcp answered 400")
			if code != 1 || warned < 0 || reported < warned {
				t.Errorf("replay exited %d; want 1, a warning as it answered and the invented answer in the summary:\n%s", code, out)
			}
		})
	}
}

// TestReplay_ExplainAcrossCandidates: with many candidate sessions, a call
// that matches nothing is explained against all of them: the closest
// recorded frame by session and seq (the add call recorded in session 4,
// not anything of session 1), the diff and the rule; a call of another
// tool is never hinted to ignore the tool's name. The summary ends with
// one total line; the per-client lines come only with -v.
func TestReplay_ExplainAcrossCandidates(t *testing.T) {
	parallel(t)
	ctx := testCtx(t)
	for _, verbose := range []bool{false, true} {
		args := []string{"replay", "--cassette", filepath.Join(cassetteDir, "multi-gosdk-http-json.jsonl"), "--listen", "127.0.0.1:0"}
		if verbose {
			args = append(args, "-v")
		}
		rep := startServing(t, args...)
		cs, err := mcptest.NewClientAs(upgradedClient).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: rep.URL + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: mcptest.V20251125})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cs.ListTools(ctx, nil); err != nil {
			t.Fatal(err)
		}
		_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": 40, "b": 3}})
		if err == nil || !strings.Contains(err.Error(), "closest is session 4 seq") {
			t.Errorf("add 40+3: %v; want -32019 naming the add call of session 4", err)
		}
		_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "nosuch", Arguments: map[string]any{"text": "run 0"}})
		if err == nil {
			t.Errorf("a call of another tool succeeded; want -32019")
		}
		cs.Close()
		code := rep.Stop()
		out := rep.stderr.String()
		if code != 1 || !strings.Contains(out, "closest is session 4 seq") || !strings.Contains(out, "replay: 1 client session served, 5 client frames, 3 matched, 2 unmatched") {
			t.Errorf("replay exited %d; want 1, the closest frame by session and the total line:\n%s", code, out)
		}
		if strings.Contains(out, "--ignore 'tools/call:params.name'") || !strings.Contains(out, "it asks for another tool") {
			t.Errorf("the call of another tool is not reported as such, or is hinted to ignore the tool's name:\n%s", out)
		}
		if verbose && !strings.Contains(out, "the first of 8 candidates") {
			t.Errorf("the per-client line blames the first candidate without saying the client's frames never told the 8 apart:\n%s", out)
		}
		if got := strings.Contains(out, "replayed session"); got != verbose {
			t.Errorf("per-client lines written = %t; want %t (-v):\n%s", got, verbose, out)
		}
	}
	rep := startServing(t, "replay", "--cassette", filepath.Join(cassetteDir, "multi-gosdk-http-json.jsonl"), "--listen", "127.0.0.1:0", "--ignore", "tools/call:params.name")
	if !strings.Contains(rep.stderr.String(), "--ignore tools/call:params.name ignores what a request asks for") {
		t.Errorf("replay does not warn that the rule ignores which tool is called:\n%s", rep.stderr)
	}
}

// TestReplay_DualEraClient: a dual-era client (the Go SDK client asking
// for 2026-07-28 probes with server/discover, and falls back to
// initialize when refused) replays a legacy recording, which holds no
// server/discover: replay refuses the probe as the legacy server would,
// the client falls back and gets the recorded answers, and the summary
// counts the probe, with nothing unmatched.
func TestReplay_DualEraClient(t *testing.T) {
	parallel(t)
	for _, name := range []string{"gosdk-http-json", "gosdk-stdio"} {
		t.Run(name, func(t *testing.T) {
			var s multiSuite
			for _, x := range multiSuites() {
				if x.name == name {
					s = x
				}
			}
			live := s.loadGolden(t)
			const run = 2
			recorded := s.version
			s.version = mcptest.V20260728 // the client's preference: it probes first
			ctx, cancel := context.WithTimeout(context.Background(), multiRunTimeout)
			defer cancel()
			var (
				got    map[string]any
				code   int
				stderr string
			)
			if s.stdio != nil {
				var buf syncBuffer
				rep := exec.Command(mcpvcrBin, "replay", "--stdio", "--cassette", s.cassette())
				rep.Stderr = &buf
				got = s.clientRun(ctx, upgradedClient, &mcp.CommandTransport{Command: rep, TerminateDuration: 5 * time.Second}, run)
				if rep.ProcessState == nil && rep.Process != nil {
					_ = rep.Process.Kill()
					_ = rep.Wait()
				}
				code, stderr = rep.ProcessState.ExitCode(), buf.String()
			} else {
				rep := startServing(t, "replay", "--cassette", s.cassette(), "--listen", "127.0.0.1:0")
				got = s.clientRun(ctx, upgradedClient, s.transport(rep.URL+s.path), run)
				code, stderr = rep.Stop(), rep.stderr.String()
			}
			if diff := cmp.Diff(live[run], got); diff != "" {
				t.Errorf("the dual-era client (falling back to %s) saw other answers than the live run (-live +replay):\n%s\n%s", recorded, diff, stderr)
			}
			if code != 0 || !strings.Contains(stderr, " 0 unmatched") || !strings.Contains(stderr, "1 server/discover answered as a legacy server") {
				t.Errorf("replay exited %d; want 0, nothing unmatched and the probe counted:\n%s", code, stderr)
			}
		})
	}
}

// TestReplay_NeverRecordedVariants: under a small --wait, a never-recorded
// variant of each kind of request (POST answered with JSON, POST answered
// with SSE, GET stream, resuming GET, DELETE, HTTP+SSE POST, OAuth
// exchange) is answered, with a message saying what was not recorded,
// and replay exits 1; so is an HTTP+SSE call whose answer the recording
// sends only after the answer to a request this client skipped. Each request is bounded by rawTimeout or
// multiRunTimeout: a request held open fails the test.
func TestReplay_NeverRecordedVariants(t *testing.T) {
	parallel(t)
	suite := func(name string) multiSuite {
		for _, s := range multiSuites() {
			if s.name == name {
				return s
			}
		}
		t.Fatalf("no suite %s", name)
		return multiSuite{}
	}
	replay := func(t *testing.T, s multiSuite) *serving {
		return startServing(t, "replay", "--cassette", s.cassette(), "--listen", "127.0.0.1:0", "--wait", "200ms")
	}
	// callUnknown connects a Go SDK client and calls a tool no session
	// recorded.
	callUnknown := func(t *testing.T, s multiSuite) {
		rep := replay(t, s)
		ctx, cancel := context.WithTimeout(context.Background(), multiRunTimeout)
		defer cancel()
		cs, err := mcptest.NewClientAs(upgradedClient).Connect(ctx, s.transport(rep.URL+s.path), &mcp.ClientSessionOptions{ProtocolVersion: s.version})
		if err != nil {
			t.Fatal(err)
		}
		_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "nosuch", Arguments: map[string]any{"text": "x"}})
		if err == nil || !strings.Contains(err.Error(), "no recorded frame matches") {
			t.Errorf("call of a tool never recorded: %v; want -32019 saying nothing recorded matches", err)
		}
		cs.Close()
		if code := rep.Stop(); code != 1 {
			t.Errorf("replay exited %d; want 1:\n%s", code, rep.stderr)
		}
	}
	// rawVariant sends one raw request and wants status and a message.
	rawVariant := func(t *testing.T, s multiSuite, method, path string, h map[string]string, status int, msg string) {
		rep := replay(t, s)
		got, err := rawDo(t, method, rep.URL+path, "", "", h)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		if got.status != status || !strings.Contains(got.body, msg) {
			t.Errorf("%s %s = %d %q; want %d and %q", method, path, got.status, got.body, status, msg)
		}
		if code := rep.Stop(); code != 1 {
			t.Errorf("replay exited %d; want 1:\n%s", code, rep.stderr)
		}
	}
	t.Run("PostJSON", func(t *testing.T) { callUnknown(t, suite("gosdk-http-json")) })
	t.Run("PostSSE", func(t *testing.T) { callUnknown(t, suite("gosdk-http-sse")) })
	t.Run("HTTPSSEPost", func(t *testing.T) { callUnknown(t, suite("gosdk-sse")) })
	t.Run("HTTPSSESkippedRequest", func(t *testing.T) {
		// A client that skips the recorded tools/list: over HTTP+SSE the
		// echo answer waits on the one stream behind the tools/list
		// answer, which never comes; it is sent out of turn.
		rep := replay(t, suite("gosdk-sse"))
		s := suite("gosdk-sse")
		ctx, cancel := context.WithTimeout(context.Background(), multiRunTimeout)
		defer cancel()
		cs, err := mcptest.NewClientAs(upgradedClient).Connect(ctx, s.transport(rep.URL+s.path), &mcp.ClientSessionOptions{ProtocolVersion: s.version})
		if err != nil {
			t.Fatal(err)
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "run 0"}})
		if tc, ok := contentText(res); err != nil || !ok || tc != "run 0" {
			t.Errorf("echo without the recorded tools/list first = %v, %v; want the recorded run 0", res, err)
		}
		cs.Close()
		if code := rep.Stop(); code != 1 || !strings.Contains(rep.stderr.String(), "out of recorded order") {
			t.Errorf("replay exited %d; want 1 and the echo reported as sent out of recorded order:\n%s", code, rep.stderr)
		}
	})
	t.Run("GetStream", func(t *testing.T) {
		rawVariant(t, suite("gosdk-http-sse"), http.MethodGet, "/mcp", map[string]string{"Accept": "text/event-stream"}, http.StatusBadRequest, "no recorded request has the shape of GET /mcp")
	})
	t.Run("ResumingGet", func(t *testing.T) {
		rawVariant(t, suite("gosdk-http-sse"), http.MethodGet, "/mcp", map[string]string{"Accept": "text/event-stream", "Mcp-Session-Id": "nosuch", "Last-Event-ID": "7"}, http.StatusBadRequest, "Last-Event-ID present (recorded absent)")
	})
	t.Run("Delete", func(t *testing.T) {
		rawVariant(t, suite("gosdk-http-json"), http.MethodDelete, "/mcp", nil, http.StatusBadRequest, "no recorded request has the shape of DELETE /mcp")
	})
	t.Run("OAuthExchange", func(t *testing.T) {
		rawVariant(t, suite("gosdk-http-json"), http.MethodGet, "/.well-known/oauth-authorization-server", nil, http.StatusNotFound, "nothing recorded for GET /.well-known/oauth-authorization-server")
	})
}

// contentText is the text of a tool result's first content.
func contentText(res *mcp.CallToolResult) (string, bool) {
	if res == nil || len(res.Content) == 0 {
		return "", false
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		return "", false
	}
	return tc.Text, true
}
