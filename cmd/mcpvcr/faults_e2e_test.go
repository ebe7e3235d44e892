package main

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

// TestReplay_ExpireAndOrigin: --expire-after answers 404 (session expired)
// once a session has made that many requests, as an expiring server
// would; and replay refuses a browser Origin from another site (DNS
// rebinding) with 403, while loopback origins pass.
func TestReplay_ExpireAndOrigin(t *testing.T) {
	parallel(t)
	cassette := filepath.Join(cassetteDir, "gosdk-http-2025-06-18.jsonl")
	rep := startServing(t, "replay", "--cassette", cassette, "--listen", "127.0.0.1:0", "--expire-after", "2")
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"roots":{"listChanged":true},"sampling":{},"elicitation":{}},"clientInfo":{"name":"mcptest-client","version":"1.0.0"}}}`

	evil := &rawSession{tb: t, url: rep.URL + "/mcp"}
	req, _ := http.NewRequest("POST", evil.url, strings.NewReader(init))
	req.Header.Set("Origin", "http://attacker.example")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("initialize from Origin http://attacker.example = %d; want 403", resp.StatusCode)
	}

	s := &rawSession{tb: t, url: rep.URL + "/mcp"}
	if code, _, body := s.post(init); code != 200 || s.sid == "" {
		t.Fatalf("initialize = %d %s; want 200 and a session", code, body)
	}
	if code, _, _ := s.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`); code != http.StatusAccepted {
		t.Errorf("initialized = %d; want 202", code)
	}
	code, _, body := s.post(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`)
	if code != http.StatusNotFound || !strings.Contains(body, "Session not found") {
		t.Errorf("third request after --expire-after 2 = %d %s; want 404 Session not found", code, body)
	}
	rep.Stop()
}
