package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
)

// scrubHTTPMessages are echoed by the test server: texts holding JSON in
// a string, with credentials of the formats scrub knows, and text.
var scrubHTTPMessages = []string{
	`{"password":"hunter2","to":"ann@corp.example"}`,
	`{"config":{"aws_secret_access_key":"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY","id":"AKIAIOSFODNN7EXAMPLE"}}`,
	`[{"Passphrase":"open sesame"},{"note":"PIN: 4821, slack xoxb-1234-abcd"}]`,
	"-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\n-----END PRIVATE KEY-----",
	`see http://127.0.0.1:3334/cb?code=SplxlOBeZQQYbYS6WxSbIA&state=xyz and token=q8z2m4x7c1v9b3n5k6j0h2g4`,
}

func scrubHTTPScript(ctx context.Context, tb testing.TB, endpoint string) []string {
	tb.Helper()
	cs, err := mcptest.NewClient().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint}, nil)
	if err != nil {
		tb.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	var got []string
	for _, m := range scrubHTTPMessages {
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": m}})
		if err != nil {
			tb.Errorf("echo: %v", err)
			continue
		}
		if len(r.Content) > 0 {
			if tc, ok := r.Content[0].(*mcp.TextContent); ok {
				got = append(got, tc.Text)
			}
		}
	}
	return got
}

// TestScrub_HTTPReplays records a client over Streamable HTTP whose tool
// calls and SSE answers hold JSON in strings and credentials of every
// format scrub knows, scrubs the cassette, and replays the copy to the
// same client: every call matches (0 unmatched), and no secret is left.
func TestScrub_HTTPReplays(t *testing.T) {
	parallel(t)
	ctx := testCtx(t)
	base := cliUpstream(t, nil, nil)
	dir := t.TempDir()
	db := filepath.Join(dir, "c.db")
	rec := startServing(t, "record", "--cassette", db, "--no-redact-json", "--upstream", base+"/mcp", "--listen", "127.0.0.1:0")
	live := scrubHTTPScript(ctx, t, rec.URL)
	if code := rec.Stop(); code != 0 {
		t.Fatalf("record exited %d:\n%s", code, rec.stderr)
	}
	if len(live) != len(scrubHTTPMessages) {
		t.Fatalf("live answers %q", live)
	}
	out := filepath.Join(dir, "shared.db")
	if res := mcpvcr(t, "", "scrub", db, "-o", out); res.code != 0 {
		t.Fatalf("scrub exited %d:\n%s%s", res.code, res.stdout, res.stderr)
	}
	export := mcpvcr(t, "", "export", "--cassette", out).stdout
	for _, secret := range []string{"hunter2", "ann@corp.example", "wJalrXUtnFEMI", "AKIAIOSFODNN7EXAMPLE", "open sesame", "PIN: 4821", "xoxb-1234", "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7", "SplxlOBeZQQYbYS6WxSbIA", "q8z2m4x7c1v9b3n5k6j0h2g4"} {
		if strings.Contains(export, secret) {
			t.Errorf("the scrubbed export holds %q", secret)
		}
	}
	rep := startServing(t, "replay", "--cassette", out, "--listen", "127.0.0.1:0")
	replayed := scrubHTTPScript(ctx, t, strings.TrimSuffix(rep.URL, "/")+"/mcp")
	code := rep.Stop()
	if code != 0 || !strings.Contains(rep.stderr.String(), " 0 unmatched") {
		t.Errorf("replay of the scrubbed copy exited %d; want 0 and no unmatched frames:\n%s", code, rep.stderr)
	}
	if len(replayed) != len(scrubHTTPMessages) {
		t.Errorf("replay answered %d of %d calls: %q", len(replayed), len(scrubHTTPMessages), replayed)
	}
}
