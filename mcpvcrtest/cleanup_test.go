package mcpvcrtest_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/clock"
	"github.com/mcpvcr/mcpvcr/mcpvcrtest"
)

// recTB is a testing.TB whose failures and cleanups the test inspects: it
// records Errorf and runs its cleanups when told, last registered first.
type recTB struct {
	testing.TB
	// mu guards errs and cleanups.
	mu       sync.Mutex
	errs     []string
	cleanups []func()
}

func (r *recTB) Helper() {}

func (r *recTB) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func (r *recTB) Fatalf(format string, args ...any) {
	r.TB.Fatalf("unexpected Fatalf: "+format, args...)
}

func (r *recTB) Cleanup(f func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cleanups = append(r.cleanups, f)
}

func (r *recTB) Failed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.errs) > 0
}

// finish runs the cleanups and returns what was reported.
func (r *recTB) finish() string {
	r.mu.Lock()
	cs := r.cleanups
	r.cleanups = nil
	r.mu.Unlock()
	for _, f := range slices.Backward(cs) {
		f()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.errs, "\n")
}

// TestMismatch: a client call the cassette does not hold is answered with
// -32019, and the test fails at cleanup with the replayer's diff.
func TestMismatch(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		version string
		tr      func(tb testing.TB) mcp.Transport
	}{
		{"NewServer", "2025-11-25", func(tb testing.TB) mcp.Transport {
			return &mcp.StreamableClientTransport{Endpoint: mcpvcrtest.Endpoint(mcpvcrtest.NewServer(tb, httpJSONCassette))}
		}},
		{"Transport", "2026-07-28", func(tb testing.TB) mcp.Transport { return mcpvcrtest.Transport(tb, modernCassette) }},
		{"Command", "2025-11-25", func(tb testing.TB) mcp.Transport {
			return &mcp.CommandTransport{Command: mcpvcrtest.Command(tb, stdioCassette)}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := &recTB{TB: t}
			cs, err := newClient().Connect(ctx, tt.tr(rt), &mcp.ClientSessionOptions{ProtocolVersion: tt.version})
			if err != nil {
				t.Fatalf("Connect: %v", err)
			}
			_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "never recorded"}})
			if err == nil || !strings.Contains(err.Error(), "no recorded frame matches") {
				t.Errorf("CallTool(unrecorded) = %v; want the replay's no-match error", err)
			}
			cs.Close()
			got := rt.finish()
			t.Logf("failure:\n%s", got)
			for _, want := range []string{
				"does not match (answered with JSON-RPC error -32019)",
				"unmatched request tools/call",
				"diff (-recorded +live)",
				`+ "never recorded"`,
				// The hint is written in Go, as the test would say it.
				`mcpvcrtest.Match("tools/call:params.arguments.text")`,
			} {
				if !strings.Contains(got, want) {
					t.Errorf("the test's failure lacks %q; it is:\n%s", want, got)
				}
			}
			if strings.Contains(got, "--ignore") {
				t.Errorf("the test's failure gives a hint as a CLI flag:\n%s", got)
			}
		})
	}
}

// TestMatchOption: Match("exact") refuses the upgraded client's
// initialize (its clientInfo differs), and an ignore rule lets a call with
// other arguments match.
func TestMatchOption(t *testing.T) {
	ctx := context.Background()
	t.Run("Exact", func(t *testing.T) {
		rt := &recTB{TB: t}
		_, err := newClient().Connect(ctx, mcpvcrtest.Transport(rt, stdioCassette, mcpvcrtest.Match("exact"), mcpvcrtest.Wait(time.Millisecond)), &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err == nil {
			t.Errorf("Connect with Match(exact) succeeded; want initialize refused")
		}
		if got := rt.finish(); !strings.Contains(got, "clientInfo") {
			t.Errorf("failure does not name clientInfo:\n%s", got)
		}
	})
	t.Run("Ignore", func(t *testing.T) {
		tr := mcpvcrtest.Transport(t, stdioCassette, mcpvcrtest.Session(1), mcpvcrtest.Match("tools/call:params.arguments.text"))
		cs, err := newClient().Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatalf("Connect: %v", err)
		}
		defer cs.Close()
		if _, err := cs.ListTools(ctx, nil); err != nil {
			t.Fatalf("ListTools: %v", err)
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "other"}})
		if err != nil {
			t.Fatalf("CallTool: %v", err)
		}
		if got, want := res.Content[0].(*mcp.TextContent).Text, "run 0"; got != want {
			t.Errorf("echo(other) = %q; want %q, session 1's answer", got, want)
		}
	})
}

// TestTransport_Synctest replays inside a synctest bubble with recorded
// timing (Pace 1): the bubble's fake time passes the recorded gaps at once,
// and synctest.Test fails if a goroutine Transport started outlives the
// test's cleanups.
func TestTransport_Synctest(t *testing.T) {
	for _, c := range []struct {
		name, cassette, version string
		paced                   bool // the replay waits out recorded gaps
	}{
		{"Stdio", stdioCassette, "2025-11-25", true},
		{"HTTP", httpSSECassette, "2025-11-25", true},
		// 2026-07-28 exchanges are answered from a pool, unpaced.
		{"HTTP20260728", modernCassette, "2026-07-28", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				tr := mcpvcrtest.Transport(t, c.cassette, mcpvcrtest.Pace(1))
				got := script(t.Context(), t, tr, c.version, 3)
				if !slices.Equal(got, want[3]) {
					t.Errorf("script = %q; want %q", got, want[3])
				}
				if c.paced && time.Since(start) == 0 {
					t.Errorf("no fake time passed: Pace(1) did not wait for the recorded gaps")
				}
			})
		})
	}
}

