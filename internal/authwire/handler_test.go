package authwire_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpvcr/mcpvcr/internal/authwire"
	"github.com/mcpvcr/mcpvcr/internal/mcptest"
	"github.com/mcpvcr/mcpvcr/internal/storetest"
	"github.com/mcpvcr/mcpvcr/recorder"
	"github.com/mcpvcr/mcpvcr/replayer"
	"github.com/mcpvcr/mcpvcr/store"
)

// The tests of OAuth replay (Handler): the dance beside MCP, recorded
// in-test through recorder.HTTP in front of the Go SDK test server
// behind its bearer-token middleware, with mcptest's authorization
// server fronted, and replayed by a Handler in front of a
// replayer.Server to a client with another clientInfo.

// testContext returns a context that ends with the test, or after 30 s.
func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// recordOAuth records one run of mcptest.OAuthRun through recorder.HTTP in
// front of p and returns the recording and what the client saw.
func recordOAuth(t *testing.T, p *mcptest.Protected, version string, c mcptest.OAuthClient) (*store.DB, []*store.Recording, []string) {
	t.Helper()
	ctx := testContext(t)
	up, err := url.Parse(p.URL)
	if err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "oauth.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	rec := &recorder.HTTP{Upstream: up, Sink: db}
	ts := httptest.NewServer(rec)
	got := mcptest.OAuthRun(ctx, t, ts.URL+"/mcp", version, "oauth-client", c, "first")
	ts.Close()
	if err := rec.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := db.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	recs, err := db.Recordings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// What replay must answer: the refusal with its challenge and the
	// token exchange.
	var challenged, token bool
	for _, r := range recs {
		for _, st := range r.Streams {
			challenged = challenged || st.Status == http.StatusUnauthorized && st.ResponseHeader.Get("WWW-Authenticate") != ""
			token = token || st.Method == http.MethodPost && strings.Contains(st.URL, "token")
		}
	}
	if !challenged || !token {
		t.Fatalf("the recording holds a 401 with WWW-Authenticate: %v, a token exchange: %v; want both", challenged, token)
	}
	return db, recs, got
}

