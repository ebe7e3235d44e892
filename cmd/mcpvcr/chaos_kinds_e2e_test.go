package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/chaos"
	"github.com/mcpvcr/mcpvcr/internal/mcptest"
	"github.com/mcpvcr/mcpvcr/store"
)

// chaosStdioRun replays cassette over stdio under seed (and extra flags)
// to the Go SDK client, which starts replay as its server process and
// runs the chaos script; replay's exit code and stderr.
func chaosStdioRun(t *testing.T, cassette string, seed uint64, script string, extra ...string) (int, string) {
	t.Helper()
	var stderr syncBuffer
	rep := exec.Command(mcpvcrBin, append([]string{"replay", "--stdio", "--cassette", cassette, "--chaos", fmt.Sprint(seed)}, extra...)...)
	rep.Stderr = &stderr
	saw := mcptest.ChaosRun(testCtx(t), &mcp.CommandTransport{Command: rep, TerminateDuration: 5 * time.Second}, upgradedClient, script)
	t.Logf("Go SDK client saw %q", saw)
	if rep.ProcessState == nil && rep.Process != nil {
		_ = rep.Process.Kill()
		_ = rep.Wait()
	}
	return rep.ProcessState.ExitCode(), stderr.String()
}

// chaosFired adds the kinds of a seed's run to fired.
func chaosFired(fired map[string][]uint64, seed uint64, kinds []string) {
	for _, k := range kinds {
		if !slices.Contains(fired[k], seed) {
			fired[k] = append(fired[k], seed)
		}
	}
}

// checkChaosFired: every kind injected over transport at rev fired in
// some seed.
func checkChaosFired(t *testing.T, fired map[string][]uint64, seeds []uint64, transport store.Transport, rev string) {
	t.Helper()
	t.Logf("kinds fired, by seed: %v", fired)
	for _, k := range chaos.FaultKinds() {
		// Reorder has no place in the committed cassettes: TestChaos_Reorder.
		if chaos.Injected(k, transport, rev) && k != chaos.FaultReorder && !chaos.OptIn(k) && len(fired[k.String()]) == 0 {
			t.Errorf("kind %s fired in no seed of %v (fired: %v)", k, seeds, fired)
		}
	}
}

// TestChaos_Stdio: chaos over stdio, to the Go SDK client with replay as
// its server process: a delay before a server frame, a late result (the
// recorded server's own answer after the client's cancellation); the
// same faults in both runs of a seed, the exit code following the
// verdicts, and between them the seeds fire every kind stdio gets.
func TestChaos_Stdio(t *testing.T) {
	parallel(t) // each replay waits on its client, not on the CPU
	cassette := filepath.Join(cassetteDir, "gosdk-stdio-2025-11-25.jsonl")
	fired := map[string][]uint64{}
	seeds := chaosSeedsOr(t, []uint64{1, 2}) // both kinds in each
	for _, seed := range seeds {
		t.Run(fmt.Sprint("script/seed", seed), func(t *testing.T) {
			chaosFired(fired, seed, chaosSameRuns(t, seed, func() (int, string) { return chaosStdioRun(t, cassette, seed, "script") }))
		})
	}
	checkChaosFired(t, fired, seeds, store.Stdio, mcptest.V20251125)
}

// TestChaos_Modern: chaos over 2026-07-28 exchanges, to the Go SDK client
// in process doing run 0 (discover, tools/list, echo): a response stream
// cut or closed before its response (the request is lost), a 503, a
// delay; the same faults in both runs of a seed, and every kind
// 2026-07-28 gets fired in some seed.
func TestChaos_Modern(t *testing.T) {
	parallel(t) // each replay waits on its client, not on the CPU
	cassette := filepath.Join(cassetteDir, "multi-gosdk-http-2026-07-28.jsonl")
	fired := map[string][]uint64{}
	seeds := chaosSeedsOr(t, []uint64{6, 8, 12}) // 6: 503, delay; 8: cut, delay; 12: delay, close-early
	for _, seed := range seeds {
		t.Run(fmt.Sprint("run0/seed", seed), func(t *testing.T) {
			chaosFired(fired, seed, chaosSameSeed(t, cassette, seed, func(url string) {
				saw := mcptest.ChaosRunAt(testCtx(t), &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: 2}, upgradedClient, "run0", mcptest.V20260728)
				t.Logf("Go SDK client saw %q", saw)
			}))
		})
	}
	checkChaosFired(t, fired, seeds, store.StreamableHTTP, mcptest.V20260728)
}

