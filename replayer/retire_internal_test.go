package replayer

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpvcr/mcpvcr/clock"
)

// TestHTTP_SessionsRetire: a replay that serves client after client
// keeps no state of the sessions that ended: one its client deleted (the
// recorded server answered the DELETE 204) and one idle past sessionIdle
// are let go, their reports kept, and a request naming either gets 404,
// as from a server that ended them. A session with a request in flight
// is never idle.
func TestHTTP_SessionsRetire(t *testing.T) {
	recs, initialize := LoadInitialize(t, "multi-gosdk-http-json.jsonl")
	fake := clock.NewFake(time.Unix(1000, 0))
	srv := &Server{Recordings: recs, Clock: fake}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	defer srv.Close()
	do := func(method, sid, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, ts.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode, resp.Header.Get("Mcp-Session-Id")
	}
	open := func() string {
		t.Helper()
		code, sid := do(http.MethodPost, "", initialize)
		if code != http.StatusOK || sid == "" {
			t.Fatalf("initialize = %d, session %q; want 200 and a session", code, sid)
		}
		return sid
	}
	live := func() int {
		hs := srv.http()
		hs.mu.Lock()
		defer hs.mu.Unlock()
		return len(hs.all) + len(hs.byID)
	}
	const clients = 20
	for range clients {
		sid := open()
		if code, _ := do(http.MethodDelete, sid, ""); code != http.StatusNoContent {
			t.Fatalf("DELETE = %d; want the recorded 204", code)
		}
		if code, _ := do(http.MethodPost, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); code != http.StatusNotFound {
			t.Fatalf("a POST to a deleted session = %d; want 404", code)
		}
	}
	if n := live(); n != 0 {
		t.Errorf("after %d clients deleted their sessions replay holds %d of their entries; want none", clients, n)
	}
	idle := open()
	fake.Advance(sessionIdle + time.Minute)
	open() // a new client: replay looks for idle sessions
	if code, _ := do(http.MethodPost, idle, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); code != http.StatusNotFound {
		t.Errorf("a POST to a session idle for %s = %d; want 404", sessionIdle+time.Minute, code)
	}
	served := 0
	for _, rep := range srv.Reports() {
		served += rep.Clients
	}
	if served != clients+2 {
		t.Errorf("Reports() stand for %d client sessions; want %d, the retired ones included", served, clients+2)
	}
	var out strings.Builder
	srv.WriteSummary(&out)
	if want := fmt.Sprintf("replay: %d client sessions served", clients+2); !strings.Contains(out.String(), want) {
		t.Errorf("the summary says %q; want %q", out.String(), want)
	}
}
