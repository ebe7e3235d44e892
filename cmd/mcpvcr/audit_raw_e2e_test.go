package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
	"github.com/mcpvcr/mcpvcr/internal/sse"
)

// Hand-written ("raw") clients, recorded now through mcpvcr record against
// the Go SDK test server, that break one client rule each: audit must
// report that rule and nothing else. The same client doing the right thing
// (keep) is recorded too, and audit must report nothing: the test can
// fail. Where the server alone cannot provoke the situation, an option of
// the test server does: -toggle (a tool list that changes), -header-tool
// (an x-mcp-header integer), -empty-cursor (lists ended with
// nextCursor "") and -answer-version (an initialize answered with another
// version).
//
// One rule has no recorded breaking client:
//
//   - http/session-id: mcpvcr record files a Streamable HTTP request under
//     the session its Mcp-Session-Id names, and one without the header (or
//     with an id no server issued) under a session of its own. A recorded
//     session so only ever holds requests carrying the id its initialize
//     answer issued, but for ones sent before that answer came back, which
//     a raw client cannot order against the proxy (the server answers
//     initialize at once). The rule can fire on cassettes made otherwise
//     (imported ones), not on a recording of ours.
//
// lifecycle/no-initialized-after-unknown-version has one through the
// test server's -answer-version, which names a version no revision has in
// every initialize result (no real server we have does: the Go SDK server
// answers a version it does not speak with its newest legacy one,
// server-everything with the SDK's latest).

// rawCase is one rule and the raw client that breaks it (keep false) or
// keeps it (keep true).
type rawCase struct {
	// name of the subtest when not rule (a rule with two clients).
	name        string
	rule, level string
	// flags of the test server; the HTTP cases name the transport.
	flags []string
	// stdio drives the client over stdio, http over HTTP (url is the
	// proxy's).
	stdio func(c *rawStdio, keep bool)
	http  func(t *testing.T, url string, keep bool)
}

// runRawCases records each case's breaking client and its keeping twin
// and audits both: the breaking one breaks the rule and nothing else, the
// keeping one nothing at all.
func runRawCases(t *testing.T, cases []rawCase) {
	for _, tc := range cases {
		name := tc.name
		if name == "" {
			name = tc.rule
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			for _, keep := range []bool{false, true} {
				name := "break"
				if keep {
					name = "keep"
				}
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					var db string
					if tc.stdio != nil {
						db = recordRawStdio(t, tc.flags, func(c *rawStdio) { tc.stdio(c, keep) })
					} else {
						upstream := mcptest.StartServer(t, tc.flags...)
						db = auditRecordHTTP(t, upstream, func(url string) { tc.http(t, url, keep) })
					}
					dumpOnFailure(t, db)
					if keep {
						wantAudit(t, db)
					} else {
						wantAudit(t, db, tc.rule+" "+tc.level)
					}
				})
			}
		})
	}
}

// rawModernMeta is the _meta of a 2026-07-28 request, with more members.
func rawModernMeta(more ...string) string {
	return `"_meta":{` + strings.Join(append([]string{`"io.modelcontextprotocol/protocolVersion":"2026-07-28"`, `"io.modelcontextprotocol/clientCapabilities":{}`}, more...), ",") + `}`
}

