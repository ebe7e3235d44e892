package mcptest

import "testing"

// InspectorPackage is the npm package of the MCP Inspector, pinned in the
// repository's package-lock.json; its CLI (mcp-inspector --cli) is the
// client most users try first.
const InspectorPackage = "@modelcontextprotocol/inspector"

// InspectorCLI returns the command line of the Inspector's CLI, to which
// a target (a URL or a server command) and its options are appended:
// node, its launcher and --cli. It skips tb, or fails it with
// MCPVCR_REQUIRE_PEERS=1, when node or the package is missing.
func InspectorCLI(tb testing.TB) []string {
	tb.Helper()
	node, entry := npmBin(tb, InspectorPackage, "mcp-inspector")
	return []string{node, entry, "--cli"}
}
