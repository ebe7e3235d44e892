package main

import (
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
)

// rebindingInit is the initialize a DNS-rebinding page would send.
const rebindingInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"page","version":"1"}}}`

// postAs posts body to u with the given Host and Origin ("" for none) and
// returns the status and body of the answer.
func postAs(tb testing.TB, u, host, origin, body string) (int, string) {
	tb.Helper()
	req, _ := http.NewRequest("POST", u, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if host != "" {
		req.Host = host
	}
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatalf("POST %s as %s: %v", u, host, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestRecord_RefusesRebinding: a page that renamed its site to 127.0.0.1
// (DNS rebinding) sends the proxy its own Host and Origin. record refuses
// it with 403 saying how to allow it, before anything reaches the Go SDK
// server and without adding the --header credential; with --allow-origin
// naming that origin the request goes upstream, still without the
// credential, which is only for requests addressed to the proxy (and the
// Go SDK server gives its own answer: it refuses a foreign Host itself).
func TestRecord_RefusesRebinding(t *testing.T) {
	parallel(t)
	seen := &syncBuffer{}
	base := cliUpstream(t, seen, nil)
	db := filepath.Join(t.TempDir(), "c.db")
	rec := startServing(t, "record", "--cassette", db, "--upstream", base+"/mcp", "--listen", "127.0.0.1:0",
		"--header", "Authorization: Bearer header-secret-0003")
	u, _ := url.Parse(rec.URL)
	evil := "evil.example.com:" + u.Port()
	probes := strings.Count(seen.String(), "POST /mcp") // record's own probe at start
	for _, tt := range []struct{ name, host, origin string }{
		{"HostAndOrigin", evil, "http://" + evil},
		{"HostOnly", evil, ""},
		{"OriginOnly", "", "http://" + evil},
	} {
		code, body := postAs(t, rec.URL, tt.host, tt.origin, rebindingInit)
		if code != http.StatusForbidden || !strings.Contains(body, "--allow-origin http://"+evil) {
			t.Errorf("%s: initialize from a rebinding page = %d %q; want 403 naming --allow-origin http://%s", tt.name, code, body, evil)
		}
	}
	if code, body := postAs(t, rec.URL, "localhost:"+u.Port(), "http://localhost:3000", rebindingInit); code != http.StatusOK {
		t.Errorf("initialize from a loopback page = %d %q; want 200", code, body)
	}
	if code := rec.Stop(); code != 0 {
		t.Fatalf("record exited %d:\n%s", code, rec.stderr)
	}
	if got := strings.Count(seen.String(), "POST /mcp") - probes; got != 1 {
		t.Errorf("the upstream got %d POSTs; want only the loopback page's:\n%s", got, seen)
	}
	if !strings.Contains(rec.stderr.String(), "refused") {
		t.Errorf("record did not log the refusals:\n%s", rec.stderr)
	}

	// Allowed: forwarded as sent, without the user's credential.
	seen = &syncBuffer{}
	base = cliUpstream(t, seen, nil)
	rec = startServing(t, "record", "--cassette", filepath.Join(t.TempDir(), "c.db"), "--upstream", base+"/mcp", "--listen", "127.0.0.1:0",
		"--header", "Authorization: Bearer header-secret-0003", "--allow-origin", "http://evil.example.com")
	u, _ = url.Parse(rec.URL)
	evil = "evil.example.com:" + u.Port()
	if _, body := postAs(t, rec.URL, evil, "http://"+evil, rebindingInit); strings.Contains(body, "allow-origin") {
		t.Errorf("initialize from an --allow-origin page was refused by record: %q", body)
	}
	if code := rec.Stop(); code != 0 {
		t.Fatalf("record exited %d:\n%s", code, rec.stderr)
	}
	if lines := strings.Split(strings.TrimRight(seen.String(), "\n"), "\n"); lines[len(lines)-1] != "POST /mcp  " {
		t.Errorf("the upstream got %q last; want the allowed page's POST without the --header credential", lines[len(lines)-1])
	}
}

// TestReplay_RefusesForeignHost: replay validates Host as well as Origin,
// so that a rebinding page's simple request (no Origin) is refused too.
func TestReplay_RefusesForeignHost(t *testing.T) {
	parallel(t)
	cassette := filepath.Join(cassetteDir, "gosdk-http-2025-06-18.jsonl")
	rep := startServing(t, "replay", "--cassette", cassette, "--listen", "127.0.0.1:0")
	u, _ := url.Parse(rep.URL)
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"roots":{"listChanged":true},"sampling":{},"elicitation":{}},"clientInfo":{"name":"mcptest-client","version":"1.0.0"}}}`
	if code, body := postAs(t, rep.URL+"/mcp", "evil.example.com:"+u.Port(), "", init); code != http.StatusForbidden || !strings.Contains(body, "Host") {
		t.Errorf("initialize with Host evil.example.com = %d %s; want 403 naming the Host", code, body)
	}
	if code, body := postAs(t, rep.URL+"/mcp", "localhost:"+u.Port(), "", init); code != http.StatusOK {
		t.Errorf("initialize with Host localhost = %d %s; want 200", code, body)
	}
	rep.Stop()
}
