package recorder_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpvcr/mcpvcr/recorder"
	"github.com/mcpvcr/mcpvcr/store"
)

// TestHTTP_ForwardsOnlyMCPAndOAuth: the recorder adds the --header
// credential to what it forwards, so it forwards only the MCP endpoint
// and the OAuth paths it fronts. Another path of the upstream's origin
// (POST /other, /mcp/../admin, //evil.example.com/x) is refused with 404
// and CONNECT with 405, and none of them reaches the upstream (issue
// #48: they went with the credential, CONNECT as "CONNECT /" answered 200).
func TestHTTP_ForwardsOnlyMCPAndOAuth(t *testing.T) {
	seen := make(chan string, 16)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen <- r.Method + " " + r.URL.Path + " " + r.Header.Get("Authorization")
		w.WriteHeader(http.StatusAccepted)
	}))
	defer up.Close()
	u, _ := url.Parse(up.URL + "/mcp")
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rec := &recorder.HTTP{Upstream: u, Sink: db, Header: http.Header{"Authorization": {"Bearer user-token"}}}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	defer rec.Close(context.Background())

	// Raw requests: the client libraries would clean the paths.
	send := func(line string) int {
		t.Helper()
		c, err := net.Dial("tcp", srv.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "%s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}", line, srv.Listener.Addr())
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, tt := range []struct {
		line string
		want int
	}{
		{"POST /other", http.StatusNotFound},
		{"POST /mcp/../admin", http.StatusNotFound},
		{"GET //evil.example.com/x", http.StatusNotFound},
		{"POST /mcp/%2e%2e/admin", http.StatusNotFound},
		{"CONNECT " + srv.Listener.Addr().String(), http.StatusMethodNotAllowed},
	} {
		if got := send(tt.line); got != tt.want {
			t.Errorf("%s: status %d; want %d", tt.line, got, tt.want)
		}
		select {
		case got := <-seen:
			t.Errorf("%s reached the upstream as %q", tt.line, got)
		default:
		}
	}
	// What is forwarded still is: the MCP endpoint, the proxy's root, and
	// the protected-resource metadata the recorder fronts.
	for _, line := range []string{"POST /mcp", "POST /", "GET /.well-known/oauth-protected-resource/mcp"} {
		if got := send(line); got == http.StatusNotFound || got == http.StatusMethodNotAllowed {
			t.Errorf("%s: status %d; want it forwarded", line, got)
		}
		if got := <-seen; !strings.Contains(got, "/") {
			t.Errorf("%s reached the upstream as %q", line, got)
		}
	}
}

// TestHTTP_NoHeaderOtherPath: without a --header credential, another clean
// path still goes through (a client using /mcp where --upstream named
// another path), but an unclean one and CONNECT do not.
func TestHTTP_NoHeaderOtherPath(t *testing.T) {
	seen := make(chan string, 4)
	up := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen <- r.Method + " " + r.URL.Path
		w.WriteHeader(http.StatusAccepted)
	})
	u, _, _ := proxy(t, up)
	for _, tt := range []struct {
		method, path string
		want         int
	}{
		{"POST", "/other", http.StatusAccepted},
		{"CONNECT", "/mcp", http.StatusMethodNotAllowed},
	} {
		req, _ := http.NewRequest(tt.method, strings.TrimSuffix(u, "/mcp")+tt.path, strings.NewReader("{}"))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.want {
			t.Errorf("%s %s: status %d; want %d", tt.method, tt.path, resp.StatusCode, tt.want)
		}
		if tt.want == http.StatusAccepted {
			<-seen
		}
	}
	select {
	case got := <-seen:
		t.Errorf("%q reached the upstream", got)
	default:
	}
}
