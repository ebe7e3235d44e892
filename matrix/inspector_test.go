package matrix

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
)

// inspectorClient is the MCP Inspector's CLI (2.12.0): one invocation is
// one session, one list or call. It has no option for its clientInfo, so
// P1 replays to it as it was recorded. Over stdio it runs the command
// through sh, which keeps the command's stderr and exit code in files
// (the CLI keeps its server's stderr to itself) and passes the CLI's
// SIGTERM on to it.
func inspectorClient(t *testing.T, ep endpoint, c call) run {
	t.Helper()
	cli := mcptest.InspectorCLI(t)
	if len(c.plan) != 1 || !c.plan[0].plain() {
		t.Fatalf("Inspector's CLI runs one plain list or call, not %+v", c.plan)
	}
	s := c.plan[0]
	dir := t.TempDir()
	args := append([]string(nil), cli[1:]...)
	switch ep.transport {
	case "stdio":
		var quoted []string
		for _, a := range ep.argv {
			quoted = append(quoted, shellQuote(a))
		}
		// The CLI ends its server with SIGTERM, which would end sh and
		// leave the command holding the pipes the CLI waits on: sh
		// passes it on, then waits for the command's own exit code.
		script := fmt.Sprintf(`trap 'kill -TERM $p 2>/dev/null' TERM INT
exec 3<&0
%s 2>%s <&3 3<&- &
p=$!
while :; do wait $p; c=$?; kill -0 $p 2>/dev/null || break; done
echo $c >%s`, strings.Join(quoted, " "), shellQuote(filepath.Join(dir, "stderr")), shellQuote(filepath.Join(dir, "code")))
		args = append(args, "sh", "-c", script, "--transport", "stdio")
	default:
		args = append(args, ep.url, "--transport", ep.transport)
	}
	args = append(args, "--method", map[string]string{"list": "tools/list", "call": "tools/call"}[s.Op])
	if s.Op == "call" {
		args = append(args, "--tool-name", s.Tool)
		for k, v := range s.Args {
			args = append(args, "--tool-arg", fmt.Sprintf("%s=%v", k, v))
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, cli[0], args...)
	cmd.Env = append(os.Environ(), "MCP_CATALOG_PATH="+filepath.Join(dir, "mcp.json"))
	var stdout, stderr syncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	e := Entry{Step: s.name()}
	if err := cmd.Run(); err != nil {
		e.Error = fmt.Sprintf("%v: %s", err, strings.TrimSpace(stderr.String()))
	}
	var v any
	if err := json.Unmarshal([]byte(stdout.String()), &v); err != nil {
		v = stdout.String()
	}
	e.Result = v
	out := run{t: Transcript{Steps: []Entry{e}}, code: -1}
	if ep.transport == "stdio" {
		b, _ := os.ReadFile(filepath.Join(dir, "stderr"))
		out.stderr = string(b)
		if b, err := os.ReadFile(filepath.Join(dir, "code")); err == nil {
			if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				out.code = n
			}
		}
	}
	return out
}

// shellQuote quotes s for sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
