package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
)

// The clientInfo of the recorded multi-session runs, and the one the replay
// tests use: the same client one patch release later, under another name.
var (
	recordedClient = &mcp.Implementation{Name: "mcpvcr-suite", Version: "2.12.0"}
	upgradedClient = &mcp.Implementation{Name: "mcpvcr-suite-ci", Version: "2.12.1"}
)

// multiRuns is how many client runs (sessions) each multi-session cassette
// holds.
const multiRuns = 8

// multiRunTimeout bounds one replayed client run: a replay that holds a
// request open fails the run instead of blocking the suite.
const multiRunTimeout = 20 * time.Second

// A multiSuite is a multi-session cassette of one transport: multiRuns
// sessions, each recorded by a separate client run that shares its opening
// frames (initialize or server/discover, tools/list) with the others and
// differs later.
type multiSuite struct {
	name    string // cassettes/multi-<name>.jsonl and .golden.json
	version string // the protocol revision the client asks for
	// script does run i on a connected session and returns what the
	// client saw.
	script func(ctx context.Context, cs *mcp.ClientSession, i int) map[string]any
	// stdio, when set, is the server's command line: the cassette is
	// recorded by mcpvcr record -- stdio… and replayed with replay --stdio.
	stdio func(tb testing.TB) []string
	// upstream, when stdio is nil, starts the HTTP server and returns its
	// endpoint URL; path is the endpoint's path on the replay server.
	upstream func(tb testing.TB) string
	path     string
	// transport makes the client transport for an HTTP endpoint URL.
	transport func(url string) mcp.Transport
}

func (s multiSuite) cassette() string { return filepath.Join(cassetteDir, "multi-"+s.name+".jsonl") }
func (s multiSuite) golden() string {
	return filepath.Join(cassetteDir, "multi-"+s.name+".golden.json")
}

// multiSuites are the committed multi-session cassettes, one per transport.
func multiSuites() []multiSuite {
	testserver := func(args ...string) func(tb testing.TB) []string {
		return func(tb testing.TB) []string { return append([]string{mcptest.BuildServer(tb)}, args...) }
	}
	httpServer := func(args ...string) func(tb testing.TB) string {
		return func(tb testing.TB) string { return mcptest.StartServer(tb, args...) }
	}
	streamable := func(url string) mcp.Transport { return &mcp.StreamableClientTransport{Endpoint: url} }
	return []multiSuite{
		{name: "gosdk-stdio", version: mcptest.V20251125, script: gosdkRun, stdio: testserver()},
		{name: "everything-stdio", version: mcptest.V20251125, script: everythingRun, stdio: mcptest.Everything},
		{name: "gosdk-http-json", version: mcptest.V20251125, script: gosdkRun, upstream: httpServer("-transport", "http", "-json"), path: "/mcp", transport: streamable},
		{name: "gosdk-http-sse", version: mcptest.V20251125, script: gosdkRun, upstream: httpServer("-transport", "http"), path: "/mcp", transport: streamable},
		{name: "everything-http-sse", version: mcptest.V20251125, script: everythingRun, upstream: func(tb testing.TB) string { return mcptest.EverythingHTTP(tb, mcptest.StreamableHTTP) }, path: "/mcp", transport: streamable},
		{name: "gosdk-sse", version: mcptest.V20241105, script: gosdkRun, upstream: httpServer("-transport", "sse"), path: "/sse", transport: func(url string) mcp.Transport { return &mcp.SSEClientTransport{Endpoint: url} }},
		{name: "gosdk-http-2026-07-28", version: mcptest.V20260728, script: gosdkRun, upstream: httpServer("-transport", "http", "-stateless"), path: "/mcp", transport: streamable},
		{name: "gosdk-stdio-2026-07-28", version: mcptest.V20260728, script: gosdkRun, stdio: testserver()},
	}
}

