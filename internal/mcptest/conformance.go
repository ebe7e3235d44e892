package mcptest

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// ConformanceClientPackage is the Go SDK's conformance client: for its
// OAuth scenarios it registers dynamically and fetches the authorization
// URL without following redirects, reading the code from the Location.
const ConformanceClientPackage = "github.com/modelcontextprotocol/go-sdk/conformance/everything-client"

// ConformanceClient builds the Go SDK's conformance client into a
// temporary directory and returns its path. It is run as
// `everything-client SERVER_URL` with MCP_CONFORMANCE_SCENARIO naming the
// scenario; its OAuth scenarios list the tools and call "test-tool".
func ConformanceClient(tb testing.TB) string {
	tb.Helper()
	bin := filepath.Join(tb.TempDir(), "everything-client")
	root, err := repoRoot()
	if err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command("go", "build", "-o", bin, ConformanceClientPackage)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("build %s: %v\n%s", ConformanceClientPackage, err, out)
	}
	return bin
}
