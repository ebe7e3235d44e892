package mcptest

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"testing"
)

// The reference TypeScript server, installed by npm ci from package.json.
const (
	// EverythingPackage is the npm package of the reference server.
	EverythingPackage = "@modelcontextprotocol/server-everything"
	// EverythingBin is the package's bin name.
	EverythingBin = "mcp-server-everything"
)

// Modes of [EverythingHTTP]: the package's transport arguments.
const (
	// StreamableHTTP serves Streamable HTTP on path /mcp.
	StreamableHTTP = "streamableHttp"
	// SSE serves the 2024-11-05 HTTP+SSE transport on path /sse (POSTs go
	// to /message).
	SSE = "sse"
)

// RequirePeersEnv names the environment variable that turns missing test
// peers from a skip into a failure.
const RequirePeersEnv = "MCPVCR_REQUIRE_PEERS"

// RequirePeers reports whether MCPVCR_REQUIRE_PEERS is "1": then a missing
// node or npm package fails the test instead of skipping it (CI sets it).
func RequirePeers() bool { return os.Getenv(RequirePeersEnv) == "1" }

// Everything returns the command line that runs the reference server
// @modelcontextprotocol/server-everything over stdio: node, the package's
// entry point in the repository's node_modules, and "stdio". It skips the
// test when node or the package is missing, or fails it if [RequirePeers].
func Everything(tb testing.TB) []string {
	tb.Helper()
	node, entry := everything(tb)
	return []string{node, entry, "stdio"}
}

// EverythingHTTP starts the reference server in mode ([StreamableHTTP] or
// [SSE]) on a port of its own, waits until it listens, and returns the URL
// a client connects to: http://127.0.0.1:PORT/mcp or
// http://127.0.0.1:PORT/sse. The process is stopped when the test ends. It
// skips or fails the test like [Everything].
func EverythingHTTP(tb testing.TB, mode string) string {
	tb.Helper()
	var path string
	switch mode {
	case StreamableHTTP:
		path = "/mcp"
	case SSE:
		path = "/sse"
	default:
		tb.Fatalf("EverythingHTTP: unknown mode %q (want %q or %q)", mode, StreamableHTTP, SSE)
	}
	node, entry := everything(tb)
	// The package listens on $PORT, and says it does even when the
	// listen failed (Express 5 calls its callback with the error): on a
	// port picked here, which another process may take first, its word
	// is worth nothing. So it gets port 0, and a preload reports the
	// port the kernel gave it once it really listens.
	report := filepath.Join(tb.TempDir(), "report-listen.cjs")
	if err := os.WriteFile(report, []byte(reportListen), 0o600); err != nil {
		tb.Fatalf("write %s: %v", report, err)
	}
	cmd := exec.Command(node, "--require", report, entry, mode)
	cmd.Env = append(os.Environ(), "PORT=0")
	m, err := startChild(tb, cmd, listeningLine)
	if err != nil {
		tb.Fatalf("start %s %s: %v", EverythingPackage, mode, err)
	}
	return fmt.Sprintf("http://127.0.0.1:%s%s", m[1], path)
}

// reportListen is a Node.js preload that writes a line matching
// listeningLine to stderr when a server of the process listens on TCP.
const reportListen = `const net = require("node:net");
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  this.once("listening", () => {
    const a = this.address();
    if (a && typeof a === "object") process.stderr.write("mcpvcr-test: listening on port " + a.port + "\n");
  });
  return listen.apply(this, args);
};
`

// listeningLine matches reportListen's line.
var listeningLine = regexp.MustCompile(`^mcpvcr-test: listening on port (\d+)$`)

// everything finds node and the package's entry point, or skips or fails tb.
func everything(tb testing.TB) (node, entry string) {
	tb.Helper()
	return npmBin(tb, EverythingPackage, EverythingBin)
}

// npmBin finds node and the entry point of bin of the npm package pkg
// installed at the repository root, or skips or (with
// MCPVCR_REQUIRE_PEERS=1) fails tb.
func npmBin(tb testing.TB, pkgName, binName string) (node, entry string) {
	tb.Helper()
	missing := func(format string, args ...any) {
		tb.Helper()
		msg := fmt.Sprintf(format, args...)
		if RequirePeers() {
			tb.Fatalf("%s; %s=1 requires test peers: install Node.js 20 or later and run npm ci at the repository root", msg, RequirePeersEnv)
		}
		tb.Skipf("%s; to run this test, install Node.js 20 or later and run npm ci at the repository root", msg)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node not found: %v", err)
	}
	root, err := repoRoot()
	if err != nil {
		missing("%v", err)
	}
	dir := filepath.Join(root, "node_modules", filepath.FromSlash(pkgName))
	b, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		missing("%s not installed: %v", pkgName, err)
	}
	var pkg struct {
		Bin map[string]string `json:"bin"`
	}
	if err := json.Unmarshal(b, &pkg); err != nil {
		tb.Fatalf("read %s package.json: %v", pkgName, err)
	}
	bin, ok := pkg.Bin[binName]
	if !ok {
		tb.Fatalf("%s package.json has no bin %q", pkgName, binName)
	}
	return node, filepath.Join(dir, filepath.FromSlash(bin))
}

// repoRoot returns the directory holding go.mod, searched upwards from this
// package's source directory and then from the working directory.
func repoRoot() (string, error) {
	var starts []string
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		starts = append(starts, filepath.Dir(file))
	}
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	for _, dir := range starts {
		for {
			if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
				return dir, nil
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	return "", errors.New("repository root (the directory with go.mod) not found")
}
