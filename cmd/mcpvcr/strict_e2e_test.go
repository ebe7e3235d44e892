package main

import (
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
)

// TestReplay_Strict replays committed HTTP recordings with --strict: the
// Go SDK client keeps the header rules of 2025-06-18 and 2025-11-25;
// at 2025-03-26 it sends MCP-Protocol-Version, which that revision does
// not have, and strict replay reports it; hand-made requests that break
// the rules are refused with 400 and reported.
func TestReplay_Strict(t *testing.T) {
	parallel(t)
	for _, v := range []string{mcptest.V20250618, mcptest.V20251125} {
		t.Run(v, func(t *testing.T) {
			ctx := testCtx(t)
			rep := startServing(t, "replay", "--cassette", filepath.Join(cassetteDir, "gosdk-http-"+v+".jsonl"), "--listen", "127.0.0.1:0", "--strict")
			got := roundTrip(t, mcptest.Run(ctx, t, &mcp.StreamableClientTransport{Endpoint: rep.URL + "/mcp"}, v))
			if diff := cmp.Diff(goldenTranscript(t, v), got); diff != "" {
				t.Errorf("strict replay (-live +replay):\n%s", diff)
			}
			if code := rep.Stop(); code != 0 {
				t.Errorf("strict replay exited %d:\n%s", code, rep.stderr)
			}
		})
	}

	t.Run("2025-03-26", func(t *testing.T) {
		ctx := testCtx(t)
		rep := startServing(t, "replay", "--cassette", filepath.Join(cassetteDir, "gosdk-http-2025-03-26.jsonl"), "--listen", "127.0.0.1:0", "--strict")
		_, err := mcptest.NewClient().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: rep.URL + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-03-26"})
		if err == nil {
			t.Errorf("connect succeeded; want the strict replay to refuse MCP-Protocol-Version at 2025-03-26")
		}
		if code := rep.Stop(); code != 1 {
			t.Errorf("strict replay exited %d; want 1", code)
		}
		if want := "MCP-Protocol-Version must be absent when 2025-03-26 was negotiated"; !strings.Contains(rep.stderr.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, rep.stderr)
		}
	})

	t.Run("HandMade", func(t *testing.T) {
		rep := startServing(t, "replay", "--cassette", filepath.Join(cassetteDir, "gosdk-http-2025-06-18.jsonl"), "--listen", "127.0.0.1:0", "--strict")
		post := func(body string, h map[string]string) (int, string, http.Header) {
			req, _ := http.NewRequest("POST", rep.URL+"/mcp", strings.NewReader(body))
			for k, v := range h {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, string(b), resp.Header
		}
		both := "application/json, text/event-stream"
		init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"roots":{"listChanged":true},"sampling":{},"elicitation":{}},"clientInfo":{"name":"mcptest-client","version":"1.0.0"}}}`
		if code, body, _ := post(init, map[string]string{"Accept": "application/json"}); code != 400 || !strings.Contains(body, "Accept must list both") {
			t.Errorf("initialize without text/event-stream in Accept = %d %s; want 400 naming Accept", code, body)
		}
		code, body, h := post(init, map[string]string{"Accept": both})
		if code != 200 || h.Get("Mcp-Session-Id") == "" {
			t.Fatalf("initialize = %d %s; want 200 with a session id", code, body)
		}
		sid := h.Get("Mcp-Session-Id")
		list := `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`
		if code, body, _ := post(list, map[string]string{"Accept": both, "Mcp-Session-Id": sid}); code != 400 || !strings.Contains(body, "MCP-Protocol-Version must be the negotiated 2025-06-18") {
			t.Errorf("tools/list without MCP-Protocol-Version = %d %s; want 400", code, body)
		}
		if code := rep.Stop(); code != 1 {
			t.Errorf("strict replay exited %d; want 1 (violations found)", code)
		}
		if n := strings.Count(rep.stderr.String(), "  unmatched request"); n != 2 {
			t.Errorf("report lists %d strict violations; want 2:\n%s", n, rep.stderr)
		}
	})
}
