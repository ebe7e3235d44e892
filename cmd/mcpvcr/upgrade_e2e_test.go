package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/internal/mcptest"
)

// cassetteFrames returns the raw frames of one session of a JSONL
// cassette, in recorded order, split by direction.
func cassetteFrames(tb testing.TB, path string, session int) (client, server []string) {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var rec struct {
			Type    string `json:"type"`
			Session int    `json:"session"`
			Dir     string `json:"dir"`
			Raw     string `json:"raw"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			tb.Fatalf("%s: %v", path, err)
		}
		if rec.Type != "frame" || rec.Session != session {
			continue
		}
		switch rec.Dir {
		case "c2s":
			client = append(client, rec.Raw)
		case "s2c":
			server = append(server, rec.Raw)
		}
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	if len(client) == 0 {
		tb.Fatalf("%s has no session %d", path, session)
	}
	return client, server
}

// upgradeTimeout bounds a hand-driven replay: a request held open kills
// mcpvcr, which fails the read, instead of blocking the suite.
const upgradeTimeout = 20 * time.Second

// startBoundedLineClient is startLineClient whose mcpvcr is killed after
// upgradeTimeout.
func startBoundedLineClient(tb testing.TB, args ...string) *lineClient {
	tb.Helper()
	c := startLineClient(tb, args...)
	timer := time.AfterFunc(upgradeTimeout, func() { _ = c.cmd.Process.Kill() })
	tb.Cleanup(func() { timer.Stop() })
	return c
}

// upgradedFrames are the client frames of run 2 of the Go SDK stdio
// multi-session cassette (tools/list, then add 1 and 2) as a newer client
// build sends them: another clientInfo name and version, the
// notifications/initialized without params (recorded with "params":{}),
// tools/list with "params":{} (recorded without params), and the add
// arguments in another key order and number notation. Each request has an
// id of its own; want holds the recorded answers with those ids.
func upgradedFrames(tb testing.TB) (send []string, want map[string]string) {
	tb.Helper()
	client, server := cassetteFrames(tb, filepath.Join(cassetteDir, "multi-gosdk-stdio.jsonl"), 3)
	if len(client) != 4 || len(server) != 3 || !strings.Contains(client[3], `"arguments":{"a":1,"b":2}`) {
		tb.Fatalf("session 3 of multi-gosdk-stdio is not run 2 (initialize, initialized, tools/list, add 1 2):\n%s", strings.Join(client, ""))
	}
	init := strings.NewReplacer(`"id":1,`, `"id":"init",`,
		`"name":"mcpvcr-suite"`, `"name":"mcpvcr-suite-ci"`,
		`"version":"2.12.0"`, `"version":"2.12.1"`).Replace(strings.TrimSpace(client[0]))
	if init == strings.TrimSpace(client[0]) || !strings.Contains(init, `"2.12.1"`) {
		tb.Fatalf("recorded initialize has an unexpected shape: %s", client[0])
	}
	send = []string{
		init,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":"list","method":"tools/list","params":{}}`,
		`{"jsonrpc":"2.0","id":"add","method":"tools/call","params":{"arguments":{"b":2.0,"a":1e0},"name":"add"}}`,
	}
	ids := []string{`"init"`, `"list"`, `"add"`}
	want = map[string]string{}
	for i, raw := range server {
		m := jsonrpc.Parse([]byte(raw))
		old := `"id":` + string(m.ID) + `,`
		if !strings.Contains(raw, old) {
			tb.Fatalf("recorded answer %s lacks %s", raw, old)
		}
		want[ids[i]] = strings.Replace(raw, old, `"id":`+ids[i]+`,`, 1)
	}
	return send, want
}

// TestClientUpgrade_Tolerant replays the Go SDK stdio multi-session
// cassette (no SESSION) to a newer client build: another clientInfo name and
// version, notifications/initialized without params, tools/list with empty
// params, arguments in another key order and number notation. By default
// replay matches tolerantly: every answer is the recorded one, byte for
// byte with the client's ids, and replay exits 0.
func TestClientUpgrade_Tolerant(t *testing.T) {
	parallel(t)
	send, want := upgradedFrames(t)
	rep := startBoundedLineClient(t, "replay", "--stdio", "--cassette", filepath.Join(cassetteDir, "multi-gosdk-stdio.jsonl"))
	for i, line := range send {
		if i == 1 {
			rep.send(line)
			continue
		}
		got := rep.call(line)
		id := string(jsonrpc.Parse([]byte(line)).ID)
		if got != want[id] {
			t.Errorf("answer to %s:\n got %s\nwant %s", line, got, want[id])
		}
	}
	if code := rep.close(); code != 0 || !strings.Contains(rep.stderr.String(), " 0 unmatched") {
		t.Errorf("replay exited %d; want 0 and every client frame matched:\n%s", code, rep.stderr)
	}
}

