package probe

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/clock"
	"github.com/mcpvcr/mcpvcr/internal/mcptest"
	"github.com/mcpvcr/mcpvcr/internal/recordtest"
	"github.com/mcpvcr/mcpvcr/internal/sse"
	"github.com/mcpvcr/mcpvcr/replayer"
	"github.com/mcpvcr/mcpvcr/store"
)

// record records the Go SDK client at version against the Go SDK test
// server over Streamable HTTP (stateless for 2026-07-28), through
// recorder.HTTP: it lists tools, calls echo "hi", lists prompts, calls
// roots (legacy: the server asks roots/list) and closes.
func record(t *testing.T, version string) []*store.Recording { return recordWith(t, version, nil) }

// recordWith is record with a client whose options edit changed (nil:
// none); a client with a ToolListChangedHandler opens a
// subscriptions/listen in 2026-07-28.
func recordWith(t *testing.T, version string, edit func(*mcp.ClientOptions)) []*store.Recording {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	srv := mcptest.NewServer("")
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: mcptest.Modern(version)})
	recs := recordtest.HTTP(ctx, t, h, "/mcp", func(endpoint string) {
		client := mcptest.NewClientWith(&mcp.Implementation{Name: mcptest.ClientName, Version: mcptest.ClientVersion}, edit)
		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint}, &mcp.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		if _, err := cs.ListTools(ctx, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}}); err != nil {
			t.Fatal(err)
		}
		if _, err := cs.ListPrompts(ctx, nil); err != nil {
			t.Fatal(err)
		}
		if !mcptest.Modern(version) { // a server request: roots/list
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "roots", Arguments: map[string]any{}}); err != nil {
				t.Fatal(err)
			}
		}
	})
	return recs
}

var (
	recMu    sync.Mutex
	recCache = map[string][]*store.Recording{}
)

// recorded is record, once per version per test binary.
func recorded(t *testing.T, version string) []*store.Recording {
	t.Helper()
	return cached(t, version, func() []*store.Recording { return record(t, version) })
}

// listening returns, once per test binary, a 2026-07-28 recording of the
// Go SDK client that listens for tools/list_changed: it opens a
// subscriptions/listen when it connects.
func listening(t *testing.T) []*store.Recording {
	t.Helper()
	return cached(t, "listen", func() []*store.Recording { return recordWith(t, modern, listenOpts) })
}

// listenOpts gives the client a ToolListChangedHandler.
func listenOpts(o *mcp.ClientOptions) {
	o.ToolListChangedHandler = func(context.Context, *mcp.ToolListChangedRequest) {}
}

// cached returns what make made for name, once per test binary.
func cached(t *testing.T, name string, make func() []*store.Recording) []*store.Recording {
	t.Helper()
	recMu.Lock()
	defer recMu.Unlock()
	if r, ok := recCache[name]; ok {
		return r
	}
	r := make()
	recCache[name] = r
	return r
}

// replay serves recs with a probe Hook of kinds to run, closes the server
// once run returns, and returns the Hook's results and report.
func replay(t *testing.T, recs []*store.Recording, kinds []Kind, run func(url string)) ([]Result, string) {
	t.Helper()
	return replayOn(t, recs, kinds, nil, run)
}

// replayOn is replay on clk, replay's clock (nil: the real one).
func replayOn(t *testing.T, recs []*store.Recording, kinds []Kind, clk clock.Clock, run func(url string)) ([]Result, string) {
	t.Helper()
	var logs strings.Builder
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(writerFunc(func(b []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logs.Write(b)
	}), nil))
	h := New(kinds, logger)
	// A page the probe answered itself in a legacy session would leave
	// the recorded tools/list unserved, and what the recording ordered
	// after it would wait Wait for it: the log says so, and the test
	// fails. (Raw clients that stop before the recording ends leave
	// replay waiting for the rest, which is not the probe's doing.)
	srv := &replayer.Server{Recordings: recs, Hook: h, Logger: logger, Wait: 5 * time.Second, Clock: clk}
	ts := httptest.NewServer(srv)
	began := time.Now()
	run(ts.URL + "/mcp")
	ran := time.Since(began)
	ts.CloseClientConnections()
	ts.Close()
	srv.Close()
	if d := time.Since(began); d > 3*time.Second {
		mu.Lock()
		t.Logf("SLOW: the client ran %v, the replay closed after %v:\n%s", ran, d, logs.String())
		mu.Unlock()
	}
	var out strings.Builder
	h.Write(&out, "")
	mu.Lock()
	defer mu.Unlock()
	if strings.Contains(logs.String(), "after --wait") && strings.Contains(logs.String(), "(request tools/list)") {
		t.Errorf("replay waited for a recorded request the client had sent (a request the probe answered itself):\n%s", logs.String())
	}
	return h.Results(), out.String() + logs.String()
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

// raw is a raw JSON-RPC client over Streamable HTTP: a few lines of Go
// that keep or break a rule as its test decides.
type raw struct {
	t       *testing.T
	url     string
	version string
	sid     string
	id      int
	rec     *store.Recording
}

