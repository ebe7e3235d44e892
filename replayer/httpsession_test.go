package replayer_test

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
	"github.com/mcpvcr/mcpvcr/replayer"
	"github.com/mcpvcr/mcpvcr/store"
)

// The tests of live sessions (httpsession.go, and their door in
// http.go): expiry, unknown session ids, and many live sessions at once
// over recorded sessions that share their opening.

// clientFrames returns the data of the client frames of session id of
// cassettes/NAME.jsonl, in recorded order.
func clientFrames(t *testing.T, name string, id int64) []string {
	t.Helper()
	recs, err := store.LoadFile(context.Background(), filepath.Join("..", "cassettes", name+".jsonl"), id)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range recs[0].Frames {
		if f.Direction == store.ClientToServer {
			out = append(out, string(f.Data))
		}
	}
	return out
}

// TestHTTP_ExpireAfterEachSession: Faults.ExpireAfter counts each live
// session's requests on its own: once one session made that many, its
// next request is answered 404 Session not found (-32001), as an
// expiring server answers, while another session goes on within its own
// count; a client that initializes again gets a new session, answered
// again. A request with a session id replay never issued gets 404 too.
func TestHTTP_ExpireAfterEachSession(t *testing.T) {
	frames := clientFrames(t, "multi-gosdk-http-json", 1) // initialize, initialized, tools/list, tools/call
	if len(frames) != 4 {
		t.Fatalf("session 1 holds %d client frames; want 4", len(frames))
	}
	_, url := serveCassette(t, "multi-gosdk-http-json", "/mcp", func(s *replayer.Server) { s.Faults.ExpireAfter = 3 })
	ctx := testContext(t)
	header := map[string]string{"Mcp-Protocol-Version": mcptest.V20251125}
	a := &rawClient{t: t, ctx: ctx, url: url}
	b := &rawClient{t: t, ctx: ctx, url: url}
	for i, f := range frames[:3] {
		for name, c := range map[string]*rawClient{"a": a, "b": b} {
			if code, evs, _ := c.do(http.MethodPost, f, header); code >= 300 {
				t.Fatalf("session %s, request %d (within the limit) = %d %v", name, i+1, code, evs)
			}
		}
	}
	if a.sid == "" || a.sid == b.sid {
		t.Fatalf("session ids %q and %q; want two sessions", a.sid, b.sid)
	}
	expired := a.sid
	code, evs, _ := a.do(http.MethodPost, frames[3], header)
	if code != http.StatusNotFound || len(evs) != 1 || !strings.Contains(evs[0].data, `"code":-32001`) || !strings.Contains(evs[0].data, "Session not found") {
		t.Errorf("request 4 of a session past ExpireAfter 3 = %d %v; want 404 Session not found (-32001)", code, evs)
	}
	a.sid = ""
	if code, evs, _ := a.do(http.MethodPost, frames[0], nil); code != http.StatusOK || a.sid == "" || a.sid == expired {
		t.Errorf("initialize again after expiry = %d %v, session %q (expired %q); want 200 and a new session", code, evs, a.sid, expired)
	}
	stranger := &rawClient{t: t, ctx: ctx, url: url, sid: "never-issued"}
	if code, evs, _ := stranger.do(http.MethodPost, frames[2], header); code != http.StatusNotFound || len(evs) != 1 || !strings.Contains(evs[0].data, "Session not found") {
		t.Errorf("a request with an unknown Mcp-Session-Id = %d %v; want 404 Session not found", code, evs)
	}
}

// TestHTTP_ManySessionsShareAnOpening: sixteen Go SDK clients at once,
// over Streamable HTTP with SSE answers, against the eight recorded
// sessions of multi-gosdk-http-sse, which share their opening
// (initialize, tools/list) and then differ: each client's echo gets the
// answer of the session that echoed its text, none another's, and every
// frame matches. Runs 0 and 1 differ only in echo's text.
func TestHTTP_ManySessionsShareAnOpening(t *testing.T) {
	srv, url := serveCassette(t, "multi-gosdk-http-sse", "/mcp", nil)
	ctx := testContext(t)
	var wg sync.WaitGroup
	for i := range 16 {
		run := i % 2
		wg.Go(func() {
			cs, err := mcptest.NewClientAs(upgraded).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
			if err != nil {
				t.Errorf("client %d: %v", i, err)
				return
			}
			defer cs.Close()
			if _, err := cs.ListTools(ctx, nil); err != nil {
				t.Errorf("client %d: tools/list: %v", i, err)
				return
			}
			want := fmt.Sprintf("run %d", run)
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": want}})
			if err != nil {
				t.Errorf("client %d: echo %q: %v", i, want, err)
				return
			}
			if len(res.Content) == 0 {
				t.Errorf("client %d: echo %q: no content", i, want)
				return
			}
			if tc, ok := res.Content[0].(*mcp.TextContent); !ok || !strings.Contains(tc.Text, want) {
				t.Errorf("client %d: echo %q = %+v; want the recorded answer to %q", i, want, res.Content[0], want)
			}
		})
	}
	wg.Wait()
	reps := srv.Reports()
	clients := 0
	for _, r := range reps {
		clients += r.Clients
	}
	if clients != 16 {
		t.Errorf("the reports stand for %d clients; want 16 (the sessions that ended folded by recorded session)", clients)
	}
	for _, r := range reps {
		if len(r.Mismatches) > 0 || r.Candidates != 1 || r.SessionID > 2 {
			t.Errorf("report of session %d: %d candidates, unmatched %v; want session 1 or 2 singled out and every frame matched", r.SessionID, r.Candidates, r.Mismatches)
		}
	}
}
