package mcptest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TSOAuthRun runs the TypeScript SDK's client with a headless
// OAuthClientProvider (testdata/tsoauth/client.mjs, run by node) against
// the OAuth-protected MCP endpoint url: it registers dynamically, reads
// the code from the authorization endpoint's redirect without following
// it, lists the tools and calls echo with text. It returns what the
// client saw, one entry a line, or fails tb. It skips tb when node or the
// SDK is missing, or fails it if [RequirePeers]. env is added to the
// client's environment: [TSKeepDiscovery], say.
func TSOAuthRun(ctx context.Context, tb testing.TB, url, clientName, text string, env ...string) []string {
	tb.Helper()
	node, _ := everything(tb) // the SDK comes with the reference server
	root, err := repoRoot()
	if err != nil {
		tb.Fatal(err)
	}
	script := filepath.Join(root, "internal", "mcptest", "testdata", "tsoauth", "client.mjs")
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, node, script, url, clientName, text)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	if err := cmd.Run(); err != nil {
		tb.Fatalf("the TypeScript OAuth client against %s: %v\n%s%s", url, err, stdout.String(), stderr.String())
	}
	return strings.Split(strings.TrimSpace(stdout.String()), "\n")
}

// TSKeepDiscovery, in the environment of [TSOAuthRun], makes its provider
// keep what discovery found (discoveryState), as a provider must when
// the protected-resource metadata is at a custom location: when the
// client comes back with the code it then knows the authorization server
// without discovering it again, which it could do only through the
// WWW-Authenticate of a refusal.
const TSKeepDiscovery = "MCPTEST_TS_KEEP_DISCOVERY=1"