// gosdkRun is run i against the Go SDK test server: tools/list, then one of
// eight different continuations. Runs 0 and 1 differ only in an argument;
// run 4 makes the server ask the client for its roots and run 5 for a
// sampled message (server-to-client requests before 2026-07-28, input
// requests after).
func gosdkRun(ctx context.Context, cs *mcp.ClientSession, i int) map[string]any {
	r := newRunLog(ctx, cs)
	call := r.call
	switch i {
	case 0, 1:
		call("echo", map[string]any{"text": fmt.Sprintf("run %d", i)})
	case 2:
		call("add", map[string]any{"a": 1, "b": 2})
	case 3:
		call("add", map[string]any{"a": 40, "b": 2})
	case 4:
		call("roots", nil)
	case 5:
		call("sample", map[string]any{"prompt": "run 5"})
	case 6:
		call("info", nil)
		call("echo", map[string]any{"text": "run 6"})
	case 7:
		r.do("resources/read", func() (any, error) {
			return cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: mcptest.StaticURI})
		})
		r.do("prompts/get greet", func() (any, error) {
			return cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greet", Arguments: map[string]string{"name": "run 7"}})
		})
	}
	return r.out
}

// everythingRun is run i against @modelcontextprotocol/server-everything:
// tools/list, then one of eight continuations. Run 6 asks the server to
// sample from the client; run 7 lists the client's roots (the server asks
// for them with roots/list).
func everythingRun(ctx context.Context, cs *mcp.ClientSession, i int) map[string]any {
	r := newRunLog(ctx, cs)
	call := r.call
	switch i {
	case 0, 1:
		call("echo", map[string]any{"message": fmt.Sprintf("run %d", i)})
	case 2:
		call("get-sum", map[string]any{"a": 2, "b": 40})
	case 3:
		call("get-sum", map[string]any{"a": 1, "b": 1})
	case 4:
		call("get-structured-content", map[string]any{"location": "New York"})
	case 5:
		call("trigger-long-running-operation", map[string]any{"duration": 0.2, "steps": 2})
	case 6:
		call("trigger-sampling-request", map[string]any{"prompt": "run 6", "maxTokens": 16})
	case 7:
		call("get-roots-list", map[string]any{})
	}
	return r.out
}

// runLog collects what one client run saw, step by step, as JSON values
// keyed "NN step" so that a golden file reads in order.
type runLog struct {
	ctx context.Context
	cs  *mcp.ClientSession
	out map[string]any
	n   int
}

// newRunLog starts the log of a run as every run starts: what connecting
// returned, then tools/list.
func newRunLog(ctx context.Context, cs *mcp.ClientSession) *runLog {
	r := &runLog{ctx: ctx, cs: cs, out: map[string]any{}}
	if res := cs.InitializeResult(); res != nil {
		r.put("connect", jsonValueOf(res), nil)
	}
	r.do("tools/list", func() (any, error) { return cs.ListTools(ctx, nil) })
	return r
}

// call logs a tools/call of name with args.
func (r *runLog) call(name string, args map[string]any) {
	r.do("tools/call "+name, func() (any, error) {
		return r.cs.CallTool(r.ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	})
}

func (r *runLog) do(name string, f func() (any, error)) {
	v, err := f()
	r.put(name, jsonValueOf(v), err)
}

func (r *runLog) put(name string, v any, err error) {
	r.n++
	key := fmt.Sprintf("%02d %s", r.n, name)
	if err != nil {
		r.out[key] = "error: " + err.Error()
		return
	}
	r.out[key] = v
}

func jsonValueOf(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return "marshal: " + err.Error()
	}
	var x any
	_ = json.Unmarshal(b, &x)
	return x
}

// clientRun connects a client named info over transport at the suite's
// revision, does run i and closes. A failure to connect is part of what
// the client saw, not a test failure: the caller compares.
func (s multiSuite) clientRun(ctx context.Context, info *mcp.Implementation, transport mcp.Transport, i int) map[string]any {
	cs, err := mcptest.NewClientAs(info).Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: s.version})
	if err != nil {
		return map[string]any{"01 connect": "error: " + err.Error()}
	}
	out := s.script(ctx, cs, i)
	if err := cs.Close(); err != nil && s.stdio == nil {
		out["close"] = "error: " + err.Error()
	}
	return out
}

