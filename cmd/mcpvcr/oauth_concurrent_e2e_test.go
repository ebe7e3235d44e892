package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
)

// TestOAuth_ConcurrentClients records three Go SDK clients that go
// through their OAuth dance through one mcpvcr record at once: each is
// refused, then all of them wait until every one has registered before
// they fetch their authorization URL, so that their registrations,
// authorization and token requests interleave. Each exchange must land in
// its own client's session: every session holds one registration, one
// authorization request and one token exchange, and the access token its
// token answer handed out is the one its MCP requests present. Each
// session then replays offline to a client with another clientInfo.
func TestOAuth_ConcurrentClients(t *testing.T) {
	const n = 3
	ctx := testCtx(t)
	as := mcptest.StartAuthServer(t, "")
	p := mcptest.StartProtected(t, mcptest.ProtectedConfig{AS: as, Scopes: []string{"mcp:read"}})
	db := filepath.Join(t.TempDir(), "concurrent.db")
	dumpOnFailure(t, db)
	rec := startServing(t, "record", "--cassette", db, "--upstream", p.URL, "--listen", "127.0.0.1:0")

	// A barrier: every client waits in its authorization code fetcher
	// until all n have come that far.
	var mu sync.Mutex
	arrived, all := 0, make(chan struct{})
	barrier := func(ctx context.Context) error {
		mu.Lock()
		if arrived++; arrived == n {
			close(all)
		}
		mu.Unlock()
		select {
		case <-all:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	got := make([][]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			c := mcptest.OAuthClient{Headless: i%2 == 1, BeforeAuthorize: barrier}
			got[i] = mcptest.OAuthRun(ctx, t, rec.URL, mcptest.V20251125, fmt.Sprintf("client-%d", i), c, fmt.Sprintf("text-%d", i))
		})
	}
	wg.Wait()
	if code := rec.Stop(); code != 0 {
		t.Fatalf("mcpvcr record exited %d:\n%s", code, rec.stderr)
	}
	if ls := mcpvcr(t, "", "ls", "--cassette", db); strings.Count(ls.stdout, "\n") != n+1 {
		t.Fatalf("ls: want %d sessions:\n%s", n, ls.stdout)
	}
	handed := regexp.MustCompile(`\\"access_token\\":\\"(REDACTED-[0-9a-f]+)`)
	bearer := regexp.MustCompile(`"Authorization":\["Bearer (REDACTED-[0-9a-f]+)"\]`)
	for s := 1; s <= n; s++ {
		export := mcpvcr(t, "", "export", "--cassette", db, fmt.Sprint(s)).stdout
		for _, ep := range []string{"registration_endpoint", "authorization_endpoint", "token_endpoint"} {
			re := regexp.MustCompile(`"url":"/_mcpvcr/as/\w+/` + ep)
			if c := len(re.FindAllString(export, -1)); c != 1 {
				t.Errorf("session %d holds %d %s exchanges; want its own one", s, c, ep)
			}
		}
		tokens := handed.FindAllStringSubmatch(export, -1)
		if len(tokens) != 1 {
			t.Errorf("session %d holds %d token answers; want its own one", s, len(tokens))
			continue
		}
		for _, m := range bearer.FindAllStringSubmatch(export, -1) {
			if m[1] != tokens[0][1] {
				t.Errorf("session %d presents %s, not the token %s its own token exchange handed out", s, m[1], tokens[0][1])
			}
		}
		if len(bearer.FindAllStringSubmatch(export, -1)) == 0 {
			t.Errorf("session %d never presents a token", s)
		}
	}

	// Each recorded conversation replays offline, to a client with another
	// clientInfo.
	rep := startServing(t, "replay", "--cassette", db, "--listen", "127.0.0.1:0")
	for i := range n {
		c := mcptest.OAuthClient{Headless: i%2 == 1}
		replayed := mcptest.OAuthRun(ctx, t, rep.URL+"/mcp", mcptest.V20251125, fmt.Sprintf("replayed-client-%d", i), c, fmt.Sprintf("text-%d", i))
		if diff := cmp.Diff(got[i], replayed); diff != "" {
			t.Errorf("client %d: replay differs from the recording (-record +replay):\n%s", i, diff)
		}
	}
	if code := rep.Stop(); code != 0 || strings.Contains(rep.stderr.String(), "unmatched OAuth") {
		t.Errorf("mcpvcr replay exited %d; want 0 and every exchange matched:\n%s", code, rep.stderr)
	}
}

