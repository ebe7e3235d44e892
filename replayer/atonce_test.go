package replayer

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpvcr/mcpvcr/internal/storetest"
	"github.com/mcpvcr/mcpvcr/store"
)

// mixedHTTPSessions returns the JSONL export of n sessions of
// manyHTTPSessions and, after them, what HTTP replay answers from every
// session at once: a session without a session id whose initialize the
// server refused 403 for a foreign Origin and Host, and a session of one
// OAuth metadata exchange.
func mixedHTTPSessions(n int) string {
	var b strings.Builder
	b.WriteString(manyHTTPSessions(n))
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	stream := 4*n + 1
	refused, oauth := n+1, n+2
	for _, r := range []map[string]any{
		{"type": "session", "id": refused, "transport": "http", "revision": "2025-11-25", "era": "legacy",
			"upstream": "http://127.0.0.1:9/mcp", "started_at": "2026-01-01T00:00:00Z", "ended_at": "2026-01-01T00:00:01Z", "exit_code": -1},
		{"type": "stream", "id": stream, "session": refused, "kind": "post", "method": "POST", "url": "/mcp", "status": 403,
			"opened_ns": 10, "closed_ns": 15, "end": "complete",
			"request_header":  http.Header{"Accept": {"application/json, text/event-stream"}, "Content-Type": {"application/json"}, "Origin": {"http://evil.example"}, "Host": {"evil.example"}},
			"response_header": http.Header{"Content-Type": {"text/plain; charset=utf-8"}}},
		{"type": "frame", "session": refused, "seq": 1, "stream": stream, "dir": "c2s", "offset_ns": 11,
			"raw": `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","clientInfo":{"name":"rec","version":"1.0"}}}`},
		{"type": "frame", "session": refused, "seq": 2, "stream": stream, "dir": "s2c", "offset_ns": 12, "raw": "Forbidden: invalid Origin\n"},
		{"type": "session", "id": oauth, "transport": "http", "revision": "2025-11-25", "era": "legacy", "external_id": "SIDOAUTH",
			"upstream": "http://127.0.0.1:9/mcp", "started_at": "2026-01-01T00:00:00Z", "ended_at": "2026-01-01T00:00:01Z", "exit_code": -1},
		{"type": "stream", "id": stream + 1, "session": oauth, "kind": "http", "method": "GET", "url": "/.well-known/oauth-protected-resource/mcp", "status": 200,
			"opened_ns": 10, "closed_ns": 15, "end": "complete", "response_header": http.Header{"Content-Type": {"application/json"}}},
		{"type": "frame", "session": oauth, "seq": 1, "stream": stream + 1, "dir": "s2c", "offset_ns": 12,
			"raw": `{"resource":"http://127.0.0.1:9/mcp","authorization_servers":["http://127.0.0.1:9"]}`},
	} {
		_ = enc.Encode(r)
	}
	return b.String()
}

// exchange is one request of client traffic and what replay answered.
type exchange struct {
	method, path string
	header       http.Header
	host, body   string
	// sameSession sends the session id replay issued last.
	sameSession bool
}

type answer struct {
	Status      int
	ContentType string
	Body        string
}

// play sends traffic to srv over HTTP and returns the answers.
func play(t *testing.T, srv *Server, traffic []exchange) []answer {
	t.Helper()
	hs := httptest.NewServer(srv)
	defer hs.Close()
	defer srv.Close()
	var out []answer
	sid := ""
	for _, x := range traffic {
		req, err := http.NewRequest(x.method, hs.URL+x.path, strings.NewReader(x.body))
		if err != nil {
			t.Fatal(err)
		}
		for k, vs := range x.header {
			req.Header[k] = vs
		}
		if x.host != "" {
			req.Host = x.host
		}
		if x.sameSession && sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		resp, err := hs.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if s := resp.Header.Get("Mcp-Session-Id"); s != "" {
			sid = s
		}
		// The replay server's address is the test's own each run.
		body := strings.ReplaceAll(string(b), hs.URL, "http://REPLAY")
		out = append(out, answer{resp.StatusCode, resp.Header.Get("Content-Type"), body})
	}
	return out
}

// recordedTraffic returns the POSTs of sessions ids of db as their client
// sent them (the bodies with another clientInfo), in order: those whose
// answer the recording holds whole.
func recordedTraffic(t *testing.T, db *store.DB, ids ...int64) []exchange {
	t.Helper()
	recs, err := db.Recordings(context.Background(), ids...)
	if err != nil {
		t.Fatal(err)
	}
	var out []exchange
	for _, rec := range recs {
		for _, st := range rec.Streams {
			if st.Kind != store.PostStream || st.Status == 0 || st.End != store.EndComplete {
				continue
			}
			var body string
			for _, f := range rec.Frames {
				if f.StreamID == st.ID && f.Direction == store.ClientToServer {
					body = string(f.Data)
					break
				}
			}
			if strings.Contains(body, "subscriptions/listen") {
				continue // held open until the client leaves
			}
			body = strings.ReplaceAll(body, `"mcpvcr-suite"`, `"another-client"`)
			h := http.Header{}
			for k, vs := range st.RequestHeader {
				if k != "Content-Length" && k != "Accept-Encoding" && k != "Mcp-Session-Id" && k != "Host" {
					h[k] = vs
				}
			}
			out = append(out, exchange{method: st.Method, path: "/mcp", header: h, body: body, sameSession: st.RequestHeader.Get("Mcp-Session-Id") != ""})
		}
	}
	return out
}

