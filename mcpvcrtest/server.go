package mcpvcrtest

import (
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"

	"github.com/mcpvcr/mcpvcr/internal/authwire"
	"github.com/mcpvcr/mcpvcr/store"
)

// endpoints maps each server NewServer or Proxy returned to its MCP path.
var endpoints sync.Map // *httptest.Server → string

// NewServer serves cassette (a .db cassette or a .jsonl export) over HTTP the
// way it was recorded, Streamable HTTP or the 2024-11-05 HTTP+SSE transport,
// on a listener on 127.0.0.1, and returns the running server. Every HTTP
// session of the cassette is a candidate (see Session): each client is
// matched to the session its frames single out, so a cassette of several
// runs serves clients that differ in their later requests. The MCP endpoint
// is the recorded path on srv.URL; Endpoint returns it.
//
// At t.Cleanup NewServer closes the server, ending streams it holds open,
// and fails t with the replayer's diff (the -32019 answer's) for each client
// frame that matched nothing. Close the client before the test ends, or let
// its own t.Cleanup (registered after NewServer) do it.
func NewServer(t testing.TB, cassette string, opts ...Option) *httptest.Server {
	t.Helper()
	c := newConfig(opts)
	recs := load(t, cassette, c, "NewServer", httpTransports...)
	srv := newServer(t, recs, c, "NewServer")
	ts := httptest.NewServer(authwire.NewHandler(srv, recs, nil)) // the OAuth dance beside MCP
	endpoints.Store(ts, ts.URL+recordedPath(recs))
	t.Cleanup(func() {
		// The replayer first: it ends the held streams that ts.Close
		// would otherwise wait for.
		srv.Close()
		ts.Close()
		endpoints.Delete(ts)
		fn := "NewServer"
		if c.via != "" {
			fn = c.via
		}
		if !check(t, fn, cassette, srv.Reports()) && c.via == "Proxy" {
			t.Errorf("%s", reRecordHint(t, c.viaMode))
		}
		checkChaos(t, fn, srv)
		checkProbe(t, fn, srv)
	})
	return ts
}

// Endpoint returns the MCP endpoint of srv, a server NewServer or Proxy
// returned: its URL and the path the client used when recording (such as
// /mcp, or /sse for the HTTP+SSE transport). For another server it returns
// srv.URL.
func Endpoint(srv *httptest.Server) string {
	if e, ok := endpoints.Load(srv); ok {
		return e.(string)
	}
	return srv.URL
}

// recordedPath is the path of the first request of the first recording: the
// MCP endpoint (Streamable HTTP) or the SSE stream (HTTP+SSE).
func recordedPath(recs []*store.Recording) string {
	for _, r := range recs {
		for _, st := range r.Streams {
			if st.URL == "" {
				continue
			}
			u, err := url.Parse(st.URL)
			if err != nil || u.Path == "" {
				continue
			}
			return u.Path
		}
	}
	return "/"
}
