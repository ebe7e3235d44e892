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

// chaosDeps returns the packages of chaos replay that pkgs (relative to
// the module root) link.
func chaosDeps(tb testing.TB, pkgs ...string) []string {
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
		if dep == "github.com/mcpvcr/mcpvcr/chaos" || strings.HasPrefix(dep, "github.com/mcpvcr/mcpvcr/chaos/") {
			found = append(found, dep)
		}
	}
	return found
}

// TestReplayerLinksNoChaos: replay is a core with one hook; chaos is a
// package on that hook that replayer never imports, directly or not
// (issue 49: cmd and mcpvcrtest plug it in).
func TestReplayerLinksNoChaos(t *testing.T) {
	if got := chaosDeps(t, "replayer"); len(got) > 0 {
		t.Errorf("go list -deps ./replayer lists %s", strings.Join(got, ", "))
	}
}

// TestChaosDeps_Finds makes sure the check can fail: mcpvcrtest, which
// plugs chaos into its replays, links it.
func TestChaosDeps_Finds(t *testing.T) {
	if got := chaosDeps(t, "mcpvcrtest"); len(got) == 0 {
		t.Error("chaosDeps(mcpvcrtest) found nothing; want github.com/mcpvcr/mcpvcr/chaos")
	}
}