// TestServer_LoadHTTPAtOnceLazily replays, eagerly (every session loaded)
// and through Load (a Source and the index of what is answered from
// every session at once), the same client traffic with another
// clientInfo to cassettes of sessions that share their opening frames:
// 2026-07-28 exchanges, a request refused for its shape by a session
// without a session id, a request of a shape never recorded (the OAuth
// exchanges, which authwire.Handler answers, are tested there). The answers are the same byte for byte, and Load's replay
// loads only the sessions the answers come from, never all at once; the
// index is stored, so that the next replay builds nothing.
func TestServer_LoadHTTPAtOnceLazily(t *testing.T) {
	modern, err := os.ReadFile("../cassettes/multi-gosdk-http-2026-07-28.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	json := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
	conversation := func(s int) []exchange {
		return []exchange{
			{method: "POST", path: "/mcp", header: json, body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","clientInfo":{"name":"other","version":"2.0"}}}`},
			{method: "POST", path: "/mcp", header: json, sameSession: true, body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
			{method: "POST", path: "/mcp", header: json, sameSession: true, body: `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`},
			{method: "POST", path: "/mcp", header: json, sameSession: true, body: fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"s%d","when":"t%d"}}}`, s, s)},
		}
	}
	foreign := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}, "Origin": {"http://evil.example"}}
	mixed := append([]exchange{
		{method: "POST", path: "/mcp", header: foreign, host: "evil.example", body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","clientInfo":{"name":"other","version":"2.0"}}}`},
	}, conversation(7)...)
	mixed = append(mixed, exchange{method: "GET", path: "/mcp", header: http.Header{"Accept": {"text/event-stream"}}}) // a shape never recorded
	mixed = append(mixed, conversation(3)...)

	tests := []struct {
		name    string
		jsonl   string
		traffic func(*store.DB) []exchange
		// want are some of the answers, by place, as a check that the
		// traffic was answered as recorded.
		want map[int]string
	}{
		{"Modern", string(modern), func(db *store.DB) []exchange { return recordedTraffic(t, db, 2, 5) }, nil},
		{"RefusedInvented", mixedHTTPSessions(12), func(*store.DB) []exchange { return mixed }, map[int]string{
			0: "Forbidden: invalid Origin", 4: "from session 7", 5: "no recorded request has the shape of GET /mcp", 9: "from session 3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			db, ids := storetest.Import(t, tt.jsonl)
			traffic := tt.traffic(db)
			recs, err := db.Recordings(ctx, ids...)
			if err != nil {
				t.Fatal(err)
			}
			eager := play(t, &Server{Recordings: recs}, traffic)
			for round := range 2 { // the second reads the stored index
				srv := &Server{}
				if err := srv.Load(ctx, db, ids); err != nil {
					t.Fatal(err)
				}
				if srv.Source == nil || len(srv.Recordings) != 0 || srv.ao == nil {
					t.Fatalf("Load: Source %v, %d Recordings, index %v; want a Source and its index", srv.Source != nil, len(srv.Recordings), srv.ao != nil)
				}
				if stored := srv.ao.stored; stored != (round == 1) {
					t.Errorf("round %d: index stored %v", round, stored)
				}
				before := srv.Source.ix.Loads()
				lazy := play(t, srv, traffic)
				if p := srv.pool(); p == nil || p.ix == nil {
					t.Errorf("round %d: no exchange pool over the index (2026-07-28 exchanges, a session of refusals)", round)
				}
				if diff := cmp.Diff(eager, lazy); diff != "" {
					t.Errorf("round %d: lazy answers differ from eager ones (-eager +lazy):\n%s", round, diff)
				}
				if n := srv.Source.ix.Loads() - before; n >= int64(len(ids)) || len(srv.all) > 0 {
					t.Errorf("round %d: replay loaded %d of %d sessions (%d at once); want fewer, none at once", round, n, len(ids), len(srv.all))
				}
			}
			for i, w := range tt.want {
				if i >= len(eager) || !strings.Contains(eager[i].Body, w) {
					t.Errorf("answer %d = %+v; want it to hold %q", i, eager[min(i, len(eager)-1)], w)
				}
			}
			if slices.ContainsFunc(eager, func(a answer) bool { return a.Status == 0 || strings.Contains(a.Body, "-32019") }) || len(eager) == 0 {
				t.Errorf("answers not as recorded: %+v", eager)
			}
		})
	}
}