// modernReq is a 2026-07-28 request: params (members, or "") and _meta.
func modernReq(id int, method, params string, meta ...string) string {
	if params != "" {
		params += ","
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":{%s%s}}`, id, method, params, rawModernMeta(meta...))
}

// withCaps gives a modernReq line the client capabilities caps.
func withCaps(line, caps string) string {
	return strings.Replace(line, `"io.modelcontextprotocol/clientCapabilities":{}`, `"io.modelcontextprotocol/clientCapabilities":`+caps, 1)
}

// initializeReq is a legacy initialize with id 1.
func initializeReq(version, caps string) string {
	return `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + version + `","capabilities":` + caps + `,"clientInfo":{"name":"raw","version":"1"}}}`
}

const initializedNote = `{"jsonrpc":"2.0","method":"notifications/initialized"}`

func cancelNote(id int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d}}`, id)
}

// rawMsg is one JSON-RPC message the server sent (zero but for line when
// it is a batch).
type rawMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code int             `json:"code"`
		Data json.RawMessage `json:"data"`
	} `json:"error"`
	line string
}

// subscription is the listen a notification is tagged with.
func (m rawMsg) subscription() string {
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	_ = json.Unmarshal(m.Params, &p)
	return string(p.Meta["io.modelcontextprotocol/subscriptionId"])
}

// rawStdio is a hand-written stdio client: it writes JSON-RPC lines to
// mcpvcr record, which runs the test server, and reads the server's lines
// from record's stdout.
type rawStdio struct {
	t       *testing.T
	ctx     context.Context
	stdin   io.WriteCloser
	lines   <-chan string
	pending []rawMsg // read, not yet awaited
	// exit is the exit code record must end with: the server's.
	exit int
}

// recordRawStdio runs the test server with flags under mcpvcr record,
// drives it with run, closes its stdin and returns the cassette once
// record has exited (0, or as serverFails says).
func recordRawStdio(t *testing.T, flags []string, run func(c *rawStdio)) string {
	t.Helper()
	db := filepath.Join(t.TempDir(), "c.db")
	cmd := exec.Command(mcpvcrBin, append([]string{"record", "--cassette", db, "--", mcptest.BuildServer(t)}, flags...)...)
	stdin, stdout, stderr := startPiped(t, cmd)
	lines := make(chan string)
	stop := make(chan struct{})
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 8<<20)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-stop:
				return
			}
		}
	}()
	waited := false
	t.Cleanup(func() {
		close(stop)
		if !waited {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	c := &rawStdio{t: t, ctx: testCtx(t), stdin: stdin, lines: lines}
	run(c)
	stdin.Close()
	for open := true; open; {
		select {
		case _, open = <-lines:
		case <-c.ctx.Done():
			t.Fatalf("mcpvcr record went on after its stdin closed:\n%s", stderr.String())
		}
	}
	waited = true
	_ = cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != c.exit {
		t.Fatalf("mcpvcr record exited %d; want %d:\n%s", code, c.exit, stderr.String())
	}
	return db
}

// serverFails awaits the end of the server's output: it stopped with an
// error (exit code 3).
func (c *rawStdio) serverFails() {
	c.t.Helper()
	for {
		select {
		case line, ok := <-c.lines:
			if !ok {
				c.exit = 3
				return
			}
			c.t.Logf("the server wrote %s", line)
		case <-c.ctx.Done():
			c.t.Fatalf("the server did not stop")
		}
	}
}

// send writes lines to the server.
func (c *rawStdio) send(lines ...string) {
	c.t.Helper()
	for _, l := range lines {
		if _, err := io.WriteString(c.stdin, l+"\n"); err != nil {
			c.t.Fatalf("write %s: %v", l, err)
		}
	}
}

// await returns the first message from the server that match accepts,
// keeping the others it reads for later calls.
func (c *rawStdio) await(what string, match func(m rawMsg) bool) rawMsg {
	c.t.Helper()
	for i, m := range c.pending {
		if match(m) {
			c.pending = slices.Delete(c.pending, i, i+1)
			return m
		}
	}
	for {
		select {
		case line, ok := <-c.lines:
			if !ok {
				c.t.Fatalf("the server's output ended before %s", what)
			}
			var m rawMsg
			if !strings.HasPrefix(line, "[") {
				if err := json.Unmarshal([]byte(line), &m); err != nil {
					c.t.Fatalf("the server wrote %q: %v", line, err)
				}
			}
			m.line = line
			if match(m) {
				return m
			}
			c.pending = append(c.pending, m)
		case <-c.ctx.Done():
			c.t.Fatalf("no %s from the server; it sent:\n%v", what, c.pending)
		}
	}
}

// response awaits the response with id (a JSON token).
func (c *rawStdio) response(id string) rawMsg {
	c.t.Helper()
	return c.await("response "+id, func(m rawMsg) bool { return m.Method == "" && string(m.ID) == id && m.line[0] == '{' })
}

// message awaits a request or notification with method.
func (c *rawStdio) message(method string) rawMsg {
	c.t.Helper()
	return c.await(method, func(m rawMsg) bool { return m.Method == method })
}

// call sends request line with id and returns its response.
func (c *rawStdio) call(id int, line string) rawMsg {
	c.t.Helper()
	c.send(line)
	return c.response(fmt.Sprint(id))
}

// initialize runs the legacy handshake at version.
func (c *rawStdio) initialize(version, caps string) {
	c.t.Helper()
	if r := c.call(1, initializeReq(version, caps)); jsonString(r.Result, "protocolVersion") != version {
		c.t.Fatalf("initialize at %s answered %s", version, r.line)
	}
	c.send(initializedNote)
}

// discover asks server/discover at 2026-07-28, with id 1.
func (c *rawStdio) discover() {
	c.t.Helper()
	if r := c.call(1, modernReq(1, "server/discover", "")); r.Result == nil {
		c.t.Fatalf("server/discover answered %s", r.line)
	}
}

// listen opens a subscriptions/listen stream with id asking for filter
// and awaits its acknowledgement.
func (c *rawStdio) listen(id int, filter string) {
	c.t.Helper()
	c.send(modernReq(id, "subscriptions/listen", `"notifications":{`+filter+`}`))
	c.await(fmt.Sprintf("the acknowledgement of listen %d", id), func(m rawMsg) bool {
		return m.Method == "notifications/subscriptions/acknowledged" && m.subscription() == fmt.Sprint(id)
	})
}

// jsonField returns obj[key] of a JSON object, nil if absent.
func jsonField(obj json.RawMessage, key string) json.RawMessage {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(obj, &m)
	return m[key]
}

// jsonString returns obj[key] of a JSON object as a string.
func jsonString(obj json.RawMessage, key string) string {
	var s string
	_ = json.Unmarshal(jsonField(obj, key), &s)
	return s
}

// TestAuditRaw_Stdio: raw stdio clients of the Go SDK test server.
func TestAuditRaw_Stdio(t *testing.T) {
	parallel(t)
	runRawCases(t, []rawCase{
		{rule: "batch/only-2025-03-26", level: "error",
			// A client that batches at every revision: kept where
			// batches exist, 2025-03-26. At 2025-06-18 the server ends
			// the session with an error.
			stdio: func(c *rawStdio, keep bool) {
				v := mcptest.V20250618
				if keep {
					v = mcptest.V20250326
				}
				c.initialize(v, `{}`)
				c.send(`[{"jsonrpc":"2.0","id":2,"method":"tools/list"},{"jsonrpc":"2.0","id":3,"method":"prompts/list"}]`)
				if !keep {
					c.serverFails()
					return
				}
				c.await("the batch's answer", func(m rawMsg) bool { return strings.HasPrefix(m.line, "[") })
			}},
		{rule: "elicitation/declared-modes", level: "error",
			// A client that declares url-mode elicitation whatever it
			// negotiates, at 2025-06-18, which has no url mode.
			stdio: func(c *rawStdio, keep bool) {
				caps := `{"elicitation":{"form":{},"url":{}}}`
				if keep {
					caps = `{"elicitation":{}}`
				}
				c.initialize(mcptest.V20250618, caps)
				c.call(2, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
			}},
		{rule: "lifecycle/no-initialized-after-unknown-version", level: "error",
			// The server answers initialize naming 1999-01-01, a version
			// no revision has: the keeping client disconnects, the
			// breaking one goes on as if it spoke it.
			flags: []string{"-answer-version", "1999-01-01"},
			stdio: func(c *rawStdio, keep bool) {
				if r := c.call(1, initializeReq(mcptest.V20250618, `{}`)); jsonString(r.Result, "protocolVersion") != "1999-01-01" {
					c.t.Fatalf("initialize answered %s; want protocolVersion 1999-01-01", r.line)
				}
				if !keep {
					c.send(initializedNote)
				}
			}},
		{rule: "lifecycle/initialize-not-cancelled", level: "error",
			// A client that cancels its slow call, and the breaking one
			// every request it sent, initialize among them.
			stdio: func(c *rawStdio, keep bool) {
				c.initialize(mcptest.V20250618, `{}`)
				c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":"s"}}}`)
				c.message("notifications/progress")
				if !keep {
					c.send(cancelNote(1))
				}
				c.send(cancelNote(2))
			}},
		{rule: "listen/declared-kinds", level: "error",
			// The server declares no resources.subscribe: asking for a
			// resource's updates breaks the rule, tools' list changes
			// keep it.
			stdio: func(c *rawStdio, keep bool) {
				c.discover()
				filter := `"resourceSubscriptions":["` + mcptest.StaticURI + `"]`
				if keep {
					filter = `"toolsListChanged":true`
				}
				c.listen(2, filter)
			}},
		{rule: "listen/one-stream", level: "warning",
			// A new filter: the keeping client cancels its first listen
			// before it opens the second.
			stdio: func(c *rawStdio, keep bool) {
				c.discover()
				c.listen(2, `"toolsListChanged":true`)
				if keep {
					c.send(cancelNote(2))
				}
				c.listen(3, `"toolsListChanged":true,"promptsListChanged":true`)
			}},
		{rule: "listen/replaced-ignored", level: "warning", flags: []string{"-toggle"},
			// Listen 2 (tools) is replaced by listen 3 (prompts) and
			// ended only later (an overlap listen/one-stream allows).
			// Tool toggle changes the tool list: the server tells listen
			// 2. The breaking client lists the tools as its next request,
			// the keeping one asks for something else.
			stdio: func(c *rawStdio, keep bool) {
				c.discover()
				c.listen(2, `"toolsListChanged":true`)
				c.listen(3, `"promptsListChanged":true`)
				c.call(4, modernReq(4, "tools/call", `"name":"toggle"`))
				if n := c.message("notifications/tools/list_changed"); n.subscription() != "2" {
					c.t.Fatalf("list_changed of listen %s; want the replaced listen 2: %s", n.subscription(), n.line)
				}
				next := "tools/list"
				if keep {
					next = "prompts/list"
				}
				c.call(5, modernReq(5, next, ""))
				c.send(cancelNote(2))
			}},
		{rule: "modern/no-logging-setlevel", level: "error",
			// The keeping client puts the level in _meta.
			stdio: func(c *rawStdio, keep bool) {
				c.discover()
				var level []string
				if keep {
					level = append(level, `"io.modelcontextprotocol/logLevel":"warning"`)
				} else {
					c.call(2, modernReq(2, "logging/setLevel", `"level":"warning"`))
				}
				c.call(3, modernReq(3, "tools/call", `"name":"log"`, level...))
			}},
		{rule: "modern/no-roots-list-changed", level: "error",
			// A client with roots whose roots changed: in 2026-07-28 it
			// has nothing to send.
			stdio: func(c *rawStdio, keep bool) {
				c.call(1, withCaps(modernReq(1, "server/discover", ""), `{"roots":{}}`))
				if !keep {
					c.send(`{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`)
				}
				c.call(2, withCaps(modernReq(2, "tools/list", ""), `{"roots":{}}`))
			}},
		{rule: "pagination/empty-cursor-legacy", level: "warning", flags: []string{"-empty-cursor"},
			// The server ends its lists with nextCursor "": the breaking
			// client asks on with cursor "".
			stdio: func(c *rawStdio, keep bool) {
				c.initialize(mcptest.V20250618, `{}`)
				if r := c.call(2, `{"jsonrpc":"2.0","id":2,"method":"prompts/list"}`); string(jsonField(r.Result, "nextCursor")) != `""` {
					c.t.Fatalf("prompts/list answered %s; want nextCursor \"\"", r.line)
				}
				if !keep {
					c.call(3, `{"jsonrpc":"2.0","id":3,"method":"prompts/list","params":{"cursor":""}}`)
				}
			}},
		{rule: "pagination/empty-cursor-modern", level: "warning", flags: []string{"-empty-cursor"},
			// In 2026-07-28 nextCursor "" is a cursor: the keeping client
			// asks with it, is answered nextCursor "" again (the cursor it
			// sent) and stops there, as pagination/repeated-cursor asks.
			stdio: func(c *rawStdio, keep bool) {
				c.discover()
				if r := c.call(2, modernReq(2, "prompts/list", "")); string(jsonField(r.Result, "nextCursor")) != `""` {
					c.t.Fatalf("prompts/list answered %s; want nextCursor \"\"", r.line)
				}
				if keep {
					c.call(3, modernReq(3, "prompts/list", `"cursor":""`))
				}
			}},
		{rule: "pagination/repeated-cursor", level: "warning", flags: []string{"-empty-cursor"},
			// Asked with cursor "", the server answers nextCursor "": the
			// breaking client sends it once more.
			stdio: func(c *rawStdio, keep bool) {
				c.discover()
				c.call(2, modernReq(2, "prompts/list", ""))
				c.call(3, modernReq(3, "prompts/list", `"cursor":""`))
				if !keep {
					c.call(4, modernReq(4, "prompts/list", `"cursor":""`))
				}
			}},
		{rule: "server-requests/id-echoed", level: "error",
			// The server asks for the roots with a number id; the
			// breaking client first answers with it as a string, then as
			// sent.
			stdio: func(c *rawStdio, keep bool) {
				c.initialize(mcptest.V20250618, `{"roots":{}}`)
				c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"roots"}}`)
				req := c.message("roots/list")
				id := string(req.ID)
				if strings.HasPrefix(id, `"`) {
					c.t.Fatalf("roots/list with a string id: %s", req.line)
				}
				if !keep {
					c.send(`{"jsonrpc":"2.0","id":"` + id + `","result":{"roots":[]}}`)
				}
				c.send(`{"jsonrpc":"2.0","id":` + id + `,"result":{"roots":[]}}`)
				c.response("2")
			}},
		{rule: "version/discover-retry", level: "warning",
			// Asked for a version it does not speak, the server answers
			// -32022 with the versions it does: the breaking client tries
			// another it does not list first.
			stdio: func(c *rawStdio, keep bool) {
				ask := func(id int, version string) rawMsg {
					return c.call(id, strings.Replace(modernReq(id, "server/discover", ""), mcptest.V20260728, version, 1))
				}
				if r := ask(1, "2099-01-01"); r.Error == nil || r.Error.Code != -32022 || !strings.Contains(string(r.Error.Data), mcptest.V20260728) {
					c.t.Fatalf("server/discover 2099-01-01 answered %s; want -32022 listing 2026-07-28", r.line)
				}
				if !keep {
					ask(2, "2098-01-01")
				}
				if r := ask(3, mcptest.V20260728); r.Result == nil {
					c.t.Fatalf("server/discover 2026-07-28 answered %s", r.line)
				}
			}},
	})
}

