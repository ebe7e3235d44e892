package replayer_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpvcr/mcpvcr/replayer"
	"github.com/mcpvcr/mcpvcr/store"
)

// TestServer_Door: requests of a shape no recorded request has (a GET or
// a DELETE without Mcp-Session-Id, a foreign Origin) are answered at once
// with a 4xx naming the closest recorded request, and listed by Invented;
// a request of a recorded shape goes on to the conversation.
func TestServer_Door(t *testing.T) {
	recs, err := store.LoadFile(context.Background(), filepath.Join("..", "cassettes", "multi-gosdk-http-json.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	srv := &replayer.Server{Recordings: recs}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	defer srv.Close()
	tests := []struct {
		name, method, body string
		header             map[string]string
		status             int
		want               string
	}{
		{"GET without session", "GET", "", map[string]string{"Accept": "text/event-stream"}, 400, "Mcp-Session-Id absent (recorded present)"},
		{"DELETE without session", "DELETE", "", nil, 400, "closest is session 1"},
		{"foreign Origin", "POST", `{"jsonrpc":"2.0","id":"a","method":"initialize","params":{}}`, map[string]string{"Origin": "http://evil.example", "Content-Type": "application/json"}, 403, `"code":-32019`},
		{"PUT", "PUT", "", nil, 405, "method PUT (recorded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, ts.URL+"/mcp", strings.NewReader(tt.body))
			for k, v := range tt.header {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.status || !strings.Contains(string(b), tt.want) {
				t.Errorf("%s = %d %s; want %d and %q", tt.name, resp.StatusCode, b, tt.status, tt.want)
			}
		})
	}
	if got, want := len(srv.Invented()), len(tests); got != want {
		t.Errorf("Invented() lists %d answers; want %d: %q", got, want, srv.Invented())
	}
	var b strings.Builder
	if srv.WriteSummary(&b) || !strings.Contains(b.String(), "4 answers invented") {
		t.Errorf("WriteSummary = %q; want it not ok, counting the invented answers", b.String())
	}
}
