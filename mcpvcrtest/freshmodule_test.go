package mcpvcrtest_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestFreshModule is the check a user's module makes: in a new module
// outside this repository (go mod init, a replace directive pointing here),
// a test that uses only the documented API replays committed cassettes to
// the Go SDK client over NewServer, Transport and Command with identical
// results, and a session exported with mcpvcr export --format go-vcr
// replays through go-vcr's recorder. It needs only the module cache (it
// runs go with the environment's GOFLAGS and GOPROXY, and never asks the
// proxy for this module) and takes seconds once the build cache is warm;
// -short skips it.
func TestFreshModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module: skipped with -short")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("go not on PATH: %v", err)
	}
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	mustCopy(t, filepath.Join("testdata", "freshmodule", "fresh_test.go"), filepath.Join(dir, "fresh_test.go"))
	for _, c := range []string{"multi-gosdk-http-json.jsonl", "multi-gosdk-stdio.jsonl"} {
		mustCopy(t, filepath.Join(repo, "cassettes", c), filepath.Join(dir, "testdata", c))
	}
	// The repository's go.sum holds the checksums of what the module
	// cache has; go adds the rest from the cache (GOFLAGS=-mod=mod).
	mustCopy(t, filepath.Join(repo, "go.sum"), filepath.Join(dir, "go.sum"))

	gocmd := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(goBin, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off", "MCPVCR_MODE=")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out.String())
		}
		return out.String()
	}
	gocmd("mod", "init", "example.com/fresh")
	gocmd("mod", "edit", "-require", "github.com/mcpvcr/mcpvcr@v0.0.0", "-replace", "github.com/mcpvcr/mcpvcr="+repo)
	gocmd("mod", "tidy")
	// The go-vcr cassette, made with the CLI as a user makes it.
	gocmd("run", "-mod=mod", "github.com/mcpvcr/mcpvcr/cmd/mcpvcr", "export", "4", "--cassette", "testdata/multi-gosdk-http-json.jsonl",
		"--format", "go-vcr", "-o", "testdata/session4.yaml")
	out := gocmd("test", "-count=1", "-v", "-run", "TestReplay", ".")
	t.Logf("go test in the fresh module:\n%s", out)
	if !strings.Contains(out, "--- PASS: TestReplay") {
		t.Errorf("the fresh module's test did not pass:\n%s", out)
	}
}

func mustCopy(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