// record records the suite's cassette afresh: each run through its own
// mcpvcr record process into one database, then every session exported.
// It writes the cassette and the golden file of what each live run saw.
func (s multiSuite) record(t *testing.T) {
	ctx := testCtx(t)
	db := filepath.Join(t.TempDir(), "c.db")
	live := make([]map[string]any, multiRuns)
	var upstream string
	if s.stdio == nil {
		upstream = s.upstream(t)
	}
	for i := range multiRuns {
		name := fmt.Sprintf("multi-%s-%d", s.name, i)
		if s.stdio != nil {
			// The server is named without its directory, found on PATH, and
			// its arguments inside the repository relative to its root, so
			// that the cassette does not record this machine's paths.
			argv := s.stdio(t)
			dir, base := filepath.Split(argv[0])
			root, err := filepath.Abs(filepath.Join(cassetteDir, ".."))
			if err != nil {
				t.Fatal(err)
			}
			args := []string{"record", "--cassette", db, "--name", name, "--", base}
			for _, a := range argv[1:] {
				if rel, err := filepath.Rel(root, a); err == nil && filepath.IsAbs(a) && !strings.HasPrefix(rel, "..") {
					a = filepath.ToSlash(rel)
				}
				args = append(args, a)
			}
			rec := exec.Command(mcpvcrBin, args...)
			rec.Dir = root
			rec.Env = append(os.Environ(), "PATH="+filepath.Clean(dir)+string(os.PathListSeparator)+os.Getenv("PATH"))
			live[i] = s.clientRun(ctx, recordedClient, &mcp.CommandTransport{Command: rec, TerminateDuration: 200 * time.Millisecond}, i)
			continue
		}
		rec := startServing(t, "record", "--cassette", db, "--name", name, "--upstream", upstream, "--listen", "127.0.0.1:0")
		live[i] = s.clientRun(ctx, recordedClient, s.transport(rec.URL), i)
		if code := rec.Stop(); code != 0 {
			t.Fatalf("record run %d exited %d:\n%s", i, code, rec.stderr)
		}
	}
	ls := mcpvcr(t, "", "ls", "--cassette", db)
	if got := strings.Count(strings.TrimSpace(ls.stdout), "\n"); got != multiRuns {
		t.Fatalf("recorded %d sessions; want %d:\n%s", got, multiRuns, ls.stdout)
	}
	if res := mcpvcr(t, "", "export", "--cassette", db, "-o", s.cassette()); res.code != 0 {
		t.Fatalf("export: %s", res.stderr)
	}
	b, _ := json.MarshalIndent(live, "", "  ")
	if err := os.WriteFile(s.golden(), append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

// loadGolden reads what the live runs saw.
func (s multiSuite) loadGolden(tb testing.TB) []map[string]any {
	tb.Helper()
	b, err := os.ReadFile(s.golden())
	if err != nil {
		tb.Fatal(err)
	}
	var live []map[string]any
	if err := json.Unmarshal(b, &live); err != nil {
		tb.Fatalf("%s: %v", s.golden(), err)
	}
	if len(live) != multiRuns {
		tb.Fatalf("%s holds %d runs; want %d", s.golden(), len(live), multiRuns)
	}
	return live
}

// shuffledRuns returns the run numbers in a random order, and logs the
// seed that reproduces it.
func shuffledRuns(tb testing.TB) []int {
	seed := uint64(time.Now().UnixNano())
	tb.Logf("run order seed %d", seed)
	order := rand.New(rand.NewPCG(seed, seed)).Perm(multiRuns)
	return order
}

// replayAll replays the suite's cassette, without a SESSION argument, to an
// upgraded client doing every recorded run again, in random order and
// concurrently: over stdio, one mcpvcr replay --stdio per run, at most
// four at once; over HTTP, every run at once against one replay --listen.
// Every run must see exactly what its live run saw, and every replay must
// exit 0 with no unmatched frame. extra are more replay flags.
func (s multiSuite) replayAll(t *testing.T, info *mcp.Implementation, extra ...string) {
	live := s.loadGolden(t)
	order := shuffledRuns(t)
	got := make([]map[string]any, multiRuns)
	var wg sync.WaitGroup
	if s.stdio != nil {
		stderrs := make([]*syncBuffer, multiRuns)
		codes := make([]int, multiRuns)
		sem := make(chan struct{}, 4)
		for _, i := range order {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				ctx, cancel := context.WithTimeout(context.Background(), multiRunTimeout)
				defer cancel()
				stderrs[i] = &syncBuffer{}
				rep := exec.Command(mcpvcrBin, append([]string{"replay", "--stdio", "--cassette", s.cassette()}, extra...)...)
				rep.Stderr = stderrs[i]
				got[i] = s.clientRun(ctx, info, &mcp.CommandTransport{Command: rep, TerminateDuration: 5 * time.Second}, i)
				if rep.ProcessState == nil && rep.Process != nil {
					// The client gave up before it started closing.
					_ = rep.Process.Kill()
					_ = rep.Wait()
				}
				codes[i] = rep.ProcessState.ExitCode()
			}()
		}
		wg.Wait()
		for i := range multiRuns {
			if diff := cmp.Diff(live[i], got[i]); diff != "" {
				t.Errorf("run %d: replay differs from the live run (-live +replay):\n%s\nreplay stderr:\n%s", i, diff, stderrs[i])
			}
			if codes[i] != 0 || !strings.Contains(stderrs[i].String(), " 0 unmatched") {
				t.Errorf("run %d: mcpvcr replay --stdio exited %d; want 0 and every client frame matched:\n%s", i, codes[i], stderrs[i])
			}
		}
		return
	}
	rep := startServing(t, append([]string{"replay", "-v", "--cassette", s.cassette(), "--listen", "127.0.0.1:0"}, extra...)...)
	for _, i := range order {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), multiRunTimeout)
			defer cancel()
			got[i] = s.clientRun(ctx, info, s.transport(rep.URL+s.path), i)
		}()
	}
	wg.Wait()
	code := rep.Stop()
	for i := range multiRuns {
		if diff := cmp.Diff(live[i], got[i]); diff != "" {
			t.Errorf("run %d: replay differs from the live run (-live +replay):\n%s", i, diff)
		}
	}
	if t.Failed() || code != 0 || !strings.Contains(rep.stderr.String(), " 0 unmatched") {
		t.Errorf("mcpvcr replay --listen exited %d; want 0 and every client frame matched:\n%s", code, rep.stderr)
	}
}

