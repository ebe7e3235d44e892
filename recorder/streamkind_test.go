package recorder_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
	"github.com/mcpvcr/mcpvcr/store"
)

// TestHTTP_StatelessGET: a stateless Streamable HTTP server (the Go SDK's)
// mints no session id, so the recorder cannot tell at once whether the
// first GET opens an HTTP+SSE stream. Answered 405 it is no such stream,
// and after a POST answered with JSON the session is Streamable HTTP: each
// GET is recorded as the session's GET stream, as the audit's GET rules
// read it, not as an HTTP+SSE one.
func TestHTTP_StatelessGET(t *testing.T) {
	for _, postFirst := range []bool{false, true} {
		srv := mcptest.ServerConfig{}.NewServer()
		h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
		u, db, _ := proxy(t, h)
		do := func(method, body string) int {
			req, _ := http.NewRequestWithContext(t.Context(), method, u, strings.NewReader(body))
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("MCP-Protocol-Version", "2025-11-25")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return resp.StatusCode
		}
		n := 2 // streams
		if postFirst {
			if code := do(http.MethodPost, `{"jsonrpc":"2.0","id":1,"method":"ping"}`); code != http.StatusOK {
				t.Fatalf("POST ping: %d", code)
			}
			n++
		}
		for range 2 {
			if code := do(http.MethodGet, ""); code != http.StatusMethodNotAllowed {
				t.Fatalf("GET: %d; want 405 from a stateless server", code)
			}
		}
		gets := 0
		for _, st := range allStreams(t, db, n) {
			if st.Method != http.MethodGet {
				continue
			}
			gets++
			if st.Kind != store.GetStream {
				t.Errorf("post first %t: a GET answered %d recorded as %s; want %s", postFirst, st.Status, st.Kind, store.GetStream)
			}
		}
		if gets != 2 {
			t.Errorf("post first %t: %d GETs recorded; want 2", postFirst, gets)
		}
	}
}

// allStreams returns the streams of every session of db once n of them
// have ended.
func allStreams(tb testing.TB, db *store.DB, n int) []store.Stream {
	tb.Helper()
	ctx := tb.Context()
	for range 2000 {
		if err := db.Flush(ctx); err != nil {
			tb.Fatal(err)
		}
		ss, err := db.Sessions(ctx)
		if err != nil {
			tb.Fatal(err)
		}
		var out []store.Stream
		ended := 0
		for _, s := range ss {
			sts, err := db.Streams(ctx, s.ID)
			if err != nil {
				tb.Fatal(err)
			}
			for _, st := range sts {
				if st.End != store.EndOpen {
					ended++
				}
			}
			out = append(out, sts...)
		}
		if ended >= n {
			return out
		}
		// Flush above is the synchronisation (the proxy closes a stream
		// after its handler returns); this loop only bounds retries.
	}
	tb.Fatal("streams did not end")
	return nil
}
