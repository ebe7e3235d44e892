package probe

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
	"github.com/mcpvcr/mcpvcr/internal/recordtest"
	"github.com/mcpvcr/mcpvcr/internal/sse"
	"github.com/mcpvcr/mcpvcr/store"
)

// recordSSE records the Go SDK client against the Go SDK test server
// over the 2024-11-05 HTTP+SSE transport, through recorder.HTTP: it lists
// the tools, calls echo, lists prompts and calls roots.
func recordSSE(t *testing.T) []*store.Recording {
	t.Helper()
	return recordSSEWith(t, nil, func(ctx context.Context, url string) { goSDKSSE(ctx, t, url) })
}

// recordSSEWith records client against the Go SDK test server, which
// speaks versions (nil: every one), over HTTP+SSE through recorder.HTTP.
func recordSSEWith(t *testing.T, versions []string, client func(ctx context.Context, url string)) []*store.Recording {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	srv := mcptest.ServerConfig{Versions: versions}.NewServer()
	h := mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	recs := recordtest.HTTP(ctx, t, h, "/sse", func(endpoint string) { client(ctx, endpoint) })
	if len(recs) == 0 || recs[0].Session.Transport != store.LegacySSE {
		t.Fatalf("recorded %d sessions, the first over %v; want HTTP+SSE", len(recs), revision(recs))
	}
	return recs
}

// goSDKSSE runs the Go SDK client over HTTP+SSE against url as goSDK
// does over Streamable HTTP: it lists the tools page by page, calls echo,
// lists prompts, calls roots and closes.
func goSDKSSE(ctx context.Context, t *testing.T, url string) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	cs, err := mcptest.NewClient().Connect(ctx, &mcp.SSEClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: mcptest.V20241105})
	if err != nil {
		t.Logf("connect: %v", err)
		return
	}
	defer cs.Close()
	n := 0
	for _, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Logf("tools: %v", err)
			break
		}
		if n++; n > 50 {
			break
		}
	}
	for _, call := range []*mcp.CallToolParams{{Name: "echo", Arguments: map[string]any{"text": "hi"}}, {Name: "roots", Arguments: map[string]any{}}} {
		if _, err := cs.CallTool(ctx, call); err != nil {
			t.Logf("%s: %v", call.Name, err)
		}
	}
}

// TestGoSDKSSE: the Go SDK v1.8.0 client under each probe over HTTP+SSE,
// on a fresh recording of its own; the verdicts of goSDKSSECases.
func TestGoSDKSSE(t *testing.T) {
	recs := recordSSE(t)
	for _, tc := range goSDKSSECases {
		t.Run(tc.kind.String()+"/"+tc.version, func(t *testing.T) {
			res, report := replay(t, recs, []Kind{tc.kind}, func(url string) { goSDKSSE(t.Context(), t, url) })
			if r := one(t, res, report); r.Verdict != tc.want {
				t.Errorf("the Go SDK client over HTTP+SSE: %s (%s); want %s as docs/probes.md says", r.Verdict, r.Did, tc.want)
			}
		})
	}
}

// sseRaw is a raw JSON-RPC client over HTTP+SSE: its GET stream's
// messages come on msgs, its messages are POSTed to the endpoint the
// stream named.
type sseRaw struct {
	t        *testing.T
	endpoint string
	msgs     chan map[string]json.RawMessage
	c        *raw // for the recorded bodies
}

// openSSE opens the stream of the replay at url and waits for its
// endpoint; the stream ends with the test.
func openSSE(t *testing.T, url string, recs []*store.Recording) *sseRaw {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	s := &sseRaw{t: t, msgs: make(chan map[string]json.RawMessage, 16), c: &raw{t: t, rec: recs[0], version: recs[0].Session.Revision}}
	endpoint := make(chan string, 1)
	go func() {
		defer resp.Body.Close()
		r := sse.NewReader(resp.Body)
		for {
			e, err := r.Next()
			if err != nil || e.Partial {
				close(s.msgs)
				return
			}
			if e.Type == "endpoint" {
				endpoint <- string(e.Data)
				continue
			}
			var m map[string]json.RawMessage
			if json.Unmarshal(e.Data, &m) == nil {
				s.msgs <- m
			}
		}
	}()
	ep := <-endpoint
	if !strings.HasPrefix(ep, "http") {
		ep = strings.TrimSuffix(url, req.URL.Path) + ep
	}
	s.endpoint = ep
	return s
}