// serveRecordings serves recs from a Handler in front of a
// replayer.Server under httptest, and returns a summary of both. With db
// set, the Handler reads db (LoadHandler), else recs (NewHandler).
func serveRecordings(t *testing.T, recs []*store.Recording, db *store.DB) (summary func(*strings.Builder) bool, url string) {
	t.Helper()
	srv := &replayer.Server{Recordings: recs}
	h := authwire.NewHandler(srv, recs, nil)
	if db != nil {
		var ids []int64
		for _, r := range recs {
			ids = append(ids, r.Session.ID)
		}
		var err error
		if h, err = authwire.LoadHandler(testContext(t), srv, db, ids, nil); err != nil {
			t.Fatal(err)
		}
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	t.Cleanup(srv.Close)
	return func(b *strings.Builder) bool {
		ok := h.WriteSummary(b)
		return srv.WriteSummary(b) && ok
	}, ts.URL
}

// TestHandler_ReplayOffline: for OAuth flows of several revisions (dynamic
// registration; a pre-registered client stepping up to a larger scope;
// a public client at 2026-07-28, whose exchanges the pool answers; the
// 2025-03-26 server that is its own authorization server, approving a
// headless client at once), a client with another clientInfo completes
// the whole dance against replay alone (the 401 and its challenge, the
// metadata, registration, the authorization redirect, the token) and
// sees what the recorded client saw: neither the server nor the
// authorization server gets a request, and every frame matches.
func TestHandler_ReplayOffline(t *testing.T) {
	for _, tt := range []struct {
		name    string
		version string
		cfg     mcptest.ProtectedConfig
		client  mcptest.OAuthClient
	}{
		{"Dynamic", mcptest.V20250618, mcptest.ProtectedConfig{Scopes: []string{"mcp:read"}}, mcptest.OAuthClient{}},
		{"StepUp", mcptest.V20251125, mcptest.ProtectedConfig{Scopes: []string{"mcp:read"}, StepUp: []string{"mcp:write"}},
			mcptest.OAuthClient{ID: "pre-registered", Secret: "auth-test-secret"}},
		{"Modern/PublicClient", mcptest.V20260728, mcptest.ProtectedConfig{Scopes: []string{"mcp:read"}}, mcptest.OAuthClient{ID: "public-client"}},
		{"BackCompat/OriginAS", mcptest.V20250326, mcptest.ProtectedConfig{OriginAS: &mcptest.AuthServerConfig{}, Scopes: []string{"mcp:read"}},
			mcptest.OAuthClient{ID: "origin-client", Headless: true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			if cfg.OriginAS == nil {
				cfg.AS = mcptest.StartAuthServer(t, "")
				cfg.AS.Register(tt.client.ID, tt.client.Secret, mcptest.RedirectURI)
			}
			p := mcptest.StartProtected(t, cfg)
			if cfg.OriginAS != nil {
				p.AS.Register(tt.client.ID, tt.client.Secret, mcptest.RedirectURI)
			}
			db, recs, recorded := recordOAuth(t, p, tt.version, tt.client)
			asBefore, serverBefore := len(p.AS.Requests()), len(p.Requests())

			// From the recordings in memory, then from the cassette twice:
			// the index of exchanges built and stored, then read.
			for round, from := range []*store.DB{nil, db, db} {
				summary, base := serveRecordings(t, recs, from)
				replayed := mcptest.OAuthRun(testContext(t), t, base+"/mcp", tt.version, "another-oauth-client", tt.client, "first")
				if diff := cmp.Diff(recorded, replayed); diff != "" {
					t.Errorf("round %d: replay differs from the recording (-record +replay):\n%s", round, diff)
				}
				if a, s := len(p.AS.Requests()), len(p.Requests()); a != asBefore || s != serverBefore {
					t.Errorf("round %d: replay was not offline: the authorization server got %d requests, the server %d", round, a-asBefore, s-serverBefore)
				}
				var sum strings.Builder
				if !summary(&sum) || !strings.Contains(sum.String(), " 0 unmatched") {
					t.Errorf("round %d: WriteSummary: %s; want ok and every frame matched", round, sum.String())
				}
				if es, err := db.CacheRange(testContext(t), "oauth exchanges", nil, 0, 1); round > 0 && (err != nil || len(es) == 0) {
					t.Errorf("round %d: the cassette holds no index of exchanges (%v)", round, err)
				}
			}
		})
	}
}

// TestHandler_UnrecordedExchange: an OAuth exchange the recording does not
// hold (metadata at another path) is answered 404 with an OAuth error
// naming it, and the summary is not ok and names it; the recorded
// metadata is served with its resource naming the replay server.
func TestHandler_UnrecordedExchange(t *testing.T) {
	as := mcptest.StartAuthServer(t, "")
	p := mcptest.StartProtected(t, mcptest.ProtectedConfig{AS: as, Scopes: []string{"mcp:read"}})
	_, recs, _ := recordOAuth(t, p, mcptest.V20250618, mcptest.OAuthClient{})
	summary, base := serveRecordings(t, recs, nil)

	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/.well-known/oauth-protected-resource/mcp"); code != http.StatusOK || !strings.Contains(body, `"resource":"`+base+`/mcp"`) {
		t.Errorf("the recorded metadata = %d %s; want 200 naming the replay server as the resource", code, body)
	}
	code, body := get("/.well-known/oauth-protected-resource/elsewhere")
	if code != http.StatusNotFound || !strings.Contains(body, "nothing recorded for GET /.well-known/oauth-protected-resource/elsewhere") {
		t.Errorf("unrecorded metadata = %d %s; want 404 naming it", code, body)
	}
	var sum strings.Builder
	if summary(&sum) || !strings.Contains(sum.String(), "unmatched OAuth exchange GET /.well-known/oauth-protected-resource/elsewhere") {
		t.Errorf("WriteSummary = %q; want it not ok, naming the unmatched exchange", sum.String())
	}
}

// TestLoadHandler_NoExchanges: a cassette that holds no OAuth exchange
// gets an empty index stored, built from its session rows alone, so
// that the next replay reads one entry; a well-known request is then
// answered 404 and noted, and MCP goes to Next.
func TestLoadHandler_NoExchanges(t *testing.T) {
	ctx := testContext(t)
	jsonl, err := os.ReadFile("../../cassettes/multi-gosdk-http-json.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	db, ids := storetest.Import(t, string(jsonl))
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) })
	for round := range 2 {
		h, err := authwire.LoadHandler(ctx, next, db, ids, nil)
		if err != nil {
			t.Fatal(err)
		}
		if es, err := db.CacheRange(ctx, "oauth exchanges", nil, 0, 0); err != nil || len(es) != 1 {
			t.Fatalf("round %d: cache entries %d, %v; want the one of an empty index", round, len(es), err)
		}
		for _, tc := range []struct {
			method, path string
			want         int
		}{{"GET", "/.well-known/oauth-authorization-server", http.StatusNotFound}, {"POST", "/mcp", http.StatusTeapot}} {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest(tc.method, tc.path, nil))
			if w.Code != tc.want {
				t.Errorf("round %d: %s %s = %d; want %d", round, tc.method, tc.path, w.Code, tc.want)
			}
		}
		if got := h.Unmatched(); !cmp.Equal(got, []string{"GET /.well-known/oauth-authorization-server"}) {
			t.Errorf("round %d: Unmatched() = %q; want the well-known request", round, got)
		}
	}
}
