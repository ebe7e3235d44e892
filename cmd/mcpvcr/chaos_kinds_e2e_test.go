package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
	"github.com/mcpvcr/mcpvcr/replayer"
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

// TestChaos_Stdio: chaos over stdio, to the Go SDK client with replay as
// its server process: a delay before a server frame, a late result (the
// recorded server's own answer after the client's cancellation); the
// same faults in both runs of a seed, the exit code following the
// verdicts, and between them the seeds fire every kind stdio gets.
func TestChaos_Stdio(t *testing.T) {
	t.Parallel() // each replay waits on its client, not on the CPU
	cassette := filepath.Join(cassetteDir, "gosdk-stdio-2025-11-25.jsonl")
	fired := map[string][]uint64{}
	for _, seed := range chaosSeeds(t) {
		t.Run(fmt.Sprint("script/seed", seed), func(t *testing.T) {
			kinds := chaosSameRuns(t, seed, func() (int, string) { return chaosStdioRun(t, cassette, seed, "script") })
			for _, k := range kinds {
				if !slices.Contains(fired[k], seed) {
					fired[k] = append(fired[k], seed)
				}
			}
		})
	}
	t.Logf("kinds fired, by seed: %v", fired)
	for _, k := range replayer.FaultKinds() {
		if replayer.Injected(k, store.Stdio, mcptest.V20251125) && len(fired[k.String()]) == 0 {
			t.Errorf("kind %s fired in no seed of %v (fired: %v)", k, chaosSeeds(t), fired)
		}
	}
}
