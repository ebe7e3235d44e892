package main

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// readmeShellLines returns the lines of the sh code blocks of the README
// and of every page in docs/, in that order.
func readmeShellLines(tb testing.TB) []string {
	tb.Helper()
	pages, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil {
		tb.Fatal(err)
	}
	var text strings.Builder
	for _, p := range append([]string{filepath.Join("..", "..", "README.md")}, pages...) {
		b, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		text.Write(b)
		text.WriteString("\n")
	}
	var lines []string
	in := false
	for _, l := range strings.Split(text.String(), "\n") {
		switch {
		case strings.HasPrefix(l, "```sh"):
			in = true
		case strings.HasPrefix(l, "```"):
			in = false
		case in:
			lines = append(lines, l)
		}
	}
	return lines
}

// TestREADME_OfflineExamples runs every README example of a command that
// reads or writes cassettes without a live peer (ls, show, export,
// import, check, scrub, diff), in the README's order, on a cassette of
// recorded sessions named as the README names it: each must run as
// written and exit as the README says.
func TestREADME_OfflineExamples(t *testing.T) {
	parallel(t)
	dir := t.TempDir()
	src, err := filepath.Abs(filepath.Join("..", "..", "cassettes", "multi-gosdk-http-sse.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	// Sessions 9 and 10 run tasks (revision 2025-11-25): the examples of
	// show --task name session 9.
	tasks, err := filepath.Abs(filepath.Join("..", "..", "view", "testdata", "tasks", "everything-stdio.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"bug.db", "release.db", "mcpvcr.db"} {
		for _, in := range []string{src, tasks} {
			if r := mcpvcr(t, "", "import", in, "--cassette", filepath.Join(dir, name)); r.code != 0 {
				t.Fatalf("import %s: %d\n%s", in, r.code, r.stderr)
			}
		}
	}
	offline := map[string]bool{"ls": true, "show": true, "export": true, "import": true, "check": true, "scrub": true, "diff": true}
	ran := 0
	for _, line := range readmeShellLines(t) {
		if i := strings.Index(line, " #"); i >= 0 {
			line = line[:i]
		}
		// What follows a pipe or a redirection is the shell's.
		if i := strings.IndexAny(line, "|>"); i >= 0 {
			line = line[:i]
		}
		words := strings.Fields(line)
		if len(words) < 2 || words[0] != "mcpvcr" || !offline[words[1]] {
			continue
		}
		if strings.ContainsAny(line, `"'$`) {
			t.Errorf("README example %q: quoting or variables; this test splits on spaces only", line)
			continue
		}
		ran++
		cmd := exec.Command(mcpvcrBin, words[1:]...)
		cmd.Dir = dir
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		code := 0
		if err := cmd.Run(); err != nil {
			ee, ok := err.(*exec.ExitError)
			if !ok {
				t.Fatal(err)
			}
			code = ee.ExitCode()
		}
		// diff exits 1 when the sessions differ, as its exit codes say.
		if code != 0 && !(words[1] == "diff" && code == 1) {
			t.Errorf("README example %q exited %d:\n%s%s", line, code, out.String(), errb.String())
			continue
		}
		for i, w := range words {
			if w == "-o" && i+1 < len(words) {
				if fi, err := os.Stat(filepath.Join(dir, words[i+1])); err != nil || fi.Size() == 0 {
					t.Errorf("README example %q: no output file %s (%v)", line, words[i+1], err)
				}
			}
		}
		if out.Len() == 0 && !slices.Contains(words, "-o") {
			t.Errorf("README example %q printed nothing:\n%s", line, errb.String())
		}
	}
	if ran < 10 {
		t.Errorf("ran %d README examples; the README has more: is the parsing broken?", ran)
	}
}

// TestREADME_QuickStartHTTP runs the README's HTTP quick start against a
// live Go SDK server and checks that record and replay print the lines
// the README shows (its "…" standing for anything, its ports for any).
func TestREADME_QuickStartHTTP(t *testing.T) {
	parallel(t)
	lines := readmeShellLines(t)
	said := map[string]string{} // subcommand -> the README's "# mcpvcr: …" line after it
	for i, l := range lines {
		if i+1 < len(lines) && strings.HasPrefix(lines[i+1], "# mcpvcr: ") {
			if f := strings.Fields(l); len(f) > 1 && f[0] == "mcpvcr" {
				said[f[1]] = strings.TrimPrefix(lines[i+1], "# ")
			}
		}
	}
	if said["record"] == "" || said["replay"] == "" {
		t.Fatalf("the README's HTTP quick start no longer shows what record and replay print: %q", said)
	}
	want := func(readme string) *regexp.Regexp {
		q := regexp.QuoteMeta(readme)
		q = strings.ReplaceAll(q, "…", ".*")
		q = regexp.MustCompile(`127\\\.0\\\.0\\\.1:[0-9]+`).ReplaceAllString(q, `127\.0\.0\.1:[0-9]+`)
		return regexp.MustCompile("^" + q + "$")
	}
	dir := t.TempDir()
	base := cliUpstream(t, nil, nil)
	first := func(args ...string) (string, *exec.Cmd) {
		t.Helper()
		cmd := exec.Command(mcpvcrBin, args...)
		cmd.Dir = dir
		pr, pw := io.Pipe()
		cmd.Stderr = pw
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		line := make(chan string, 1)
		go func() {
			sc := bufio.NewScanner(pr)
			if sc.Scan() {
				line <- sc.Text()
			}
			close(line)
			io.Copy(io.Discard, pr)
		}()
		select {
		case l := <-line:
			return l, cmd
		case <-time.After(30 * time.Second):
			t.Fatalf("mcpvcr %v printed nothing", args)
			return "", nil
		}
	}
	rec, cmd := first("record", "--upstream", base+"/mcp", "--listen", "127.0.0.1:0", "--cassette", "http.db")
	if !want(said["record"]).MatchString(rec) {
		t.Errorf("record printed\n\t%s\nthe README says\n\t%s", rec, said["record"])
	}
	// A session to replay.
	if r := mcpvcr(t, "", "import", filepath.Join("..", "..", "cassettes", "gosdk-http-2025-11-25.jsonl"), "--cassette", filepath.Join(dir, "replay.db")); r.code != 0 {
		t.Fatalf("import: %s", r.stderr)
	}
	_ = cmd.Process.Signal(os.Interrupt)
	rep, _ := first("replay", "--listen", "127.0.0.1:0", "--cassette", "replay.db")
	if !want(said["replay"]).MatchString(rep) {
		t.Errorf("replay printed\n\t%s\nthe README says\n\t%s", rep, said["replay"])
	}
}
