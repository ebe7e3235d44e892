package main

import (
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
)

// rawSession is a hand-driven Streamable HTTP client, for frames the SDK
// client does not send (batches).
type rawSession struct {
	tb  testing.TB
	url string
	sid string
}

func (s *rawSession) post(body string) (int, http.Header, string) {
	s.tb.Helper()
	req, _ := http.NewRequest("POST", s.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if s.sid != "" {
		req.Header.Set("Mcp-Session-Id", s.sid)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.tb.Fatalf("POST %s: %v", body, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		s.tb.Fatalf("read the answer to %s: %v", body, err)
	}
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
		s.sid = sid
	}
	return resp.StatusCode, resp.Header, string(b)
}

// batchExchange initializes at 2025-03-26 and posts one batch of two
// requests and one batch of notifications; it returns the answers.
func batchExchange(tb testing.TB, url string) []string {
	s := &rawSession{tb: tb, url: url}
	var out []string
	code, _, body := s.post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"batch","version":"1"}}}`)
	out = append(out, strings.Join([]string{http.StatusText(code), body}, " "))
	code, _, body = s.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	out = append(out, strings.Join([]string{http.StatusText(code), body}, " "))
	code, h, body := s.post(`[{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"one"}}},{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}]`)
	out = append(out, strings.Join([]string{http.StatusText(code), h.Get("Content-Type"), body}, " "))
	code, _, body = s.post(`[{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}]`)
	out = append(out, strings.Join([]string{http.StatusText(code), body}, " "))
	return out
}

// TestHTTP_Batch posts raw 2025-03-26 batches to the Go SDK server through
// mcpvcr record, then the same to mcpvcr replay: the answers (status,
// content type, every byte of the body) are the same.
func TestHTTP_Batch(t *testing.T) {
	parallel(t)
	for _, mode := range [][]string{nil, {"-json"}} {
		t.Run(strings.Join(append([]string{"sse"}, mode...), ""), func(t *testing.T) {
			upstream := mcptest.StartServer(t, append([]string{"-transport", "http"}, mode...)...)
			db := filepath.Join(t.TempDir(), "c.db")
			dumpOnFailure(t, db)
			rec := startServing(t, "record", "--cassette", db, "--upstream", upstream, "--listen", "127.0.0.1:0")
			live := batchExchange(t, rec.URL)
			if code := rec.Stop(); code != 0 {
				t.Fatalf("record exited %d:\n%s", code, rec.stderr)
			}
			if !strings.Contains(live[2], `"id":2`) || !strings.Contains(live[2], `"id":3`) {
				t.Fatalf("live batch answer lacks a response: %s", live[2])
			}
			show := mcpvcr(t, "", "show", "1", "--cassette", db)
			if !strings.Contains(show.stdout, "batch(2)") {
				t.Errorf("show lacks the batch:\n%s", show.stdout)
			}
			rep := startServing(t, "replay", "--cassette", db, "--listen", "127.0.0.1:0")
			replayed := batchExchange(t, rep.URL+"/mcp")
			for i := range live {
				if live[i] != replayed[i] {
					t.Errorf("answer %d:\n  live   %q\n  replay %q", i, live[i], replayed[i])
				}
			}
			if code := rep.Stop(); code != 0 {
				t.Errorf("replay exited %d:\n%s", code, rep.stderr)
			}
		})
	}
}
