package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
)

// cliUpstream serves the Go SDK test server over Streamable HTTP (/mcp)
// and HTTP+SSE (/sse), an HTML page (/html) and 404 elsewhere. It writes
// the headers of every request to seen, and sends each GET's path to
// gets once the request has arrived.
func cliUpstream(tb testing.TB, seen *syncBuffer, gets chan<- string) string {
	server := mcptest.NewServer(mcptest.V1)
	get := func(*http.Request) *mcp.Server { return server }
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(get, nil))
	mux.Handle("/sse", mcp.NewSSEHandler(get, nil))
	mux.HandleFunc("/html", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, "<html><body>Welcome</body></html>")
	})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if seen != nil {
			seen.Write([]byte(r.Method + " " + r.URL.Path + " " + r.Header.Get("Authorization") + " " + r.Header.Get("X-Extra") + "\n"))
		}
		if gets != nil && r.Method == http.MethodGet {
			gets <- r.URL.Path
		}
		mux.ServeHTTP(w, r)
	}))
	tb.Cleanup(srv.Close)
	return srv.URL
}

// TestRecord_UpstreamProbe starts mcpvcr record in front of a wrong path
// (404), an HTML page, the right MCP endpoint and an HTTP+SSE stream:
// the first two get a warning naming the URL and what came back, the
// others none; every one starts and prints the exact URL to give the
// client, path included.
func TestRecord_UpstreamProbe(t *testing.T) {
	parallel(t)
	base := cliUpstream(t, nil, nil)
	tests := []struct {
		path string
		warn string // "" for no warning
	}{
		{"/wrong", "answered an MCP POST with 404 Not Found: is the path right?"},
		{"/html", "answered an MCP POST with an HTML page (200 OK)"},
		{"/mcp", ""},
		{"/sse", ""},
	}
	for _, tt := range tests {
		t.Run(strings.TrimPrefix(tt.path, "/"), func(t *testing.T) {
			rec := startServing(t, "record", "--cassette", filepath.Join(t.TempDir(), "c.db"), "--upstream", base+tt.path, "--listen", "127.0.0.1:0")
			if !strings.HasSuffix(rec.URL, tt.path) {
				t.Errorf("record said to point the client at %s; want the path %s", rec.URL, tt.path)
			}
			// The warning follows the URL line: read it once record is done.
			if code := rec.Stop(); code != 0 {
				t.Errorf("record exited %d:\n%s", code, rec.stderr)
			}
			stderr := rec.stderr.String()
			if tt.warn == "" && strings.Contains(stderr, "warning") {
				t.Errorf("record warned about a good upstream:\n%s", stderr)
			}
			if tt.warn != "" && !strings.Contains(stderr, "mcpvcr: warning: "+base+tt.path+" "+tt.warn) {
				t.Errorf("record did not warn %q:\n%s", tt.warn, stderr)
			}
		})
	}
}

// TestRecord_Header records with --header and MCPVCR_HEADER: the upstream
// gets the headers on every request, the client sent none, and the
// token is nowhere in the cassette.
func TestRecord_Header(t *testing.T) {
	t.Setenv("MCPVCR_HEADER", "X-Extra: from env, with a comma\n")
	ctx := testCtx(t)
	seen := &syncBuffer{}
	base := cliUpstream(t, seen, nil)
	db := filepath.Join(t.TempDir(), "c.db")
	rec := startServing(t, "record", "--cassette", db, "--upstream", base+"/mcp", "--listen", "127.0.0.1:0",
		"--header", "Authorization: Bearer header-secret-0001")
	cs, err := mcptest.NewClient().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: rec.URL}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, rec.stderr)
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	cs.Close()
	if code := rec.Stop(); code != 0 {
		t.Fatalf("record exited %d:\n%s", code, rec.stderr)
	}
	for _, line := range strings.Split(strings.TrimSpace(seen.String()), "\n") {
		if strings.HasPrefix(line, "POST /mcp") && !strings.HasSuffix(line, " Bearer header-secret-0001 from env, with a comma") {
			t.Errorf("the upstream got %q; want the --header and MCPVCR_HEADER values", line)
		}
	}
	if export := mcpvcr(t, "", "export", "--cassette", db).stdout; strings.Contains(export, "header-secret-0001") || !strings.Contains(export, "tools/list") {
		t.Errorf("the export holds the --header token, or lacks the session:\n%s", export)
	}
}