// TestCleanup_NoLeak: whatever order the test closes things in, or if it
// never closes its client, nothing that mcpvcrtest or the replayer
// started outlives the test's cleanups.
func TestCleanup_NoLeak(t *testing.T) {
	ctx := context.Background()
	before := goroutines()
	scenarios := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"NewServerClosedByDefer", func(t *testing.T) {
			srv := mcpvcrtest.NewServer(t, httpJSONCassette)
			cs := connect(ctx, t, &mcp.StreamableClientTransport{Endpoint: mcpvcrtest.Endpoint(srv)}, "2025-11-25")
			defer cs.Close()
			listTools(ctx, t, cs)
		}},
		{"NewServerClientClosedAfterServer", func(t *testing.T) {
			var cs *mcp.ClientSession
			t.Cleanup(func() { cs.Close() }) // registered first: runs after NewServer's
			srv := mcpvcrtest.NewServer(t, httpSSECassette)
			cs = connect(ctx, t, &mcp.StreamableClientTransport{Endpoint: mcpvcrtest.Endpoint(srv), MaxRetries: -1}, "2025-11-25")
			listTools(ctx, t, cs)
		}},
		{"NewServerClientNeverClosed", func(t *testing.T) {
			srv := mcpvcrtest.NewServer(t, httpJSONCassette)
			cs := connect(ctx, t, &mcp.StreamableClientTransport{Endpoint: mcpvcrtest.Endpoint(srv), MaxRetries: -1}, "2025-11-25")
			listTools(ctx, t, cs) // the standalone GET stays open
		}},
		{"TransportStdioNeverClosed", func(t *testing.T) {
			cs := connect(ctx, t, mcpvcrtest.Transport(t, stdioCassette), "2025-11-25")
			listTools(ctx, t, cs)
		}},
		{"TransportHTTPNeverClosed", func(t *testing.T) {
			cs := connect(ctx, t, mcpvcrtest.Transport(t, httpSSECassette), "2025-11-25")
			listTools(ctx, t, cs)
		}},
		{"TransportClosedByCleanup", func(t *testing.T) {
			cs := connect(ctx, t, mcpvcrtest.Transport(t, modernCassette), "2026-07-28")
			t.Cleanup(func() { cs.Close() })
			listTools(ctx, t, cs)
		}},
		{"ProxyRecordClientNeverClosed", func(t *testing.T) {
			// Proxy closes the recorder before its server: the GET stream
			// the client leaves open, which the upstream holds, must not
			// keep either Close waiting.
			live := mcp.NewServer(&mcp.Implementation{Name: "live", Version: "1.0.0"}, nil)
			up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return live }, nil))
			t.Cleanup(up.Close) // registered first: runs after Proxy's
			cassette := filepath.Join(t.TempDir(), "proxy.jsonl")
			srv := mcpvcrtest.Proxy(t, cassette, up.URL+"/mcp", mcpvcrtest.ModeRecordOnly)
			cs := connect(ctx, t, &mcp.StreamableClientTransport{Endpoint: mcpvcrtest.Endpoint(srv), MaxRetries: -1}, "2025-11-25")
			listTools(ctx, t, cs) // the standalone GET stays open
		}},
		{"CommandClosedByDefer", func(t *testing.T) {
			cs := connect(ctx, t, &mcp.CommandTransport{Command: mcpvcrtest.Command(t, stdioCassette)}, "2025-11-25")
			defer cs.Close()
			listTools(ctx, t, cs)
		}},
	}
	for _, s := range scenarios {
		t.Run(s.name, s.run)
		// The goroutines left to check belong to the SDK and net/http (a
		// closed connection's reader and writer end on their own shortly
		// after Close returns) and expose nothing to wait on, so polling
		// with a short sleep is the only way, as goleak does; it ends at
		// the first clean look and fails after 5 s.
		var left []string
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if left = ours(goroutines(), before); len(left) == 0 {
				break
			}
		}
		if len(left) > 0 {
			t.Errorf("%s: %d goroutines left after the test's cleanups:\n%s", s.name, len(left), strings.Join(left, "\n\n"))
		}
	}
}

func connect(ctx context.Context, t *testing.T, tr mcp.Transport, version string) *mcp.ClientSession {
	t.Helper()
	cs, err := newClient().Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	return cs
}

func listTools(ctx context.Context, t *testing.T, cs *mcp.ClientSession) {
	t.Helper()
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatalf("ListTools: %v", err)
	}
}