// TestChaos_HTTPSSE: chaos over the 2024-11-05 HTTP+SSE transport, to
// the Go SDK client in process doing run 0: delays on the SSE stream, the
// SSE stream cut (the session ends) and a 503 on a POST; the same faults
// in both runs of a seed, and every kind HTTP+SSE gets fired in some
// seed. A 503 ends the Go SDK client's session, so the cut is also drawn
// alone (--chaos-faults cut,delay), where the client gets to it.
func TestChaos_HTTPSSE(t *testing.T) {
	parallel(t) // each replay waits on its client, not on the CPU
	cassette := filepath.Join(cassetteDir, "multi-gosdk-sse.jsonl")
	fired := map[string][]uint64{}
	seeds := chaosSeedsOr(t, []uint64{1, 4}) // all kinds: 4 delay, 503; cut and delay only: 1 cut
	for _, kinds := range []string{"", "cut,delay"} {
		for _, seed := range seeds {
			var extra []string
			name := "all"
			if kinds != "" {
				extra, name = []string{"--chaos-faults", kinds}, kinds
			}
			t.Run(fmt.Sprint(name, "/seed", seed), func(t *testing.T) {
				chaosFired(fired, seed, chaosSameSeed(t, cassette, seed, func(url string) {
					saw := mcptest.ChaosRunAt(testCtx(t), &mcp.SSEClientTransport{Endpoint: url}, upgradedClient, "run0", mcptest.V20241105)
					t.Logf("Go SDK client saw %q", saw)
				}, extra...))
			})
		}
	}
	checkChaosFired(t, fired, seeds, store.LegacySSE, mcptest.V20241105)
}

// TestChaos_StdioHTMLReport: --chaos-report over stdio writes the run's
// HTML report, every fault stderr names in it with its verdict, each
// placed on the session's timeline.
func TestChaos_StdioHTMLReport(t *testing.T) {
	t.Parallel() // replay waits on its client, not on the CPU
	out := filepath.Join(t.TempDir(), "chaos.html")
	_, stderr := chaosStdioRun(t, filepath.Join(cassetteDir, "gosdk-stdio-2025-11-25.jsonl"), 1, "script", "--chaos-report", out)
	d := readChaosPage(t, out)
	faults, _, verdicts := chaosFaults(stderr)
	if len(faults) == 0 {
		t.Fatalf("no fault on stderr:\n%s", stderr)
	}
	var got, gotVerdicts []string
	for i, f := range d.Chaos.Faults {
		got, gotVerdicts = append(got, fmt.Sprintf("session %d, %s at %s: %s", f.Session, f.Kind, f.Where, f.What)), append(gotVerdicts, f.Verdict)
		if f.St < 0 {
			t.Errorf("fault %d (%s at %s) is not placed on the timeline", i+1, f.Kind, f.Where)
		}
	}
	if !slices.Equal(got, faults) || !slices.Equal(gotVerdicts, verdicts) {
		t.Errorf("report faults:\n%s\n%v\nwant, as on stderr:\n%s\n%v", strings.Join(got, "\n"), gotVerdicts, strings.Join(faults, "\n"), verdicts)
	}
}

// TestChaos_TSClientLateResult: the TypeScript SDK client cancels its
// slow call (an AbortSignal) and keeps the call's POST stream open; the
// result replay sends there after the cancellation is taken and dropped,
// and the client sends nothing more for that id: pass, in both runs.
func TestChaos_TSClientLateResult(t *testing.T) {
	parallel(t) // each replay waits on its client, not on the CPU
	node := mcptest.Everything(t)[0]
	cassette := chaosCassette(t, "script")
	const seed = 1
	for run := range 2 {
		code, stderr := chaosRun(t, cassette, seed, func(url string) {
			out, err := exec.CommandContext(testCtx(t), node, tsChaosScript, url, "script").CombinedOutput()
			if err != nil {
				t.Errorf("TypeScript client: %v\n%s", err, out)
			}
		}, "--chaos-faults", "late-result", "--chaos-rate", "1", "--ignore", "initialize:params.capabilities", "--ignore", "notifications/cancelled:params.reason")
		_, kinds, verdicts := chaosFaults(stderr)
		if !slices.Equal(kinds, []string{"late-result"}) || !slices.Equal(verdicts, []string{"pass"}) || code != 0 {
			t.Errorf("run %d: exit %d, faults %v, verdicts %v; want one late-result, passed:\n%s", run+1, code, kinds, verdicts, stderr)
		}
		if !strings.Contains(stderr, "sent nothing more for request") {
			t.Errorf("run %d: the verdict does not say the client sent nothing more for the request:\n%s", run+1, stderr)
		}
	}
}