// TestRecord_StopWithOpenStream interrupts mcpvcr record while the
// client holds a GET stream open: the first Ctrl-C says what it waits
// for and for how long, the second stops at once, and the cut stream is
// recorded as ended by the proxy.
func TestRecord_StopWithOpenStream(t *testing.T) {
	parallel(t)
	ctx := testCtx(t)
	gets := make(chan string, 4)
	base := cliUpstream(t, nil, gets)
	db := filepath.Join(t.TempDir(), "c.db")
	cmd := exec.Command(mcpvcrBin, "record", "--cassette", db, "--upstream", base+"/mcp", "--listen", "127.0.0.1:0")
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 64)
	var all syncBuffer
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			all.Write([]byte(sc.Text() + "\n"))
			lines <- sc.Text()
		}
		close(lines)
	}()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait(); pw.Close() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	waitLine := func(substr string) string {
		t.Helper()
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("record ended before saying %q:\n%s", substr, all.String())
				}
				if strings.Contains(l, substr) {
					return l
				}
			case <-ctx.Done():
				t.Fatalf("record never said %q:\n%s", substr, all.String())
			}
		}
	}
	url := urlRE.FindString(waitLine("point your client at"))
	cs, err := mcptest.NewClient().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	select {
	case <-gets: // the client's GET stream is open through the proxy
	case <-ctx.Done():
		t.Fatal("the client never opened its GET stream")
	}
	_ = cmd.Process.Signal(os.Interrupt)
	// The client's notifications/initialized POST may still be counted:
	// the proxy flushes its 202 to the client before its handler has
	// recorded the stream's end, and the Go SDK opens its GET stream
	// before it sends that notification.
	l := waitLine("stopping:")
	waits := strings.Contains(l, "waiting up to 5s for 1 open stream (1 get)") || strings.Contains(l, "waiting up to 5s for 2 open streams (1 get, 1 post)")
	if !waits || !strings.Contains(l, "Ctrl-C again") {
		t.Errorf("the first Ctrl-C said %q; want what it waits for and for how long", l)
	}
	_ = cmd.Process.Signal(os.Interrupt)
	// The grace period is 5s: stopping within 3s shows the second Ctrl-C
	// cut it short.
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("record exited with %v:\n%s", err, all.String())
		}
	case <-time.After(3 * time.Second):
		t.Fatalf("record did not stop at the second Ctrl-C:\n%s", all.String())
	}
	show := mcpvcr(t, "", "show", "1", "--cassette", db).stdout
	if !regexpMatch(`get#\d+ +end +proxy-shutdown`, show) {
		t.Errorf("the cut GET stream is not recorded as ended by the proxy:\n%s", show)
	}
	// The session ends at its last traffic, not when the proxy stopped
	// (so ls shows how long the conversation took).
	var started, ended time.Time
	var last int64
	for _, line := range strings.Split(mcpvcr(t, "", "export", "1", "--cassette", db).stdout, "\n") {
		var rec struct {
			Type     string
			Started  string `json:"started_at"`
			Ended    string `json:"ended_at"`
			OpenedNS int64  `json:"opened_ns"`
			ClosedNS int64  `json:"closed_ns"`
			OffsetNS int64  `json:"offset_ns"`
			End      string `json:"end"`
		}
		if json.Unmarshal([]byte(line), &rec) != nil {
			continue
		}
		switch rec.Type {
		case "session":
			started, _ = time.Parse(time.RFC3339Nano, rec.Started)
			ended, _ = time.Parse(time.RFC3339Nano, rec.Ended)
		case "stream":
			last = max(last, rec.OpenedNS)
			if rec.End != "proxy-shutdown" {
				last = max(last, rec.ClosedNS)
			}
		case "frame":
			last = max(last, rec.OffsetNS)
		}
	}
	if got, want := ended.Sub(started), time.Duration(last); got != want {
		t.Errorf("the session lasted %v; want %v, until its last traffic (not until the proxy stopped)", got, want)
	}
}

func regexpMatch(re, s string) bool { return regexp.MustCompile(re).MatchString(s) }

// TestRecord_UpstreamProbeEverything starts mcpvcr record in front of
// the reference server's endpoints, as the README shows: neither its
// Streamable HTTP endpoint nor its HTTP+SSE stream (where a POST gets an
// HTML 404 page) is warned about.
func TestRecord_UpstreamProbeEverything(t *testing.T) {
	parallel(t)
	for _, mode := range []string{mcptest.StreamableHTTP, mcptest.SSE} {
		t.Run(mode, func(t *testing.T) {
			upstream := mcptest.EverythingHTTP(t, mode)
			rec := startServing(t, "record", "--cassette", filepath.Join(t.TempDir(), "c.db"), "--upstream", upstream, "--listen", "127.0.0.1:0")
			if code := rec.Stop(); code != 0 {
				t.Errorf("record exited %d:\n%s", code, rec.stderr)
			}
			if stderr := rec.stderr.String(); strings.Contains(stderr, "warning") {
				t.Errorf("record warned about the reference server's own endpoint %s:\n%s", upstream, stderr)
			}
		})
	}
}

// TestRecord_UpstreamURLAsUsed: with --upstream naming one path and the
// client another, the session names the URL its requests went to; and a
// verify run records the path the recording had, not "/".
func TestRecord_UpstreamURLAsUsed(t *testing.T) {
	parallel(t)
	ctx := testCtx(t)
	base := cliUpstream(t, nil, nil)
	db := filepath.Join(t.TempDir(), "c.db")
	rec := startServing(t, "record", "--cassette", db, "--upstream", base+"/nope", "--listen", "127.0.0.1:0")
	endpoint := strings.TrimSuffix(rec.URL, "/nope") + "/mcp"
	cs, err := mcptest.NewClient().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, rec.stderr)
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	cs.Close()
	if code := rec.Stop(); code != 0 {
		t.Fatalf("record exited %d:\n%s", code, rec.stderr)
	}
	if ls := mcpvcr(t, "", "ls", "--cassette", db).stdout; !strings.Contains(ls, base+"/mcp\n") || strings.Contains(ls, "/nope") {
		t.Errorf("ls names the upstream as given, not as used (%s/mcp):\n%s", base, ls)
	}
	if res := mcpvcr(t, "", "verify", "1", "--keep", "--cassette", db, "--upstream", base+"/mcp"); res.code != exitOK {
		t.Fatalf("verify exited %d:\n%s%s", res.code, res.stdout, res.stderr)
	}
	show := mcpvcr(t, "", "show", "2", "--cassette", db).stdout
	if !regexpMatch(`POST \d+ +/mcp`, show) || regexpMatch(`POST \d+ +/\s`, show) {
		t.Errorf("the verify run's streams do not name /mcp:\n%s", show)
	}
}
