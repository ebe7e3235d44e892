package matrix

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
)

// tsClient is the TypeScript SDK client (1.32.2, in node:
// testdata/client.mjs), which asks for 2025-11-25, its latest revision.
func tsClient(t *testing.T, ep endpoint, c call) run {
	t.Helper()
	node := mcptest.Everything(t)[0] // the SDK comes with the reference server
	target := ep.url
	if ep.transport == "stdio" {
		b, _ := json.Marshal(ep.argv)
		target = string(b)
	}
	plan, err := json.Marshal(c.plan)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	script, _ := filepath.Abs(filepath.Join("testdata", "client.mjs"))
	cmd := exec.CommandContext(ctx, node, script, ep.transport, target)
	cmd.Env = append(os.Environ(), "PLAN="+string(plan), "CLIENT_NAME="+c.info, "NOTES="+itoa(c.notes))
	if c.alt {
		cmd.Env = append(cmd.Env, "ALT=1")
	}
	var stdout, stderr syncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("the TypeScript client: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	var got struct {
		Transcript
		ServerExit *int `json:"serverExit"`
	}
	line := strings.TrimSpace(stdout.String())
	if i := strings.LastIndexByte(line, '\n'); i >= 0 {
		line = line[i+1:]
	}
	if err := json.Unmarshal([]byte(line), &got); err != nil {
		t.Fatalf("the TypeScript client printed %q: %v\n%s", stdout.String(), err, stderr.String())
	}
	out := run{t: got.Transcript, stderr: stderr.String(), code: -1}
	if got.ServerExit != nil {
		out.code = *got.ServerExit
	}
	return out
}
