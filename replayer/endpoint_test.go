package replayer_test

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpvcr/mcpvcr/replayer"
	"github.com/mcpvcr/mcpvcr/store"
)

func TestEndpointPath(t *testing.T) {
	rec := func(upstream string) *store.Recording {
		return &store.Recording{Session: store.Session{Upstream: upstream}}
	}
	tests := []struct {
		name string
		recs []*store.Recording
		want string
	}{
		{"None", nil, "/mcp"},
		{"Stdio", []*store.Recording{rec("npx server")}, "/mcp"},
		{"Path", []*store.Recording{rec("npx server"), rec("http://127.0.0.1:3001/v1/mcp%2Fx")}, "/v1/mcp%2Fx"},
		{"NoPath", []*store.Recording{rec("http://127.0.0.1:3001")}, "/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := replayer.EndpointPath(tt.recs); got != tt.want {
				t.Errorf("EndpointPath = %q; want %q", got, tt.want)
			}
		})
	}
}

// TestEndpoint_ForeignOriginRefused: a hand-made HTTP+SSE cassette whose
// endpoint event names another origin than the recorded stream's is not
// served (record refuses such an endpoint: the client would POST
// there); replay reports it as an answer of its own. One on the
// upstream's own origin is announced as its path, so the client POSTs
// to replay.
func TestEndpoint_ForeignOriginRefused(t *testing.T) {
	for _, tc := range []struct {
		name, endpoint, want string
		refused              bool
	}{
		{"foreign", "http://evil.example.com/sse?sessionid=X", "", true},
		{"foreign port", "http://127.0.0.1:1/sse?sessionid=X", "", true},
		{"upstream origin", "UPSTREAM/sse?sessionid=X", "/sse?sessionid=X", false},
		{"relative", "/sse?sessionid=X", "/sse?sessionid=X", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recs, err := store.LoadFile(context.Background(), filepath.Join("..", "cassettes", "multi-gosdk-sse.jsonl"), 1)
			if err != nil {
				t.Fatal(err)
			}
			rec := recs[0]
			u, _ := url.Parse(rec.Session.Upstream)
			endpoint := strings.Replace(tc.endpoint, "UPSTREAM", u.Scheme+"://"+u.Host, 1)
			found := false
			for i := range rec.Frames {
				f := &rec.Frames[i]
				if f.SSE && f.Event == "endpoint" {
					f.Data = []byte(endpoint)
					f.Raw = []byte("event: endpoint\ndata: " + endpoint + "\n\n")
					found = true
				}
			}
			if !found {
				t.Fatal("the cassette has no endpoint event")
			}
			srv := &replayer.Server{Recordings: recs}
			ts := httptest.NewServer(srv)
			defer ts.Close()
			defer srv.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+"/sse", nil)
			req.Header.Set("Accept", "text/event-stream")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			// The endpoint event is the stream's first: read up to it, or
			// to the end of a stream replay ended.
			var got strings.Builder
			br := bufio.NewReader(resp.Body)
			for !strings.Contains(got.String(), "\n\n") {
				line, err := br.ReadString('\n')
				got.WriteString(line)
				if err != nil {
					break
				}
			}
			if strings.Contains(got.String(), "evil") || strings.Contains(got.String(), ":1/") {
				t.Errorf("replay announced a foreign endpoint: %q", got.String())
			}
			if !tc.refused && !strings.Contains(got.String(), "data: "+tc.want+"\n") {
				t.Errorf("replay announced %q; want the endpoint %s", got.String(), tc.want)
			}
			inv := srv.Invented()
			if tc.refused != (len(inv) == 1 && strings.Contains(inv[0], "another origin")) {
				t.Errorf("Invented() = %q; want it to report the foreign endpoint: %v", inv, tc.refused)
			}
		})
	}
}
