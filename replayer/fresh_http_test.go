package replayer_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
	"github.com/mcpvcr/mcpvcr/internal/recordtest"
	"github.com/mcpvcr/mcpvcr/replayer"
)

// TestHTTP_FreshSessionsShareAnOpening records, now, two Go SDK client
// sessions against the Go SDK test server over Streamable HTTP that
// share their opening (initialize, tools/list) and part at echo's text,
// then replays them as given in memory to eight clients at once of
// another clientInfo: each gets its own session's answer and every frame
// matches. A request of a shape no recording holds (a PUT) gets an
// answer replay invents, said in Invented. (Read from the cassette
// through a Source, the second session's clients are not matched: the
// Go SDK client's dual-era opening, server/discover then initialize,
// is a known failure of lazy reading, left open.)
func TestHTTP_FreshSessionsShareAnOpening(t *testing.T) {
	ctx := testContext(t)
	srv := mcptest.ServerConfig{}.NewServer()
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	recs := recordtest.HTTP(ctx, t, h, "", func(endpoint string) {
		for run := range 2 {
			echoOnce(ctx, t, endpoint, mcptest.NewClient(), fmt.Sprintf("run %d", run))
		}
	})
	if len(recs) != 2 {
		t.Fatalf("%d sessions recorded; want 2", len(recs))
	}
	rs := &replayer.Server{Recordings: recs, Wait: 5 * time.Second}
	ts := httptest.NewServer(rs)
	t.Cleanup(ts.Close)
	t.Cleanup(rs.Close)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() { echoOnce(ctx, t, ts.URL+"/mcp", mcptest.NewClientAs(upgraded), fmt.Sprintf("run %d", i%2)) })
	}
	wg.Wait()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPut, ts.URL+"/mcp", strings.NewReader(`{}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 4 || len(rs.Invented()) != 1 {
		t.Errorf("PUT: %d, invented %q; want a 4xx replay says it invented", resp.StatusCode, rs.Invented())
	}
	for _, r := range rs.Reports() {
		if len(r.Mismatches) > 0 {
			t.Errorf("session %d: unmatched %v", r.SessionID, r.Mismatches)
		}
	}
}

// echoOnce connects client to endpoint, lists the tools and calls echo
// with text, which it must get back.
func echoOnce(ctx context.Context, t *testing.T, endpoint string, client *mcp.Client, text string) {
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint}, nil)
	if err != nil {
		t.Errorf("connect: %v", err)
		return
	}
	defer cs.Close()
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Errorf("tools/list: %v", err)
		return
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": text}})
	if err != nil || len(res.Content) == 0 {
		t.Errorf("echo %q: %v, %+v", text, err, res)
		return
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); !ok || !strings.Contains(tc.Text, text) {
		t.Errorf("echo %q = %+v; want its own session's answer", text, res.Content[0])
	}
}