// TestChaos_InspectorCLIStdio: Inspector's CLI starts replay over stdio
// as its server (initialize, logging/setLevel, the script's echo call,
// close) under chaos: the same faults in both runs of a seed, delays
// taken; the late result stays not reached (the CLI cancels nothing).
func TestChaos_InspectorCLIStdio(t *testing.T) {
	parallel(t) // each replay waits on its client, not on the CPU
	cli := mcptest.InspectorCLI(t)
	cassette := filepath.Join(cassetteDir, "gosdk-stdio-2025-11-25.jsonl")
	fired := map[string][]uint64{}
	for _, seed := range chaosSeedsOr(t, []uint64{5}) { // 5: a delay before the initialize answer
		t.Run(fmt.Sprint("echo/seed", seed), func(t *testing.T) {
			chaosFired(fired, seed, chaosSameRuns(t, seed, func() (int, string) {
				report := filepath.Join(t.TempDir(), "stderr.txt")
				// Inspector's CLI keeps its server's stderr to itself: replay
				// writes it to a file through a shell.
				server := fmt.Sprintf("exec %s replay --stdio --cassette %s --chaos %d --ignore 'initialize:params' 2>%s", mcpvcrBin, cassette, seed, report)
				args := append(cli[1:], "sh", "-c", server, "--method", "tools/call", "--tool-name", "echo", "--tool-arg", "text=hello")
				cmd := exec.CommandContext(testCtx(t), cli[0], args...)
				cmd.Env = append(os.Environ(), "MCP_CATALOG_PATH="+filepath.Join(t.TempDir(), "mcp.json"))
				out, err := cmd.CombinedOutput()
				t.Logf("Inspector CLI (%v): %s", err, out)
				stderr, rerr := os.ReadFile(report)
				if rerr != nil {
					t.Fatalf("replay's stderr: %v", rerr)
				}
				code := 0
				if strings.Contains(string(stderr), ": fail\n") {
					code = 1
				}
				return code, string(stderr)
			}))
		})
	}
	if len(fired["delay"]) == 0 {
		t.Errorf("delay fired in no seed (fired: %v)", fired)
	}
}