// TestClientUpgrade_Exact: with --match exact the same upgraded initialize
// matches nothing: it is answered with -32019, the report names the
// clientInfo difference, and replay exits 1. With --ignore on the
// clientInfo it matches again.
func TestClientUpgrade_Exact(t *testing.T) {
	parallel(t)
	send, want := upgradedFrames(t)
	cassette := filepath.Join(cassetteDir, "multi-gosdk-stdio.jsonl")
	t.Run("exact", func(t *testing.T) {
		rep := startBoundedLineClient(t, "replay", "--stdio", "--match", "exact", "--cassette", cassette)
		got := jsonrpc.Parse([]byte(rep.call(send[0])))
		var e struct {
			Code int `json:"code"`
		}
		if got.Kind != jsonrpc.KindError || json.Unmarshal(got.Error, &e) != nil || e.Code != -32019 {
			t.Errorf("answer to the upgraded initialize under --match exact = %s; want error -32019", got.Raw)
		}
		code := rep.close()
		if code != 1 {
			t.Errorf("replay --match exact exited %d; want 1:\n%s", code, rep.stderr)
		}
		if !strings.Contains(rep.stderr.String(), "clientInfo") || !strings.Contains(rep.stderr.String(), "2.12.1") {
			t.Errorf("replay report does not name the clientInfo difference:\n%s", rep.stderr)
		}
	})
	t.Run("exact-ignore", func(t *testing.T) {
		rep := startBoundedLineClient(t, "replay", "--stdio", "--match", "exact", "--ignore", "params.clientInfo", "--cassette", cassette)
		got := rep.call(send[0])
		if got != want[`"init"`] {
			t.Errorf("answer to the upgraded initialize under --match exact --ignore params.clientInfo:\n got %s\nwant %s", got, want[`"init"`])
		}
		rep.send(`{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}`)
		if code := rep.close(); code != 0 {
			t.Errorf("replay exited %d; want 0:\n%s", code, rep.stderr)
		}
	})
	t.Run("http", func(t *testing.T) {
		rep := startServing(t, "replay", "--match", "exact", "--cassette", filepath.Join(cassetteDir, "multi-gosdk-http-sse.jsonl"), "--listen", "127.0.0.1:0")
		ctx := testCtx(t)
		_, err := mcptest.NewClientAs(upgradedClient).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: rep.URL + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: mcptest.V20251125})
		if err == nil || ctx.Err() != nil {
			t.Errorf("connect an upgraded client under --match exact: err = %v; want initialize refused at once", err)
		}
		if code := rep.Stop(); code != 1 {
			t.Errorf("replay --match exact exited %d; want 1:\n%s", code, rep.stderr)
		}
		if stderr := rep.stderr.String(); !strings.Contains(stderr, "unmatched request initialize") || !strings.Contains(stderr, "clientInfo") {
			t.Errorf("replay report lacks the unmatched initialize and its clientInfo difference:\n%s", stderr)
		}
	})
}

// TestMultiSession_Wait: a client that calls tool roots but never answers
// the server's roots/list waits on an answer the recording gives only after
// a frame the client has not sent. Replay says so on stderr at once, and
// after --wait answers the call with -32019 naming the awaited frame; the
// summary counts it and replay exits 1.
func TestMultiSession_Wait(t *testing.T) {
	parallel(t)
	cassette := filepath.Join(cassetteDir, "multi-gosdk-stdio.jsonl")
	client, _ := cassetteFrames(t, cassette, 5)
	if len(client) != 5 || !strings.Contains(client[3], `"name":"roots"`) {
		t.Fatalf("session 5 of multi-gosdk-stdio is not run 4 (tools/call roots):\n%s", strings.Join(client, ""))
	}
	rep := startBoundedLineClient(t, "replay", "--stdio", "--wait", "500ms", "--cassette", cassette)
	rep.call(strings.TrimSpace(client[0]))
	rep.send(strings.TrimSpace(client[1]))
	rep.call(strings.TrimSpace(client[2]))
	start := time.Now()
	got := jsonrpc.Parse([]byte(rep.call(strings.TrimSpace(client[3]))))
	if got.Kind != jsonrpc.KindRequest || got.Method != "roots/list" {
		t.Fatalf("after tools/call roots: got %s; want the server's roots/list request", got.Raw)
	}
	// Not answering roots/list: the call's answer must come as -32019.
	line, err := rep.out.ReadString('\n')
	if err != nil {
		t.Fatalf("read the answer to tools/call roots: %v\n%s", err, rep.stderr)
	}
	waited := time.Since(start)
	ans := jsonrpc.Parse([]byte(line))
	var e struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	if ans.Kind != jsonrpc.KindError || json.Unmarshal(ans.Error, &e) != nil || e.Code != -32019 || string(ans.ID) != string(jsonrpc.Parse([]byte(client[3])).ID) {
		t.Errorf("answer to the unanswered tools/call roots = %s; want error -32019 with the call's id", line)
	}
	if waited < 500*time.Millisecond {
		t.Errorf("answered after %v; want after --wait 500ms", waited)
	}
	code := rep.close()
	if code != 1 {
		t.Errorf("replay exited %d; want 1:\n%s", code, rep.stderr)
	}
	if stderr := rep.stderr.String(); !strings.Contains(stderr, "seq") || strings.Contains(stderr, " 0 unmatched") {
		t.Errorf("stderr does not name the awaited frame, or reports nothing unmatched:\n%s", stderr)
	}
}
