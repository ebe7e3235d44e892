package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
)

// TestExport_HARAndHTML: export --format har and --format html of a
// recorded Streamable HTTP session, and view, which writes the report
// and hands it to $BROWSER.
func TestExport_HARAndHTML(t *testing.T) {
	parallel(t)
	db := filepath.Join(t.TempDir(), "c.db")
	if res := mcpvcr(t, "", "import", filepath.Join("..", "..", "cassettes", "gosdk-http-2025-11-25.jsonl"), "--cassette", db); res.code != 0 {
		t.Fatalf("import exited %d: %s", res.code, res.stderr)
	}

	har := mcpvcr(t, "", "export", "1", "--cassette", db, "--format", "har")
	var doc struct {
		Log struct {
			Version string
			Entries []struct {
				Messages []json.RawMessage `json:"_eventSourceMessages"`
			}
		}
	}
	if err := json.Unmarshal([]byte(har.stdout), &doc); err != nil || har.code != 0 {
		t.Fatalf("export --format har exited %d (%s): %v", har.code, har.stderr, err)
	}
	if doc.Log.Version != "1.2" || len(doc.Log.Entries) != 28 || len(doc.Log.Entries[0].Messages) == 0 {
		t.Errorf("HAR version %q, %d entries; want 1.2 and one per exchange (28) with SSE events", doc.Log.Version, len(doc.Log.Entries))
	}

	out := filepath.Join(t.TempDir(), "report.html")
	if res := mcpvcr(t, "", "export", "1", "--cassette", db, "--format", "html", "-o", out); res.code != 0 {
		t.Fatalf("export --format html exited %d: %s", res.code, res.stderr)
	}
	page, err := os.ReadFile(out)
	if err != nil || !strings.HasPrefix(string(page), "<!doctype html>") || !strings.Contains(string(page), `"transport":"http"`) {
		t.Fatalf("report: %v\n%.300s", err, page)
	}

	// view hands the report to $BROWSER; here a script that writes its
	// argument into a FIFO, which the test reads once the detached script
	// runs.
	dir := t.TempDir()
	got := filepath.Join(dir, "opened")
	if err := syscall.Mkfifo(got, 0o600); err != nil {
		t.Fatal(err)
	}
	browser := filepath.Join(dir, "browser")
	if err := os.WriteFile(browser, []byte("#!/bin/sh\necho \"$1\" > "+got+" &\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(mcpvcrBin, "view", "1", "--cassette", db)
	cmd.Env = append(os.Environ(), "BROWSER="+browser)
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("view: %v", err)
	}
	path := strings.TrimSpace(strings.TrimPrefix(string(stdout), "opened "))
	t.Cleanup(func() { os.Remove(path) })
	if !strings.HasSuffix(path, ".html") {
		t.Fatalf("view printed %q", stdout)
	}
	viewed, err := os.ReadFile(path)
	if err != nil || string(viewed) != string(page) {
		t.Errorf("view wrote %s (%v), not the report export writes", path, err)
	}
	if b, _ := os.ReadFile(got); strings.TrimSpace(string(b)) != path {
		t.Errorf("$BROWSER got %q; want %q", b, path)
	}

	noOpen := mcpvcr(t, "", "view", "1", "--cassette", db, "--no-open")
	p := strings.TrimSpace(noOpen.stdout)
	if noOpen.code != 0 || p != path {
		t.Errorf("view --no-open exited %d, printed %q; want the same file as before, %s", noOpen.code, noOpen.stdout, path)
	}

	// An opener that fails (xdg-open exits 3 where no browser is set up):
	// view says so, names the file, and exits 3.
	failing := filepath.Join(dir, "failing-opener")
	if err := os.WriteFile(failing, []byte("#!/bin/sh\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	res := mcpvcrEnv(t, []string{"BROWSER=" + failing}, "view", "1", "--cassette", db)
	if res.code != 3 || strings.Contains(res.stdout, "opened") || strings.TrimSpace(res.stdout) != path ||
		!strings.Contains(res.stderr, "no browser opened it: "+failing+": exit status 3") || !strings.Contains(res.stderr, "try: open "+path+" in a browser") {
		t.Errorf("view with a failing opener exited %d\nstdout: %s\nstderr: %s\nwant exit 3, the path %s and the opener's failure", res.code, res.stdout, res.stderr, path)
	}
	if res := mcpvcr(t, "", "export", "1", "--cassette", db, "--format", "pdf"); res.code != 2 {
		t.Errorf("export --format pdf exited %d; want 2", res.code)
	}
}

// TestShow_FiltersAndJSON: show's filters and formats, and ls --format
// json, on a recorded Streamable HTTP session.
func TestShow_FiltersAndJSON(t *testing.T) {
	parallel(t)
	db := filepath.Join(t.TempDir(), "c.db")
	if res := mcpvcr(t, "", "import", filepath.Join("..", "..", "cassettes", "gosdk-http-2025-11-25.jsonl"), "--cassette", db); res.code != 0 {
		t.Fatalf("import exited %d: %s", res.code, res.stderr)
	}
	all := mcpvcr(t, "", "show", "1", "--cassette", db)
	if all.code != 0 || strings.Contains(all.stdout, "\x1b[") {
		t.Fatalf("show exited %d (piped output must have no colour):\n%s", all.code, all.stdout)
	}
	for _, want := range []string{"POST 200", "GET 200", "server-closed", "← #1 "} {
		if !strings.Contains(all.stdout, want) {
			t.Errorf("show lacks %q", want)
		}
	}
	calls := mcpvcr(t, "", "show", "1", "--cassette", db, "--method", "tools/call", "--dir", "s2c", "-v")
	lines := 0
	for _, l := range strings.Split(calls.stdout, "\n") {
		if strings.Contains(l, " < ") {
			lines++
			if !strings.Contains(l, "tools/call") {
				t.Errorf("--method tools/call --dir s2c kept %q", l)
			}
		}
		if strings.Contains(l, " > ") {
			t.Errorf("--dir s2c kept %q", l)
		}
	}
	if lines == 0 || !strings.Contains(calls.stdout, `        "jsonrpc": "2.0",`) {
		t.Errorf("show --method tools/call --dir s2c -v:\n%s", calls.stdout)
	}
	var tl struct {
		Frames []struct{ Seq int64 }
	}
	js := mcpvcr(t, "", "show", "1", "--cassette", db, "--format", "json")
	if err := json.Unmarshal([]byte(js.stdout), &tl); err != nil || len(tl.Frames) != 81 {
		t.Errorf("show --format json: %v, %d frames; want 81", err, len(tl.Frames))
	}
	var ss []struct{ ID int64 }
	ls := mcpvcr(t, "", "ls", "--cassette", db, "--format", "json")
	if err := json.Unmarshal([]byte(ls.stdout), &ss); err != nil || len(ss) != 1 || ss[0].ID != 1 {
		t.Errorf("ls --format json = %s (%v)", ls.stdout, err)
	}
	if res := mcpvcr(t, "", "show", "1", "--cassette", db, "--dir", "up"); res.code != 2 {
		t.Errorf("show --dir up exited %d; want 2", res.code)
	}
}

// TestDiffAndVerify_HTML: diff and verify with --format html write one
// page holding both sessions and the differences, and exit 1 as with
// any format when answers differ.
func TestDiffAndVerify_HTML(t *testing.T) {
	parallel(t)
	ctx := testCtx(t)
	server := mcptest.BuildServer(t)
	db := filepath.Join(t.TempDir(), "c.db")
	recordGoSDK(ctx, t, db, mcptest.V20250618)
	recordGoSDK(ctx, t, db, mcptest.V20250618, "-variant", "v2")
	for _, tt := range []struct {
		name string
		args []string
		ids  []string
	}{
		{"Diff", []string{"diff", "1", "2"}, []string{`"id":1,`, `"id":2,`}},
		{"Verify", []string{"verify", "1", "--", server, "-variant", "v2"}, []string{`"id":1,`, `"id":3,`}}, // the run is session 3
	} {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{tt.args[0], "--cassette", db, "--format", "html"}, tt.args[1:]...)
			res := mcpvcr(t, "", args...)
			if res.code != exitDiffer {
				t.Fatalf("%s exited %d; want %d: %s", strings.Join(args, " "), res.code, exitDiffer, res.stderr)
			}
			page := res.stdout
			if !strings.HasPrefix(page, "<!doctype html>") || !strings.Contains(page, `"diffs":[{"old":{"id":1`) ||
				!strings.Contains(page, `result.structuredContent.version`) {
				t.Errorf("page lacks the differences:\n%.400s", page)
			}
			sessions := page[strings.Index(page, `"sessions":[`):]
			for _, id := range tt.ids {
				if !strings.Contains(sessions, `{`+id+`"`) {
					t.Errorf("page lacks session %s", id)
				}
			}
			if got := strings.Count(page, `"streams":[`); got != 2 {
				t.Errorf("page holds %d sessions; want 2", got)
			}
		})
	}
}