// goroutines returns the stacks of every goroutine but the caller's, by
// goroutine header ("goroutine 12 [chan receive]:" without the state).
func goroutines() map[string]string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	out := map[string]string{}
	for i, g := range strings.Split(string(buf), "\n\n") {
		if i == 0 {
			continue // this goroutine
		}
		id, _, _ := strings.Cut(g, " [")
		out[id] = g
	}
	return out
}

// ours returns the goroutines not in before that run code of this module
// (the replayer, mcpvcrtest, the store) or serve an HTTP connection.
func ours(now, before map[string]string) []string {
	var left []string
	for id, g := range now {
		if _, ok := before[id]; ok {
			continue
		}
		if strings.Contains(g, "github.com/mcpvcr/mcpvcr/") || strings.Contains(g, "net/http.(*conn).serve") {
			left = append(left, g)
		}
	}
	return left
}

// TestTransport_Clock: with Pace(1) and a fake clock, the recorded
// answer to initialize waits until the test advances the clock past its
// recorded gap.
func TestTransport_Clock(t *testing.T) {
	fake := clock.NewFake(time.Unix(0, 0))
	tr := mcpvcrtest.Transport(t, stdioCassette, mcpvcrtest.Pace(1), mcpvcrtest.Clock(fake))
	done := make(chan error, 1)
	var cs *mcp.ClientSession
	go func() {
		var err error
		cs, err = newClient().Connect(context.Background(), tr, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		done <- err
	}()
	// The replay waits on the fake clock for the answer's recorded offset.
	for fake.Waiters() == 0 {
		select {
		case err := <-done:
			t.Fatalf("Connect returned (%v) before the clock moved", err)
		default:
			runtime.Gosched()
		}
	}
	fake.Advance(time.Hour)
	if err := <-done; err != nil {
		t.Fatalf("Connect: %v", err)
	}
	cs.Close()
}

// TestStrict: with Strict, a request without the MCP-Protocol-Version
// header the negotiated revision requires is refused with 400 and fails
// the test; the SDK client's own requests pass.
func TestStrict(t *testing.T) {
	ctx := context.Background()
	rt := &recTB{TB: t}
	srv := mcpvcrtest.NewServer(rt, httpJSONCassette, mcpvcrtest.Strict())
	cs, err := newClient().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: mcpvcrtest.Endpoint(srv)}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	defer cs.Close()
	listTools(ctx, t, cs)
	req, _ := http.NewRequest("POST", mcpvcrtest.Endpoint(srv), strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"tools/list"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", cs.ID())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("POST without MCP-Protocol-Version: %s; want 400 under Strict", resp.Status)
	}
	cs.Close()
	if got := rt.finish(); !strings.Contains(got, "MCP-Protocol-Version") {
		t.Errorf("the test's failure does not name the missing header:\n%s", got)
	}
}

// TestMismatch_GoHint: a mismatch inside a test says, as Go, the option
// that would match, never a CLI flag: here a client whose initialize
// capabilities differ from the recording's.
func TestMismatch_GoHint(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name string
		tr   func(tb testing.TB, opts ...mcpvcrtest.Option) mcp.Transport
	}{
		{"Transport", func(tb testing.TB, opts ...mcpvcrtest.Option) mcp.Transport {
			return mcpvcrtest.Transport(tb, stdioCassette, opts...)
		}},
		{"Command", func(tb testing.TB, opts ...mcpvcrtest.Option) mcp.Transport {
			return &mcp.CommandTransport{Command: mcpvcrtest.Command(tb, stdioCassette, opts...)}
		}},
		{"NewServer", func(tb testing.TB, opts ...mcpvcrtest.Option) mcp.Transport {
			return &mcp.StreamableClientTransport{Endpoint: mcpvcrtest.Endpoint(mcpvcrtest.NewServer(tb, httpJSONCassette, opts...)), MaxRetries: -1}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rt := &recTB{TB: t}
			// No sampling handler: the capabilities lack "sampling".
			client := mcp.NewClient(&mcp.Implementation{Name: "other", Version: "1"}, &mcp.ClientOptions{
				ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) { return nil, nil },
			})
			cs, err := client.Connect(ctx, tt.tr(rt, mcpvcrtest.Wait(time.Millisecond)), &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err == nil {
				cs.Close()
			}
			got := rt.finish()
			t.Logf("failure:\n%s", got)
			if !strings.Contains(got, `try: mcpvcrtest.Match("initialize:params.capabilities.sampling") would match it`) {
				t.Errorf("failure:\n%s\nwant the Go option that matches", got)
			}
			if strings.Contains(got, "--ignore") || strings.Contains(got, "--match") {
				t.Errorf("failure names a CLI flag:\n%s", got)
			}

			// Exact matching refuses the other clientInfo; the hint is to
			// drop it.
			rt = &recTB{TB: t}
			cs, err = newClient().Connect(ctx, tt.tr(rt, mcpvcrtest.Match("exact"), mcpvcrtest.Wait(time.Millisecond)), &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err == nil {
				cs.Close()
			}
			if got := rt.finish(); !strings.Contains(got, `drop mcpvcrtest.Match("exact")`) {
				t.Errorf("exact failure:\n%s\nwant the hint to drop Match(\"exact\")", got)
			}
		})
	}
}