// sseStream is the answer to a raw HTTP request, read as an event stream
// (a body of another type is read and dropped).
type sseStream struct {
	t      *testing.T
	ctx    context.Context
	status int
	events chan sse.Event // closed at the end of the stream
	cancel context.CancelFunc
}

// openSSE sends a raw request with hdr (and body, unless empty) and reads
// its answer's events as they come.
func openSSE(t *testing.T, method, url, body string, hdr map[string]string) *sseStream {
	t.Helper()
	ctx, cancel := context.WithCancel(testCtx(t))
	t.Cleanup(cancel)
	resp := rawRequest(t, ctx, method, url, body, hdr)
	s := &sseStream{t: t, ctx: ctx, status: resp.StatusCode, events: make(chan sse.Event, 16), cancel: cancel}
	go func() {
		defer close(s.events)
		defer resp.Body.Close()
		if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			_, _ = io.Copy(io.Discard, resp.Body)
			return
		}
		r := sse.NewReader(resp.Body)
		for {
			ev, err := r.Next()
			if err != nil {
				return
			}
			select {
			case s.events <- ev:
			case <-ctx.Done():
				return
			}
		}
	}()
	return s
}

// await returns the next event match accepts, dropping the others.
func (s *sseStream) await(what string, match func(ev sse.Event) bool) sse.Event {
	s.t.Helper()
	for {
		select {
		case ev, ok := <-s.events:
			if !ok {
				s.t.Fatalf("the stream ended before %s", what)
			}
			if match(ev) {
				return ev
			}
		case <-s.ctx.Done():
			s.t.Fatalf("no %s on the stream", what)
		}
	}
}

