package mcpvcrtest_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestFreshModule is the check a user's module makes: in a new module
// outside this repository (go mod init, a replace directive pointing here),
// tests that use only the documented API replay committed cassettes to
// the Go SDK client over NewServer, Transport and Command with identical
// results; a session exported with mcpvcr export --format go-vcr replays
// through go-vcr v4's recorder and one exported with --format go-vcr-v2
// through go-vcr v2's; Proxy records a live Go SDK server in each mode,
// one cassette per case of a table test (replayed by a second go test
// with MCPVCR_MODE=replay-only, the server never called), and with each
// hook. The Go code of the README and the package doc's complete test
// are built there too. It needs only the
// module cache (it runs go with the environment's GOFLAGS and GOPROXY,
// and never asks the proxy for this module) and takes seconds once the
// build cache is warm; -short skips it.
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
	for _, f := range []string{"fresh_test.go", "record_test.go"} {
		mustCopy(t, filepath.Join("testdata", "freshmodule", f), filepath.Join(dir, f))
	}
	snippets := goSnippets(t)
	for i, code := range snippets {
		mustWrite(t, filepath.Join(dir, "snippets", fmt.Sprint(i+1), "snippet_test.go"), code)
	}
	for _, c := range []string{"multi-gosdk-http-json.jsonl", "multi-gosdk-stdio.jsonl"} {
		mustCopy(t, filepath.Join(repo, "cassettes", c), filepath.Join(dir, "testdata", c))
	}
	// The repository's go.sum holds the checksums of what the module
	// cache has; go adds the rest from the cache (GOFLAGS=-mod=mod).
	mustCopy(t, filepath.Join(repo, "go.sum"), filepath.Join(dir, "go.sum"))

	gocmd := func(args ...string) string {
		t.Helper()
		return goIn(t, goBin, dir, "", args...)
	}
	gocmd("mod", "init", "example.com/fresh")
	gocmd("mod", "edit", "-require", "github.com/mcpvcr/mcpvcr@v0.0.0", "-replace", "github.com/mcpvcr/mcpvcr="+repo)
	gocmd("mod", "tidy")
	// The go-vcr cassettes, made with the CLI as a user makes them.
	for _, f := range []struct{ format, out string }{{"go-vcr", "testdata/session4.yaml"}, {"go-vcr-v2", "testdata/session4-v2.yaml"}} {
		gocmd("run", "-mod=mod", "github.com/mcpvcr/mcpvcr/cmd/mcpvcr", "export", "4", "--cassette", "testdata/multi-gosdk-http-json.jsonl",
			"--format", f.format, "-o", f.out)
	}
	out := gocmd("test", "-count=1", "-v", ".")
	t.Logf("go test in the fresh module:\n%s", out)
	for _, test := range []string{"TestReplay", "TestModes", "TestPerCase", "TestHooks"} {
		if !strings.Contains(out, "--- PASS: "+test+" ") {
			t.Errorf("the fresh module's %s did not pass:\n%s", test, out)
		}
	}
	// The per-case cassettes replay in CI's mode, with no server call.
	out = goIn(t, goBin, dir, "replay-only", "test", "-count=1", "-v", "-run", "TestPerCase", ".")
	if !strings.Contains(out, "--- PASS: TestPerCase ") {
		t.Errorf("TestPerCase with MCPVCR_MODE=replay-only did not pass:\n%s", out)
	}
	// The Go code of the README, docs/ and the package doc compiles (go vet builds the
	// tests; they need cassettes of their own to run).
	if len(snippets) < 4 {
		t.Errorf("found %d Go snippets in the README, docs/ and the package doc; want at least 4", len(snippets))
	}
	gocmd("vet", "./snippets/...")
}

// goIn runs go in dir with MCPVCR_MODE=mode and returns its output; it
// fails t if go fails.
func goIn(t *testing.T, goBin, dir, mode string, args ...string) string {
	t.Helper()
	cmd := exec.Command(goBin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "MCPVCR_MODE="+mode)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out.String())
	}
	return out.String()
}

// snippetHeader makes a README Go block that is only a test function a
// file: the package and the imports such a block uses.
const snippetHeader = `package snippet_test

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/mcpvcrtest"
)

`

// goSnippets returns the Go code blocks of the README and of every page
// in docs/ (one that starts with func gets snippetHeader) and the
// complete test in the package doc (doc.go).
func goSnippets(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join("..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	var all strings.Builder
	for _, p := range append([]string{filepath.Join("..", "README.md")}, pages...) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		all.Write(b)
		all.WriteString("\n")
	}
	if !strings.Contains(all.String(), "\n# In Go tests\n") {
		t.Fatal(`docs/ has no "# In Go tests" page`)
	}
	section := all.String()
	var out []string
	for {
		var code string
		_, rest, ok := strings.Cut(section, "\n```go\n")
		if !ok {
			break
		}
		code, section, _ = strings.Cut(rest, "\n```\n")
		if strings.HasPrefix(code, "func ") {
			code = snippetHeader + code
		}
		out = append(out, code+"\n")
	}
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for line := range strings.Lines(string(doc)) {
		switch {
		case strings.HasPrefix(line, "//\tpackage "), b.Len() > 0 && strings.HasPrefix(line, "//\t"):
			b.WriteString(strings.TrimPrefix(line, "//\t"))
		case b.Len() > 0 && strings.TrimSpace(line) == "//":
			b.WriteString("\n")
		case b.Len() > 0:
			out = append(out, b.String())
			b.Reset()
		}
	}
	return out
}

func mustWrite(t *testing.T, name, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
		t.Fatal(err)
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