// TestChaos_TSClientTransports is TestChaos_TSClient over the other
// transports the TypeScript SDK client speaks: stdio (its
// StdioClientTransport starting mcpvcr replay --stdio as its server) and
// the 2024-11-05 HTTP+SSE transport (SSEClientTransport). The same faults
// in both runs of a seed, each announced, the exit code following the
// verdicts.
func TestChaos_TSClientTransports(t *testing.T) {
	parallel(t) // each replay waits on its client, not on the CPU
	node := mcptest.Everything(t)[0]
	ignore := []string{"--ignore", "initialize:params.capabilities", "--ignore", "notifications/cancelled:params.reason"}
	t.Run("stdio", func(t *testing.T) {
		t.Parallel()
		// Two sessions sharing their opening, as users' cassettes hold.
		cassette := filepath.Join(t.TempDir(), "stdio.db")
		for range 2 {
			if res := mcpvcr(t, "", "import", filepath.Join(cassetteDir, "gosdk-stdio-2025-11-25.jsonl"), "--cassette", cassette); res.code != 0 {
				t.Fatalf("import: %s", res.stderr)
			}
		}
		for _, seed := range chaosSeedsOr(t, []uint64{1, 2}) {
			t.Run(fmt.Sprint("script/seed", seed), func(t *testing.T) {
				chaosSameRuns(t, seed, func() (int, string) {
					args := append([]string{mcpvcrBin, "replay", "--stdio", "--cassette", cassette, "--chaos", fmt.Sprint(seed)}, ignore...)
					cmdline, err := json.Marshal(args)
					if err != nil {
						t.Fatal(err)
					}
					saw, stderr := tsChaosRun(t, node, "stdio:"+string(cmdline), "script")
					exit := -1
					if len(saw) > 0 {
						if _, err := fmt.Sscanf(saw[len(saw)-1], "server exit: %d", &exit); err != nil {
							t.Errorf("no exit code of replay in what the client saw: %q", saw)
						}
					}
					return exit, stderr
				})
			})
		}
	})
	t.Run("sse", func(t *testing.T) {
		t.Parallel()
		cassette := filepath.Join(cassetteDir, "multi-gosdk-sse.jsonl")
		// The client asks for its newest revision; the recorded
		// 2024-11-05 server answered with its own, as it would.
		// A client the 503 kept from sending tools/list gets its echo
		// answered after --wait, out of recorded order: sooner than its
		// own timeout.
		extra := append(ignore, "--ignore", "initialize:params.protocolVersion", "--wait", "2s")
		// As in TestChaos_HTTPSSE, the cut is also drawn alone, where a
		// client the 503 stopped gets to it.
		for _, kinds := range []string{"", "cut,delay"} {
			name := "all"
			if kinds != "" {
				name = kinds
			}
			for _, seed := range chaosSeedsOr(t, []uint64{1, 4}) {
				t.Run(fmt.Sprint(name, "/run0/seed", seed), func(t *testing.T) {
					args := slices.Clone(extra)
					if kinds != "" {
						args = append(args, "--chaos-faults", kinds)
					}
					chaosSameSeed(t, cassette, seed, func(url string) {
						tsChaosRun(t, node, url, "run0", "TRANSPORT=sse")
					}, args...)
				})
			}
		}
	})
}

// tsChaosRun runs the TypeScript chaos client on target (a URL, or
// stdio:COMMAND) doing script, and returns what it saw and its stderr
// (over stdio, the server's).
func tsChaosRun(t *testing.T, node, target, script string, env ...string) (saw []string, stderr string) {
	t.Helper()
	cmd := exec.CommandContext(testCtx(t), node, tsChaosScript, target, script)
	cmd.Env = append(append(os.Environ(), "CLIENT_NAME=ts-chaos-client"), env...)
	var out, errb syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Errorf("TypeScript client: %v\n%s", err, errb.String())
	}
	if err := json.Unmarshal([]byte(out.String()), &saw); err != nil {
		t.Errorf("TypeScript client printed %q: %v", out.String(), err)
	}
	t.Logf("TypeScript client saw %q", saw)
	return saw, errb.String()
}

// TestChaos_InspectorCLISSE is TestChaos_InspectorCLI over the
// 2024-11-05 HTTP+SSE transport: Inspector's CLI (--transport sse) calls
// echo, recorded through mcpvcr record in front of the Go SDK server's
// HTTP+SSE endpoint twice (two sessions sharing their opening), then
// replayed under chaos. The same faults in both runs of a seed, each
// announced, the exit code following the verdicts.
func TestChaos_InspectorCLISSE(t *testing.T) {
	parallel(t) // each replay waits on its client, not on the CPU
	cli := mcptest.InspectorCLI(t)
	inspect := func(t *testing.T, url string) string {
		args := append(slices.Clone(cli[1:]), url, "--transport", "sse", "--connect-timeout", "3000", "--method", "tools/call", "--tool-name", "echo", "--tool-arg", "text=run 0")
		cmd := exec.CommandContext(testCtx(t), cli[0], args...)
		cmd.Env = append(os.Environ(), "MCP_CATALOG_PATH="+filepath.Join(t.TempDir(), "mcp.json"))
		out, err := cmd.CombinedOutput()
		t.Logf("Inspector CLI (%v): %s", err, out)
		return string(out)
	}
	cassette := filepath.Join(t.TempDir(), "inspector-sse.db")
	rec := startServing(t, "record", "--cassette", cassette, "--upstream", cliUpstream(t, nil, nil)+"/sse", "--listen", "127.0.0.1:0")
	for range 2 {
		if out := inspect(t, rec.URL); !strings.Contains(out, "run 0") {
			t.Fatalf("recording: Inspector's CLI did not get its echo: %s", out)
		}
	}
	if code := rec.Stop(); code != 0 {
		t.Fatalf("record exited %d:\n%s", code, rec.stderr)
	}
	fired := map[string][]uint64{}
	seeds := chaosSeedsOr(t, []uint64{1, 4, 6}) // 1: cut; 4: 503; 6: 503, delay
	for _, seed := range seeds {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			chaosFired(fired, seed, chaosSameSeed(t, cassette, seed, func(url string) { inspect(t, strings.TrimSuffix(url, "/mcp")+"/sse") }))
		})
	}
	checkChaosFired(t, fired, seeds, store.LegacySSE, mcptest.V20241105)
}

