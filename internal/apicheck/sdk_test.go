package apicheck

import (
	"os/exec"
	"strings"
	"testing"
)

// TestBinaryLinksNoSDK: the mcpvcr binary does not link the MCP Go SDK;
// only mcpvcrtest and tests may import it (design.md §6).
func TestBinaryLinksNoSDK(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "../../cmd/mcpvcr").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps ./cmd/mcpvcr: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "github.com/modelcontextprotocol/go-sdk") || dep == "github.com/mcpvcr/mcpvcr/mcpvcrtest" {
			t.Errorf("cmd/mcpvcr links %s", dep)
		}
	}
}
