package apicheck

import (
	"os/exec"
	"strings"
	"testing"
)

// formatDeps returns the packages that pkgs (relative to the module root)
// link and that exist only to write export formats: YAML and go-vcr.
func formatDeps(tb testing.TB, pkgs ...string) []string {
	tb.Helper()
	args := []string{"list", "-deps"}
	for _, p := range pkgs {
		args = append(args, "../../"+p)
	}
	out, err := exec.Command("go", args...).CombinedOutput()
	if err != nil {
		tb.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	var found []string
	for _, dep := range strings.Fields(string(out)) {
		for _, prefix := range []string{"gopkg.in/yaml.", "go.yaml.in/yaml", "gopkg.in/dnaeon/go-vcr"} {
			if strings.HasPrefix(dep, prefix) {
				found = append(found, dep)
			}
		}
	}
	return found
}

// TestLibrariesLinkNoExportFormat: a program that records, replays or
// tests with mcpvcr links no export format's dependencies (design.md §6:
// formats live above store, in view).
func TestLibrariesLinkNoExportFormat(t *testing.T) {
	if got := formatDeps(t, "recorder", "replayer", "mcpvcrtest"); len(got) > 0 {
		t.Errorf("go list -deps ./recorder ./replayer ./mcpvcrtest lists %s", strings.Join(got, ", "))
	}
}

// TestFormatDeps_Finds makes sure the check can fail: view, which writes
// go-vcr cassettes, links both YAML and go-vcr.
func TestFormatDeps_Finds(t *testing.T) {
	got := strings.Join(formatDeps(t, "view"), " ")
	for _, want := range []string{"yaml", "gopkg.in/dnaeon/go-vcr"} {
		if !strings.Contains(got, want) {
			t.Errorf("formatDeps(view) = %q; want it to list %s", got, want)
		}
	}
}