// TestMultiSession replays each committed multi-session cassette (eight
// sessions recorded by separate client runs that share their opening
// frames) without a SESSION argument to an upgraded client (other
// clientInfo name and version) that does every run again, in random order
// and concurrently. Each run must get the answers its live run got, none
// from another session. With -recassette it records the cassettes afresh from
// the live servers.
func TestMultiSession(t *testing.T) {
	parallel(t)
	for _, s := range multiSuites() {
		t.Run(s.name, func(t *testing.T) {
			if *recassette {
				s.record(t)
			}
			t.Parallel()
			s.replayAll(t, upgradedClient)
		})
	}
}

// TestClientUpgrade_ExactMulti replays run 0 of each multi-session
// cassette with --match exact to the upgraded client: its first frame
// (initialize, or server/discover with the client info in _meta) matches
// nothing, the client is refused, and replay reports the clientInfo
// difference and exits 1.
func TestClientUpgrade_ExactMulti(t *testing.T) {
	parallel(t)
	for _, s := range multiSuites() {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), multiRunTimeout)
			defer cancel()
			var (
				got    map[string]any
				code   int
				stderr string
			)
			if s.stdio != nil {
				var buf syncBuffer
				rep := exec.Command(mcpvcrBin, "replay", "--stdio", "--match", "exact", "--cassette", s.cassette())
				rep.Stderr = &buf
				got = s.clientRun(ctx, upgradedClient, &mcp.CommandTransport{Command: rep}, 0)
				if rep.ProcessState == nil && rep.Process != nil {
					_ = rep.Process.Kill()
					_ = rep.Wait()
				}
				code, stderr = rep.ProcessState.ExitCode(), buf.String()
			} else {
				rep := startServing(t, "replay", "--match", "exact", "--cassette", s.cassette(), "--listen", "127.0.0.1:0")
				got = s.clientRun(ctx, upgradedClient, s.transport(rep.URL+s.path), 0)
				code, stderr = rep.Stop(), rep.stderr.String()
			}
			if msg, failed := got["01 connect"].(string); !failed || ctx.Err() != nil {
				t.Errorf("the upgraded client under --match exact: connect = %v; want it refused at once", msg)
			}
			if code != 1 || !strings.Contains(stderr, "clientInfo") || !strings.Contains(stderr, upgradedClient.Version) {
				t.Errorf("replay --match exact exited %d; want 1 and a report naming the clientInfo difference:\n%s", code, stderr)
			}
		})
	}
}
