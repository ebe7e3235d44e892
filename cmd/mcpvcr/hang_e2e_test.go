package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
	rec := startServing(t, "record", "--cassette", db, "--upstream", upstream, "--listen", "127.0.0.1:0")
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
