package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/internal/mcptest"
)

// statelessCassette is the committed recording of the stateless checks
// against the Go SDK test server at 2026-07-28, and statelessGolden what
// the live server answered each check.
var (
	statelessCassette = filepath.Join(cassetteDir, "stateless-http-2026-07-28.jsonl")
	statelessGolden   = filepath.Join(cassetteDir, "stateless-http-2026-07-28.golden.json")
)

// statelessTimeout bounds each stateless request: replay must answer every
// one at once, never hold it open.
const statelessTimeout = 5 * time.Second

// modernMeta is the _meta every 2026-07-28 request of the checks carries.
const modernMeta = `"_meta":{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"mcpvcr-conformance","version":"0.9.0"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`

// echoBody is the one body most checks send, with good or bad headers.
const echoBody = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"stateless"},` + modernMeta + `}}`

// A statelessCheck is one independent HTTP request of a conformance-style
// run against a stateless 2026-07-28 server.
type statelessCheck struct {
	name   string
	method string // HTTP method; POST if empty
	body   string
	header map[string]string // "" deletes a default header
	host   string            // Host to send, if not the server's
}

// goodHeaders are the headers of a valid tools/call echo.
var goodHeaders = map[string]string{
	"Content-Type":         "application/json",
	"Accept":               "application/json, text/event-stream",
	"MCP-Protocol-Version": mcptest.V20260728,
	"Mcp-Method":           "tools/call",
	"Mcp-Name":             "echo",
}

// statelessChecks are recorded in this order: a refused request before the
// valid one with the same body, header mismatches and missing headers,
// methods 2026-07-28 removed, a foreign Origin and Host, a GET, and the
// valid request again.
func statelessChecks() []statelessCheck {
	with := func(changes map[string]string) map[string]string {
		h := map[string]string{}
		for k, v := range goodHeaders {
			h[k] = v
		}
		for k, v := range changes {
			h[k] = v
		}
		return h
	}
	removed := func(method string) statelessCheck {
		return statelessCheck{
			name:   "removed " + method,
			body:   `{"jsonrpc":"2.0","id":7,"method":"` + method + `","params":{` + modernMeta + `}}`,
			header: with(map[string]string{"Mcp-Method": method, "Mcp-Name": ""}),
		}
	}
	return []statelessCheck{
		{name: "foreign origin", body: echoBody, header: with(map[string]string{"Origin": "http://evil.example"})},
		{name: "valid", body: echoBody, header: goodHeaders},
		{name: "Mcp-Method disagrees", body: echoBody, header: with(map[string]string{"Mcp-Method": "tools/list"})},
		{name: "Mcp-Name disagrees", body: echoBody, header: with(map[string]string{"Mcp-Name": "add"})},
		{name: "MCP-Protocol-Version missing", body: echoBody, header: with(map[string]string{"MCP-Protocol-Version": ""})},
		{name: "MCP-Protocol-Version disagrees", body: echoBody, header: with(map[string]string{"MCP-Protocol-Version": "2025-11-25"})},
		{name: "Mcp-Method missing", body: echoBody, header: with(map[string]string{"Mcp-Method": ""})},
		{name: "Mcp-Name missing", body: echoBody, header: with(map[string]string{"Mcp-Name": ""})},
		removed("initialize"),
		removed("ping"),
		{name: "foreign host", body: echoBody, header: goodHeaders, host: "evil.example"},
		{name: "GET", method: "GET", header: map[string]string{"Accept": "text/event-stream", "MCP-Protocol-Version": mcptest.V20260728}},
		{name: "valid again", body: echoBody, header: goodHeaders},
	}
}

// statelessAnswer is what a check got: the HTTP status, the JSON-RPC error
// code (0 for none) and the body.
type statelessAnswer struct {
	Check  string `json:"check"`
	Status int    `json:"status"`
	Code   int    `json:"code"`
	Body   string `json:"body"`
}

// do sends the check to url with a client that gives up after
// statelessTimeout; a request held open fails the test.
func (c statelessCheck) do(tb testing.TB, url string) statelessAnswer {
	tb.Helper()
	method := c.method
	if method == "" {
		method = "POST"
	}
	var body io.Reader
	if c.body != "" {
		body = strings.NewReader(c.body)
	}
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		tb.Fatal(err)
	}
	for k, v := range c.header {
		if v != "" {
			req.Header.Set(k, v)
		}
	}
	if c.host != "" {
		req.Host = c.host
	}
	client := &http.Client{Timeout: statelessTimeout}
	resp, err := client.Do(req)
	if err != nil {
		tb.Errorf("check %q: %v (a request held open for %v)", c.name, err, statelessTimeout)
		return statelessAnswer{Check: c.name, Body: "error: " + err.Error()}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Errorf("check %q: read the answer: %v", c.name, err)
	}
	a := statelessAnswer{Check: c.name, Status: resp.StatusCode, Body: string(b)}
	payload := b
	if i := strings.Index(string(b), "data: "); i >= 0 {
		payload = []byte(strings.SplitN(string(b[i+len("data: "):]), "\n", 2)[0])
	}
	if m := jsonrpc.Parse(payload); m.Kind == jsonrpc.KindError {
		var e struct {
			Code int `json:"code"`
		}
		_ = json.Unmarshal(m.Error, &e)
		a.Code = e.Code
	}
	return a
}

// recordStateless records the checks through mcpvcr record against a live
// stateless Go SDK server that refuses cross-origin requests, writes the
// cassette and the golden answers.
func recordStateless(t *testing.T) {
	upstream := mcptest.StartServer(t, "-transport", "http", "-stateless", "-json", "-cross-origin")
	db := filepath.Join(t.TempDir(), "c.db")
	rec := startServing(t, "record", "--cassette", db, "--name", "stateless-http-2026-07-28", "--upstream", upstream, "--listen", "127.0.0.1:0",
		"--allow-origin", "http://evil.example") // the server's own refusals are what is recorded
	var live []statelessAnswer
	for _, c := range statelessChecks() {
		live = append(live, c.do(t, rec.URL))
	}
	if code := rec.Stop(); code != 0 {
		t.Fatalf("record exited %d:\n%s", code, rec.stderr)
	}
	if res := mcpvcr(t, "", "export", "--cassette", db, "-o", statelessCassette); res.code != 0 {
		t.Fatalf("export: %s", res.stderr)
	}
	b, _ := json.MarshalIndent(live, "", "  ")
	if err := os.WriteFile(statelessGolden, append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestStateless replays a conformance-style run of independent 2026-07-28
// checks against a stateless Go SDK server: the same tools/call body with
// good headers, with Mcp-* headers that disagree with the body or are
// missing, methods the revision removed (initialize, ping), a foreign
// Origin and Host, and a GET. Each check, sent in an order other than the
// recorded one, must get the recorded HTTP status, JSON-RPC error code and
// body, at once; a valid request after a refused one with the same body
// gets the valid answer. With -recassette it records the run afresh.
func TestStateless(t *testing.T) {
	parallel(t)
	if *recassette {
		recordStateless(t)
	}
	b, err := os.ReadFile(statelessGolden)
	if err != nil {
		t.Fatal(err)
	}
	var live []statelessAnswer
	if err := json.Unmarshal(b, &live); err != nil {
		t.Fatal(err)
	}
	checks := statelessChecks()
	if len(live) != len(checks) {
		t.Fatalf("%s holds %d answers; want %d (re-record with make recassette)", statelessGolden, len(live), len(checks))
	}
	want := map[string]statelessAnswer{}
	for _, a := range live {
		want[a.Check] = a
	}
	for _, name := range []string{"valid", "Mcp-Method disagrees", "removed initialize", "removed ping", "foreign origin"} {
		if a := want[name]; (a.Status == 200) != (name == "valid") {
			t.Fatalf("live check %q answered %d; the recording does not show what this test needs", name, a.Status)
		}
	}

	rep := startServing(t, "replay", "--cassette", statelessCassette, "--listen", "127.0.0.1:0")
	url := rep.URL + "/mcp"
	// Backwards, so that every refusal comes before the valid requests
	// recorded before it, then each refusal directly followed by the valid
	// request with the same body.
	var order []statelessCheck
	for i := len(checks) - 1; i >= 0; i-- {
		order = append(order, checks[i])
	}
	for _, c := range checks {
		if c.body == echoBody && c.name != "valid" && c.name != "valid again" {
			order = append(order, c, checks[1])
		}
	}
	for _, c := range order {
		got := c.do(t, url)
		if diff := cmp.Diff(want[c.name], got); diff != "" {
			t.Errorf("check %q: replay differs from the live server (-live +replay):\n%s", c.name, diff)
		}
	}
	// A newer client build (other clientInfo in _meta) gets the valid
	// answer too: by default matching ignores the client info.
	upgraded := statelessCheck{name: "valid", body: strings.Replace(echoBody, `"version":"0.9.0"`, `"version":"0.9.1"`, 1), header: goodHeaders}
	if diff := cmp.Diff(want["valid"], upgraded.do(t, url)); diff != "" {
		t.Errorf("valid request of a newer client (clientInfo 0.9.1 in _meta): replay differs from the live server (-live +replay):\n%s", diff)
	}
	code := rep.Stop()
	if t.Failed() {
		t.Logf("replay stderr:\n%s", rep.stderr)
	}
	if code != 0 {
		t.Errorf("replay exited %d; want 0:\n%s", code, rep.stderr)
	}
}