// rest returns the events up to the end of the stream.
func (s *sseStream) rest() []sse.Event {
	s.t.Helper()
	var out []sse.Event
	for {
		select {
		case ev, ok := <-s.events:
			if !ok {
				return out
			}
			out = append(out, ev)
		case <-s.ctx.Done():
			s.t.Fatalf("the stream did not end")
		}
	}
}

// answers reports whether ev carries the response with id.
func answers(ev sse.Event, id string) bool {
	var m rawMsg
	return json.Unmarshal(ev.Data, &m) == nil && m.Method == "" && string(m.ID) == id
}

// rawReconnect opens a 2025-11-25 session and calls tool reconnect, whose
// stream the -eventstore server closes after progress "before", asking
// for a resumption after a retry. It returns the session's headers, the
// event ids of the stream and the retry.
func rawReconnect(t *testing.T, url string) (map[string]string, []string, time.Duration) {
	t.Helper()
	sid := rawPost(t, url, initializeReq(mcptest.V20251125, `{}`), nil)
	hdr := map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": mcptest.V20251125}
	rawPost(t, url, initializedNote, hdr)
	var ids []string
	retry := -1
	for _, ev := range openSSE(t, "POST", url, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"reconnect","_meta":{"progressToken":"r"}}}`, hdr).rest() {
		if ev.HasID && ev.ID != "" {
			ids = append(ids, ev.ID)
		}
		if ev.Retry >= 0 {
			retry = ev.Retry
		}
		if answers(ev, "2") {
			t.Fatalf("tool reconnect answered on its first stream: is the server's event store on?")
		}
	}
	if len(ids) < 2 || retry < 0 {
		t.Fatalf("the reconnect stream had event ids %q and retry %d; want a priming event, progress and a retry", ids, retry)
	}
	return hdr, ids, time.Duration(retry) * time.Millisecond
}

// rawResume resumes the reconnect call with Last-Event-ID id and reads
// until its answer (or the end of the stream).
func rawResume(t *testing.T, url string, hdr map[string]string, id string) {
	t.Helper()
	h := map[string]string{"Last-Event-ID": id}
	for k, v := range hdr {
		h[k] = v
	}
	s := openSSE(t, "GET", url, "", h)
	defer s.cancel()
	for {
		select {
		case ev, ok := <-s.events:
			if !ok || answers(ev, "2") {
				return
			}
		case <-s.ctx.Done():
			t.Fatalf("the resumed stream neither answered nor ended")
		}
	}
}

// TestAuditRaw_HTTP: raw clients of the Go SDK test server over
// Streamable HTTP and HTTP+SSE.
func TestAuditRaw_HTTP(t *testing.T) {
	parallel(t)
	stateless := []string{"-transport", "http", "-stateless"}
	modernHdr := func(method string, more ...string) map[string]string {
		h := map[string]string{"MCP-Protocol-Version": mcptest.V20260728, "Mcp-Method": method}
		for i := 0; i+1 < len(more); i += 2 {
			h[more[i]] = more[i+1]
		}
		return h
	}
	runRawCases(t, []rawCase{
		{rule: "http/mcp-method", level: "error", flags: stateless,
			// A client that leaves Mcp-Method out.
			http: func(t *testing.T, url string, keep bool) {
				h := modernHdr("tools/list")
				if !keep {
					delete(h, "Mcp-Method")
				}
				rawPost(t, url, modernReq(1, "tools/list", ""), h)
			}},
		{rule: "http/header-encoding", level: "error", flags: stateless,
			// Mcp-Name of a URI outside ASCII: sent as is, not as the
			// Base64 sentinel.
			http: func(t *testing.T, url string, keep bool) {
				uri := "test://items/zürich"
				name := uri
				if keep {
					name = "=?base64?" + base64.StdEncoding.EncodeToString([]byte(uri)) + "?="
				}
				rawPost(t, url, modernReq(1, "resources/read", `"uri":"`+uri+`"`), modernHdr("resources/read", "Mcp-Name", name))
			}},
		{rule: "http/mcp-param-integer-range", level: "error", flags: append(slices.Clone(stateless), "-header-tool"),
			// Tool lookup's id is an x-mcp-header integer: the breaking
			// client calls it with 2^53+1 (mirrored in Mcp-Param-Id, as
			// http/mcp-param asks), where it must refuse the call.
			http: func(t *testing.T, url string, keep bool) {
				rawPost(t, url, modernReq(1, "tools/list", ""), modernHdr("tools/list"))
				id := "9007199254740993"
				if keep {
					id = "42"
				}
				rawPost(t, url, modernReq(2, "tools/call", `"name":"lookup","arguments":{"id":`+id+`}`), modernHdr("tools/call", "Mcp-Name", "lookup", "Mcp-Param-Id", id))
			}},
		{name: "http/get-stream/modern", rule: "http/get-stream", level: "error", flags: stateless,
			// A 2026-07-28 client that opens the standalone GET stream
			// (the server refuses it, 405). It opens it twice: mcpvcr
			// record files the first GET of a session without a
			// server-minted id as a possible HTTP+SSE stream (sse#, a
			// 405 does not correct it), which this rule does not read.
			http: func(t *testing.T, url string, keep bool) {
				rawPost(t, url, modernReq(1, "tools/list", ""), modernHdr("tools/list"))
				if !keep {
					rawGet(t, url, map[string]string{"MCP-Protocol-Version": mcptest.V20260728})
					rawGet(t, url, map[string]string{"MCP-Protocol-Version": mcptest.V20260728})
				}
			}},
		{name: "http/get-stream/after-405", rule: "http/get-stream", level: "error", flags: stateless,
			// A 2025-11-25 client of the stateless server, whose GET is
			// refused with 405: one more try is allowed (keep: two
			// GETs), a loop is not. The breaking client opens it four
			// times where three are already a loop: the first GET is
			// filed as sse# (see the case above) and not counted.
			http: func(t *testing.T, url string, keep bool) {
				rawPost(t, url, initializeReq(mcptest.V20251125, `{}`), nil)
				h := map[string]string{"MCP-Protocol-Version": mcptest.V20251125}
				rawPost(t, url, initializedNote, h)
				n := 4
				if keep {
					n = 2
				}
				for range n {
					rawGet(t, url, h)
				}
			}},
		{rule: "resume/last-event-id", level: "error", flags: []string{"-transport", "http", "-eventstore"},
			// The breaking client resumes from the first event id it got
			// (the priming event's), not the last.
			http: func(t *testing.T, url string, keep bool) {
				hdr, ids, retry := rawReconnect(t, url)
				// The wait the server asked for, as resume/retry-delay
				// requires. Not synchronisation: the rule reads the
				// recorded gap between the cut and the resumption, so
				// the keeping client must really let that time pass,
				// and a sleep is the only way to.
				time.Sleep(retry)
				id := ids[len(ids)-1]
				if !keep {
					id = ids[0]
				}
				rawResume(t, url, hdr, id)
			}},
		{rule: "resume/retry-delay", level: "warning", flags: []string{"-transport", "http", "-eventstore"},
			// The keeping client waits the retry and resumes once; the
			// breaking one resumes at once, eleven times: the eleventh
			// resumption of one stream is beyond the bound whatever the
			// timing (the first, at once, is likely before the retry too).
			http: func(t *testing.T, url string, keep bool) {
				hdr, ids, retry := rawReconnect(t, url)
				last := ids[len(ids)-1]
				if keep {
					time.Sleep(retry) // as above: the wait under audit, which only a sleep makes
					rawResume(t, url, hdr, last)
					return
				}
				for range 11 {
					rawResume(t, url, hdr, last)
				}
			}},
		{rule: "sse/endpoint", level: "error", flags: []string{"-transport", "sse"},
			// A client falling back from Streamable HTTP: its initialize
			// POSTed to the URL is refused (400), so it opens the SSE
			// stream and posts to the endpoint it names, but for the
			// breaking client's tools/list, POSTed to the URL again.
			// (mcpvcr record files a POST to another URL than an endpoint
			// under the session without a server-minted id: here the
			// fallback's.)
			http: func(t *testing.T, url string, keep bool) {
				rawPost(t, url, initializeReq(mcptest.V20241105, `{}`), nil)
				s := openSSE(t, "GET", url, "", nil)
				defer s.cancel()
				ev := s.await("the endpoint event", func(ev sse.Event) bool { return ev.Type == "endpoint" })
				endpoint := strings.TrimSuffix(url, "/sse") + string(ev.Data)
				if !strings.HasPrefix(string(ev.Data), "/") {
					t.Fatalf("endpoint %q: want a path", ev.Data)
				}
				rawPost(t, endpoint, initializeReq(mcptest.V20241105, `{}`), nil)
				s.await("the initialize answer", func(ev sse.Event) bool { return answers(ev, "1") })
				rawPost(t, endpoint, initializedNote, nil)
				target := url
				if keep {
					target = endpoint
				}
				rawPost(t, target, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, nil)
				if keep {
					s.await("the tools/list answer", func(ev sse.Event) bool { return answers(ev, "2") })
				}
			}},
	})
}