// post POSTs body to the endpoint.
func (s *sseRaw) post(body []byte) {
	s.t.Helper()
	resp, err := http.Post(s.endpoint, "application/json", bytes.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

// send POSTs the recorded client's method (see raw.body) and reads the
// stream up to the answer to it; a server request on the way is handed
// to answer.
func (s *sseRaw) send(method string, edit func(map[string]any), answer func(m map[string]json.RawMessage)) map[string]json.RawMessage {
	s.t.Helper()
	body := s.c.body(method, edit)
	s.post(body)
	var sent map[string]json.RawMessage
	_ = json.Unmarshal(body, &sent)
	if sent["id"] == nil {
		return nil
	}
	for m := range s.msgs {
		if m["method"] != nil && m["id"] != nil && answer != nil {
			answer(m)
			continue
		}
		if string(m["id"]) == string(sent["id"]) && m["method"] == nil {
			return m
		}
	}
	s.t.Fatalf("the stream ended before the answer to %s", method)
	return nil
}

// TestSSE_Raw: over HTTP+SSE, raw clients keep and break string-id (the
// answer's id as sent, or as a number) and empty-cursor (asking again
// with cursor "", which before 2026-07-28 ends the list).
func TestSSE_Raw(t *testing.T) {
	recs := recordSSE(t)
	for _, keep := range []bool{false, true} {
		res, report := replay(t, recs, []Kind{StringID}, func(url string) {
			s := openSSE(t, url, recs)
			s.send("initialize", nil, nil)
			s.send("notifications/initialized", nil, nil)
			s.send("tools/list", nil, nil)
			s.send("tools/call", nil, nil) // echo: one stream holds the answers in recorded order
			m := s.send("tools/call", func(p map[string]any) { p["name"] = "roots"; p["arguments"] = map[string]any{} }, func(m map[string]json.RawMessage) {
				id := m["id"]
				if !keep {
					id = json.RawMessage(strings.Trim(string(id), `"`))
				}
				s.post(s.c.recordedAnswer(id))
			})
			if m["result"] == nil {
				t.Errorf("keep=%v: the roots call was answered %v; want its result", keep, m)
			}
		})
		r := one(t, res, report)
		if want := map[bool]Verdict{false: VerdictFail, true: VerdictPass}[keep]; r.Verdict != want {
			t.Errorf("string-id keep=%v: verdict %s (%s); want %s", keep, r.Verdict, r.Did, want)
		}
		res, report = replay(t, recs, []Kind{EmptyCursor}, func(url string) {
			s := openSSE(t, url, recs)
			s.send("initialize", nil, nil)
			s.send("notifications/initialized", nil, nil)
			if m := s.send("tools/list", nil, nil); !containsCursor(string(m["result"]), `""`) {
				t.Errorf("the first page %s has no nextCursor \"\"", m["result"])
			}
			if !keep {
				s.send("tools/list", cursorEdit(""), nil)
			}
			s.send("tools/call", nil, nil)
		})
		r = one(t, res, report)
		if want := map[bool]Verdict{false: VerdictFail, true: VerdictPass}[keep]; r.Verdict != want {
			t.Errorf("empty-cursor keep=%v: verdict %s (%s); want %s", keep, r.Verdict, r.Did, want)
		}
	}
}

// TestTSClientSSE: the TypeScript SDK 1.32.2 client over HTTP+SSE under
// each probe that acts there, at the revisions it speaks (2025-11-25, and
// 2024-11-05 to a server that speaks only that), on a fresh recording of
// its own; the verdicts of tsSSECases.
func TestTSClientSSE(t *testing.T) {
	nodeBin := mcptest.Everything(t)[0]
	ts := func(ctx context.Context, url string) {
		node(ctx, t, []string{nodeBin, tsScript, url}, "TRANSPORT=sse")
	}
	recs := map[string][]*store.Recording{}
	for _, tc := range tsSSECases {
		t.Run(tc.kind.String()+"/"+tc.version, func(t *testing.T) {
			if recs[tc.version] == nil {
				recs[tc.version] = recordSSEWith(t, []string{tc.version}, ts)
			}
			res, report := replay(t, recs[tc.version], []Kind{tc.kind}, func(url string) { ts(t.Context(), url) })
			if r := one(t, res, report); r.Verdict != tc.want {
				t.Errorf("the TypeScript client over HTTP+SSE: %s (%s); want %s as docs/probes.md says", r.Verdict, r.Did, tc.want)
			}
		})
	}
}

// TestInspectorCLISSE: Inspector's CLI over HTTP+SSE under empty-cursor,
// on a fresh recording of its own (one run lists the tools, a second
// calls echo); the verdicts of inspectorSSECases.
func TestInspectorCLISSE(t *testing.T) {
	cli := mcptest.InspectorCLI(t)
	catalog := "MCP_CATALOG_PATH=" + filepath.Join(t.TempDir(), "mcp.json")
	inspector := func(ctx context.Context, url string) {
		base := append(append([]string{}, cli...), url, "--transport", "sse")
		node(ctx, t, append(base, "--method", "tools/list"), catalog)
		node(ctx, t, append(append([]string{}, base...), "--method", "tools/call", "--tool-name", "echo", "--tool-arg", "text=hi"), catalog)
	}
	var recs []*store.Recording
	for _, tc := range inspectorSSECases {
		t.Run(tc.kind.String()+"/"+tc.version, func(t *testing.T) {
			if recs == nil {
				recs = recordSSEWith(t, []string{tc.version}, inspector)
			}
			res, report := replay(t, recs, []Kind{tc.kind}, func(url string) { inspector(t.Context(), url) })
			if r := one(t, res, report); r.Verdict != tc.want {
				t.Errorf("Inspector's CLI over HTTP+SSE: %s (%s); want %s as docs/probes.md says", r.Verdict, r.Did, tc.want)
			}
		})
	}
}
