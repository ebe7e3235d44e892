package replayer_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpvcr/mcpvcr/replayer"
)

// TestServer_CloseWaits: Close ends a GET stream the client holds open
// and returns only once the handler serving it has returned, as
// httptest.Server.Close waits for its handlers; the server serving s
// then closes at once.
func TestServer_CloseWaits(t *testing.T) {
	recs, initialize := replayer.LoadInitialize(t, "multi-gosdk-http-json.jsonl")
	srv := &replayer.Server{Recordings: recs}
	returned := make(chan struct{}, 16)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		srv.ServeHTTP(w, r)
		if r.Method == http.MethodGet {
			returned <- struct{}{}
		}
	}))
	defer ts.Close()

	req, _ := http.NewRequest(http.MethodPost, ts.URL+"/mcp", strings.NewReader(initialize))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("initialize = %d, Mcp-Session-Id %q; want 200 and a session", resp.StatusCode, sid)
	}
	get, _ := http.NewRequest(http.MethodGet, ts.URL+"/mcp", nil)
	get.Header.Set("Accept", "text/event-stream")
	get.Header.Set("Mcp-Session-Id", sid)
	get.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	stream, err := http.DefaultClient.Do(get)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close() // left open by the client until the end
	if stream.StatusCode != http.StatusOK {
		t.Fatalf("GET = %d; want 200, a held stream", stream.StatusCode)
	}
	srv.Close()
	// The wrapper above sends only after ServeHTTP has returned, so even
	// with a Close that waits its send can come a moment after Close
	// returns: wait for it, but not as long as a stream held open would
	// last (until ts.Close, never).
	select {
	case <-returned:
	case <-time.After(10 * time.Second):
		t.Error("Close returned while the GET stream's handler was still serving it (it has not returned 10 s later)")
	}
}