// TestDiff_Output: diff and verify take -o as export does: the report goes to the
// file (0600), and never over the cassette.
func TestDiff_Output(t *testing.T) {
	parallel(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "c.db")
	if res := mcpvcr(t, "", "import", filepath.Join("..", "..", "cassettes", "multi-gosdk-http-json.jsonl"), "--cassette", db); res.code != 0 {
		t.Fatalf("import: %s", res.stderr)
	}
	out := filepath.Join(dir, "d.html")
	res := mcpvcr(t, "", "diff", "1", "2", "--cassette", db, "--format", "html", "-o", out)
	page, err := os.ReadFile(out)
	if res.code == exitUsage || res.stdout != "" || err != nil || !strings.HasPrefix(string(page), "<!doctype html>") {
		t.Fatalf("diff --format html -o: exit %d, stdout %q, %v\n%s", res.code, res.stdout, err, res.stderr)
	}
	if fi, _ := os.Stat(out); fi.Mode().Perm() != 0o600 {
		t.Errorf("diff -o wrote %s %v; want 0600", out, fi.Mode())
	}
	before, _ := os.ReadFile(db)
	if res := mcpvcr(t, "", "diff", "1", "2", "--cassette", db, "-o", db); res.code != exitUsage || !strings.Contains(res.stderr, "would overwrite the cassette") {
		t.Errorf("diff -o onto the cassette: exit %d\n%s", res.code, res.stderr)
	}
	// verify refuses it before it sends anything (nothing listens there).
	if res := mcpvcr(t, "", "verify", "1", "--cassette", db, "--upstream", "http://127.0.0.1:1/mcp", "-o", db); res.code != exitUsage || !strings.Contains(res.stderr, "would overwrite the cassette") {
		t.Errorf("verify -o onto the cassette: exit %d\n%s", res.code, res.stderr)
	}
	if after, _ := os.ReadFile(db); string(after) != string(before) {
		t.Error("diff or verify -o onto the cassette changed it")
	}
}
