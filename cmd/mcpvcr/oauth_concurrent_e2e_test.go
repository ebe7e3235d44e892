package main

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

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
			got[i] = oauthRun(ctx, t, rec.URL, mcptest.V20251125, fmt.Sprintf("client-%d", i), c, fmt.Sprintf("text-%d", i))
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
		replayed := oauthRun(ctx, t, rep.URL+"/mcp", mcptest.V20251125, fmt.Sprintf("replayed-client-%d", i), c, fmt.Sprintf("text-%d", i))
		if diff := cmp.Diff(got[i], replayed); diff != "" {
			t.Errorf("client %d: replay differs from the recording (-record +replay):\n%s", i, diff)
		}
	}
	if code := rep.Stop(); code != 0 || strings.Contains(rep.stderr.String(), "unmatched OAuth") {
		t.Errorf("mcpvcr replay exited %d; want 0 and every exchange matched:\n%s", code, rep.stderr)
	}
}