// TestChaos_StdioExit: chaos kind exit, the server exiting at a request
// before its answer, on a stdio recording made fresh by the test (mcpvcr
// record of the Go SDK test server, chaos script "confusion"). The Go SDK
// client, with replay as its server process, reads the end: the call the
// server exited at fails as a closed connection, not at its context's
// deadline, and so does every later one; replay names the fault, judges
// it not observed (nothing of the client is on the wire once the server
// is gone) and exits 0; both runs of a seed draw the same fault.
func TestChaos_StdioExit(t *testing.T) {
	parallel(t) // each replay waits on its client, not on the CPU
	server := mcptest.BuildServer(t)
	db := filepath.Join(t.TempDir(), "exit.db")
	var recErr bytes.Buffer
	rec := exec.Command(mcpvcrBin, "record", "--cassette", db, "--name", "exit", "--", server)
	rec.Stderr = &recErr
	saw := mcptest.ChaosRun(testCtx(t), &mcp.CommandTransport{Command: rec}, upgradedClient, "confusion")
	want := []string{"connected", "tools/list: ok", "echo: ok", "progress: ok", "logging/setLevel: ok", "log: ok", "slow: ok", "add: ok", "close: ok"}
	if code := rec.ProcessState.ExitCode(); code != 0 || !slices.Equal(saw, want) {
		t.Fatalf("recording: mcpvcr record exited %d, the client saw %q; want %q\n%s", code, saw, want, recErr.String())
	}
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			var first string
			for run := range 2 {
				var stderr syncBuffer
				rep := exec.Command(mcpvcrBin, "replay", "--stdio", "--cassette", db, "--chaos", fmt.Sprint(seed), "--chaos-faults", "exit")
				rep.Stderr = &stderr
				saw := mcptest.ChaosRun(testCtx(t), &mcp.CommandTransport{Command: rep, TerminateDuration: 5 * time.Second}, upgradedClient, "confusion")
				t.Logf("run %d: the Go SDK client saw %q", run+1, saw)
				if rep.ProcessState == nil && rep.Process != nil {
					_ = rep.Process.Kill()
					_ = rep.Wait()
				}
				out := stderr.String()
				faults, kinds, verdicts := chaosFaults(out)
				if len(faults) != 1 || kinds[0] != "exit" || verdicts[0] != "not observed" {
					t.Fatalf("run %d: faults %q (%q, %q); want one exit, not observed:\n%s", run+1, faults, kinds, verdicts, out)
				}
				checkChaosExit(t, seed, rep.ProcessState.ExitCode(), out)
				if code := rep.ProcessState.ExitCode(); code != 0 {
					t.Errorf("run %d: replay exited %d; want 0:\n%s", run+1, code, out)
				}
				// The call at the exit fails as the connection closed; the
				// script's slow step fails first at its own wait for a
				// progress notification (5 s), then the SDK says the end.
				failed := slices.IndexFunc(saw, func(s string) bool { return !strings.HasSuffix(s, ": ok") && s != "connected" })
				if failed >= 0 && strings.HasPrefix(saw[failed], "slow: wait for progress") {
					failed++
				}
				if failed < 0 || failed >= len(saw) || !strings.Contains(saw[failed], "EOF") {
					t.Errorf("run %d: the client saw %q; want the call at the exit to fail as the connection closed (EOF), not at a deadline", run+1, saw)
				}
				for _, s := range saw[max(failed, 0)+1:] {
					if strings.HasSuffix(s, ": ok") && !strings.HasPrefix(s, "close") {
						t.Errorf("run %d: %q succeeded after the server exited", run+1, s)
					}
				}
				if run == 0 {
					first = faults[0]
				} else if faults[0] != first {
					t.Errorf("run 2 drew %q; run 1 %q", faults[0], first)
				}
			}
		})
	}
}