// body returns the recorded client's first request of method, its
// params changed by edit (nil: none) and its id renumbered.
func (c *raw) body(method string, edit func(params map[string]any)) []byte {
	c.t.Helper()
	for i := range c.rec.Frames {
		f := &c.rec.Frames[i]
		if f.Direction != store.ClientToServer || f.Method != method {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(f.Data, &m); err != nil {
			c.t.Fatal(err)
		}
		if edit != nil {
			p, _ := m["params"].(map[string]any)
			if p == nil {
				p = map[string]any{}
			}
			edit(p)
			m["params"] = p
		}
		if _, ok := m["id"]; ok {
			c.id++
			m["id"] = 100 + c.id
		}
		b, _ := json.Marshal(m)
		return b
	}
	c.t.Fatalf("the recording has no %s", method)
	return nil
}

// send sends the recorded client's method (see body) and returns the
// status and the JSON-RPC message of the answer (the last data of an
// event stream).
func (c *raw) send(method string, edit func(params map[string]any)) (int, map[string]json.RawMessage) {
	c.t.Helper()
	body := c.body(method, edit)
	req, err := http.NewRequestWithContext(c.t.Context(), http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.sid != "" && method != "initialize" {
		req.Header.Set("Mcp-Session-Id", c.sid)
	}
	if mcptest.Modern(c.version) {
		req.Header.Set("MCP-Protocol-Version", c.version)
		req.Header.Set("Mcp-Method", method)
	} else if method != "initialize" && c.version >= "2025-06-18" {
		req.Header.Set("MCP-Protocol-Version", c.version)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	if s := resp.Header.Get("Mcp-Session-Id"); s != "" && method == "initialize" {
		c.sid = s
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		var m map[string]json.RawMessage
		_ = json.Unmarshal(b, &m)
		return resp.StatusCode, m
	}
	// An event stream: read up to the answer, as a client does, not to
	// the stream's end (a recorded stream may have ended only after the
	// client's next request).
	r := sse.NewReader(resp.Body)
	for {
		e, err := r.Next()
		if err != nil || e.Partial {
			return resp.StatusCode, nil
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(e.Data, &m) != nil {
			continue
		}
		if _, ok := m["method"]; !ok {
			return resp.StatusCode, m
		}
	}
}

// start begins the session: initialize and initialized (legacy), or
// server/discover (2026-07-28), as the recorded Go SDK client did.
func (c *raw) start() {
	c.t.Helper()
	if mcptest.Modern(c.version) {
		c.send("server/discover", nil)
		return
	}
	c.sid = ""
	c.send("initialize", nil)
	c.send("notifications/initialized", nil)
}

// newRaw returns a raw client of the replay at url of recs[0].
func newRaw(t *testing.T, url string, recs []*store.Recording) *raw {
	return &raw{t: t, url: url, version: recs[0].Session.Revision, rec: recs[0]}
}

// one returns the one result, failing t otherwise.
func one(t *testing.T, res []Result, report string) Result {
	t.Helper()
	if len(res) != 1 {
		t.Fatalf("%d probes placed; want 1\n%s", len(res), report)
	}
	t.Logf("%s", report)
	return res[0]
}

// callRoots calls the recorded roots tool and answers the server's
// roots/list on its stream with the recorded client's answer, its id the
// one the request came with (asSent) or, when not, that id as a number.
// It returns the id the request came with and whether the call got its
// result.
func (c *raw) callRoots(asSent bool) (string, bool) {
	c.t.Helper()
	body := c.body("tools/call", func(p map[string]any) { p["name"] = "roots"; p["arguments"] = map[string]any{} })
	req, err := http.NewRequestWithContext(c.t.Context(), http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", c.sid)
	req.Header.Set("MCP-Protocol-Version", c.version)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	r := sse.NewReader(resp.Body)
	got := ""
	for {
		e, err := r.Next()
		if err != nil || e.Partial {
			return got, false
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(e.Data, &m) != nil {
			continue
		}
		if _, ok := m["result"]; ok {
			return got, true
		}
		if string(m["method"]) != `"roots/list"` {
			continue
		}
		got = string(m["id"])
		id := m["id"]
		if !asSent {
			id = json.RawMessage(strings.Trim(got, `"`))
		}
		c.answer(id)
	}
}

// answer POSTs the recorded client's answer to roots/list with id.
func (c *raw) answer(id json.RawMessage) {
	c.t.Helper()
	req, _ := http.NewRequestWithContext(c.t.Context(), http.MethodPost, c.url, bytes.NewReader(c.recordedAnswer(id)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", c.sid)
	req.Header.Set("MCP-Protocol-Version", c.version)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

// recordedAnswer returns the recorded client's answer to its server
// request, with id.
func (c *raw) recordedAnswer(id json.RawMessage) []byte {
	c.t.Helper()
	for i := range c.rec.Frames {
		f := &c.rec.Frames[i]
		if f.Direction != store.ClientToServer || f.Kind != store.KindResult {
			continue
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(f.Data, &m); err != nil {
			c.t.Fatal(err)
		}
		m["id"] = id
		b, _ := json.Marshal(m)
		return b
	}
	c.t.Fatal("the recording has no client answer")
	return nil
}