// stepper is an http.RoundTripper of one client with its own connection
// pool, as a client in its own process has: before each request it
// calls before, after each answer after. Its OAuth dance (every request
// without a bearer token: the refused initialize, the metadata, the
// registration, the authorization and the token request) goes over dance,
// one connection at a time, and each answer is read whole: the dance
// keeps to one connection, as a client that reads its answers does.
// Without that, whether the connection that carried the refusal is reused
// for the registration is up to net/http's timing (an answer not yet read
// to its end, or a connection not yet back in the pool, means a new one),
// and the connection is the only link this test leaves the recorder.
type stepper struct {
	rt, dance     http.RoundTripper
	before, after func(*http.Request, *http.Response)
}

func (s stepper) RoundTrip(r *http.Request) (*http.Response, error) {
	if s.before != nil {
		s.before(r, nil)
	}
	rt := s.rt
	inDance := !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ")
	if inDance {
		rt = s.dance
	}
	resp, err := rt.RoundTrip(r)
	if err == nil && inDance && !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		body, rerr := io.ReadAll(resp.Body)
		resp.Body.Close()
		if rerr != nil {
			return nil, rerr
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
	}
	if err == nil && s.after != nil {
		s.after(r, resp)
	}
	return resp, err
}

// TestOAuth_ConcurrentClients_OutOfOrder: two clients, each with its own
// connections (as in two processes); client 0 is refused first, client 1
// second, but client 1 registers first. Its registration links to
// nothing but its connection, which carried its refusal: it must land in
// client 1's session, not in the oldest refused one. Every initialize of
// a session, the refused one and its retry, comes from one client.
func TestOAuth_ConcurrentClients_OutOfOrder(t *testing.T) {
	ctx := testCtx(t)
	as := mcptest.StartAuthServer(t, "")
	p := mcptest.StartProtected(t, mcptest.ProtectedConfig{AS: as, Scopes: []string{"mcp:read"}})
	db := filepath.Join(t.TempDir(), "order.db")
	dumpOnFailure(t, db)
	rec := startServing(t, "record", "--cassette", db, "--upstream", p.URL, "--listen", "127.0.0.1:0")

	refused0, registered1 := make(chan struct{}), make(chan struct{})
	var once0, once1 sync.Once
	wait := func(ch chan struct{}) {
		select {
		case <-ch:
		case <-ctx.Done():
		}
	}
	clients := []stepper{
		{before: func(r *http.Request, _ *http.Response) {
			if strings.HasSuffix(r.URL.Path, "/registration_endpoint") {
				wait(registered1)
			}
		}, after: func(_ *http.Request, resp *http.Response) {
			if resp.StatusCode == http.StatusUnauthorized {
				once0.Do(func() { close(refused0) })
			}
		}},
		{before: func(*http.Request, *http.Response) { wait(refused0) }, after: func(r *http.Request, _ *http.Response) {
			if strings.HasSuffix(r.URL.Path, "/registration_endpoint") {
				once1.Do(func() { close(registered1) })
			}
		}},
	}
	var wg sync.WaitGroup
	for i := range clients {
		clients[i].rt = baseTransport.Clone()
		dance := baseTransport.Clone()
		dance.MaxConnsPerHost = 1
		clients[i].dance = dance
		hc := &http.Client{Transport: clients[i]}
		wg.Go(func() {
			handler := mcptest.OAuthHandler(t, mcptest.OAuthClient{Headless: true, HTTPClient: hc})
			transport := &mcp.StreamableClientTransport{Endpoint: rec.URL, HTTPClient: hc, OAuthHandler: handler}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: fmt.Sprintf("client-%d", i), Version: "1.0.0"}, nil).Connect(ctx, transport,
				&mcp.ClientSessionOptions{ProtocolVersion: mcptest.V20251125})
			if err != nil {
				t.Errorf("client %d: connect: %v", i, err)
				return
			}
			defer cs.Close()
			if _, err := cs.ListTools(ctx, nil); err != nil {
				t.Errorf("client %d: tools/list: %v", i, err)
			}
		})
	}
	wg.Wait()
	if code := rec.Stop(); code != 0 {
		t.Fatalf("mcpvcr record exited %d:\n%s", code, rec.stderr)
	}
	names := regexp.MustCompile(`\\"clientInfo\\":\{\\"name\\":\\"(client-\d)`)
	for s := 1; s <= len(clients); s++ {
		export := mcpvcr(t, "", "export", "--cassette", db, fmt.Sprint(s)).stdout
		seen := map[string]bool{}
		for _, m := range names.FindAllStringSubmatch(export, -1) {
			seen[m[1]] = true
		}
		if len(seen) != 1 {
			t.Errorf("session %d holds the initialize requests of %v; want one client's", s, seen)
		}
		if c := len(regexp.MustCompile(`"url":"/_mcpvcr/as/\w+/registration_endpoint`).FindAllString(export, -1)); c != 1 {
			t.Errorf("session %d holds %d registrations; want its own one", s, c)
		}
	}
}
