package replayer

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpvcr/mcpvcr/internal/storetest"
)

// manyHTTPSessions returns the JSONL export of n Streamable HTTP
// sessions, each with its own Mcp-Session-Id, that share their opening
// (initialize, notifications/initialized, tools/list) and then each call
// echo with a text of their own (and a "when" of their own, for --ignore).
func manyHTTPSessions(n int) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(map[string]any{"type": "mcpvcr", "version": 1})
	stream := 0
	for s := 1; s <= n; s++ {
		sid := fmt.Sprintf("SID%d", s)
		_ = enc.Encode(map[string]any{"type": "session", "id": s, "transport": "http", "revision": "2025-11-25", "era": "legacy",
			"upstream": "http://127.0.0.1:9/mcp", "external_id": sid,
			"started_at": "2026-01-01T00:00:00Z", "ended_at": "2026-01-01T00:00:01Z", "exit_code": -1})
		exchanges := [][2]string{
			{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","clientInfo":{"name":"rec","version":"1.0"}}}`,
				`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","serverInfo":{"name":"s","version":"1"}}}`},
			{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, ""},
			{`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, `{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"echo"}]}}`},
			{fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"s%d","when":"t%d"}}}`, s, s),
				fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"from session %d"}]}}`, s)},
		}
		var frames []map[string]any
		for i, x := range exchanges {
			stream++
			req := http.Header{"Accept": {"application/json, text/event-stream"}, "Content-Type": {"application/json"}}
			resp := http.Header{}
			status := 202
			if i > 0 {
				req["Mcp-Session-Id"] = []string{sid}
			}
			if x[1] != "" {
				status = 200
				resp["Content-Type"] = []string{"application/json"}
				if i == 0 {
					resp["Mcp-Session-Id"] = []string{sid}
				}
			}
			_ = enc.Encode(map[string]any{"type": "stream", "id": stream, "session": s, "kind": "post", "method": "POST", "url": "/mcp",
				"status": status, "opened_ns": 10 * (i + 1), "closed_ns": 10*(i+1) + 5, "end": "complete", "request_header": req, "response_header": resp})
			frames = append(frames, map[string]any{"type": "frame", "session": s, "stream": stream, "dir": "c2s", "offset_ns": 10*(i+1) + 1, "raw": x[0]})
			if x[1] != "" {
				frames = append(frames, map[string]any{"type": "frame", "session": s, "stream": stream, "dir": "s2c", "offset_ns": 10*(i+1) + 2, "raw": x[1]})
			}
		}
		for i, f := range frames {
			f["seq"] = i + 1
			_ = enc.Encode(f)
		}
	}
	return b.String()
}

// TestServer_LoadHTTPReadsCandidatesInPlay replays 200 Streamable HTTP
// sessions that share their opening to clients with another clientInfo,
// under the tolerant default and under other rules: Load reads them
// through a Source, and each client gets the answers of the session its
// call names while replay loads only a few sessions.
func TestServer_LoadHTTPReadsCandidatesInPlay(t *testing.T) {
	ctx := context.Background()
	db, ids := storetest.Import(t, manyHTTPSessions(200))
	tests := []struct {
		name       string
		mt         Match
		clientInfo string
		when       string
	}{
		{"Tolerant", Match{}, `{"name":"other","version":"2.0"}`, "t%d"},
		{"Ignore", Match{Ignore: []Rule{ignoreArg("when")}}, `{"name":"other","version":"2.0"}`, "now"},
		{"ExactIgnore", Match{Exact: true, Ignore: []Rule{ignoreArg("when")}}, `{"name":"rec","version":"1.0"}`, "now"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := &Server{Match: tt.mt}
			if err := srv.Load(ctx, db, ids); err != nil {
				t.Fatal(err)
			}
			if srv.Source == nil || len(srv.Recordings) != 0 {
				t.Fatalf("Load of 200 HTTP sessions: Source %v, %d Recordings; want a Source", srv.Source != nil, len(srv.Recordings))
			}
			hs := httptest.NewServer(srv)
			t.Cleanup(hs.Close)
			t.Cleanup(srv.Close)
			before := srv.Source.ix.Loads()
			for _, want := range []int{137, 1, 42} {
				post := func(sid, body string) (string, string) {
					t.Helper()
					req, _ := http.NewRequest(http.MethodPost, hs.URL+"/mcp", strings.NewReader(body))
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Accept", "application/json, text/event-stream")
					if sid != "" {
						req.Header.Set("Mcp-Session-Id", sid)
					}
					resp, err := hs.Client().Do(req)
					if err != nil {
						t.Fatal(err)
					}
					defer resp.Body.Close()
					b, _ := io.ReadAll(resp.Body)
					return resp.Header.Get("Mcp-Session-Id"), strings.TrimSpace(string(b))
				}
				sid, got := post("", `{"jsonrpc":"2.0","id":10,"method":"initialize","params":{"protocolVersion":"2025-11-25","clientInfo":`+tt.clientInfo+`}}`)
				if want := `{"jsonrpc":"2.0","id":10,"result":{"protocolVersion":"2025-11-25","serverInfo":{"name":"s","version":"1"}}}`; got != want || sid == "" {
					t.Fatalf("initialize = %s (session %q); want %s and a session id", got, sid, want)
				}
				post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
				if _, got := post(sid, `{"jsonrpc":"2.0","id":11,"method":"tools/list"}`); got != `{"jsonrpc":"2.0","id":11,"result":{"tools":[{"name":"echo"}]}}` {
					t.Errorf("tools/list = %s", got)
				}
				when := tt.when
				if strings.Contains(when, "%d") {
					when = fmt.Sprintf(when, want)
				}
				_, got = post(sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"echo","arguments":{"text":"s%d","when":%q}}}`, want, when))
				if w := fmt.Sprintf(`{"jsonrpc":"2.0","id":12,"result":{"content":[{"type":"text","text":"from session %d"}]}}`, want); got != w {
					t.Errorf("client of session %d: tools/call = %s; want %s", want, got, w)
				}
			}
			if n := srv.Source.ix.Loads() - before; n > 6 {
				t.Errorf("three clients loaded %d sessions of 200; want at most 6", n)
			}
			for _, rep := range srv.Reports() {
				if !rep.OK() || rep.Candidates != 1 {
					t.Errorf("report of session %d: %d mismatches, %d candidates; want none and 1", rep.SessionID, len(rep.Mismatches), rep.Candidates)
				}
			}
		})
	}
}

// TestServer_LoadHTTPDiscover: a dual-era client's server/discover probe
// to a replay of many legacy HTTP sessions from a Source is refused as a
// legacy server refuses it, without loading every session to learn that
// none holds one.
func TestServer_LoadHTTPDiscover(t *testing.T) {
	ctx := context.Background()
	db, ids := storetest.Import(t, manyHTTPSessions(50))
	srv := &Server{}
	if err := srv.Load(ctx, db, ids); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	t.Cleanup(srv.Close)
	before := srv.Source.ix.Loads()
	resp, err := hs.Client().Post(hs.URL+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "legacy") {
		t.Errorf("server/discover = %d %s; want 400 as a legacy server answers", resp.StatusCode, b)
	}
	if n := srv.Source.ix.Loads() - before; n > 1 || len(srv.all) > 0 {
		t.Errorf("server/discover loaded %d sessions (%d at once); want at most 1", n, len(srv.all))
	}
}
