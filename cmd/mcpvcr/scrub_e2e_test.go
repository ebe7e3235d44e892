package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
)

// Private data in the scrub test's traffic: each must be gone from the
// scrubbed copy.
const (
	scrubEmail    = "ann.smith@corp.example"
	scrubHome     = "/home/annsmith/project"
	scrubMacHome  = "/Users/annsmith/Library"
	scrubWinHome  = `C:\Users\annsmith\AppData`
	scrubToken    = "sk-Q7vTz2LmP9xRw4KdN8cB1yHs"
	scrubPassword = "pw-scrub-0001"
)

// scrubScript calls server-everything's echo with private data in its
// message (which the server echoes back) and a password argument.
func scrubScript(ctx context.Context, tb testing.TB, transport mcp.Transport) (string, error) {
	tb.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "mcpvcr-test", Version: "1.0.0"}, nil)
	cs, err := c.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: mcptest.V20251125})
	if err != nil {
		tb.Fatalf("connect: %v", err)
	}
	msg := "mail " + scrubEmail + " about " + scrubHome + "/a.txt, " + scrubMacHome + " and " + scrubWinHome + " with key " + scrubToken
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": msg, "password": scrubPassword}})
	out := ""
	if err != nil {
		out = "error: " + err.Error()
	} else {
		b, _ := json.Marshal(r)
		out = string(b)
	}
	return out, cs.Close()
}

// TestScrub records server-everything over stdio with --no-redact-json
// (so that the cassette holds everything as sent), scrubs it, and checks
// the copy: no e-mail address, home directory, token or password is left
// in its files or export, the report counts each kind, the copy is 0600,
// passes check, and replays to the same client with every frame matched.
// scrub refuses to write over its input or the input's -wal file.
func TestScrub(t *testing.T) {
	parallel(t)
	argv := mcptest.Everything(t)
	ctx := testCtx(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "c.db")
	rec := exec.Command(mcpvcrBin, append([]string{"record", "--cassette", db, "--no-redact-json", "--"}, argv...)...)
	live, _ := scrubScript(ctx, t, &mcp.CommandTransport{Command: rec, TerminateDuration: 200 * time.Millisecond})
	if !strings.Contains(live, scrubEmail) {
		t.Fatalf("the live server did not echo the message: %s", live)
	}
	if export := mcpvcr(t, "", "export", "--cassette", db).stdout; !strings.Contains(export, scrubEmail) || !strings.Contains(export, scrubPassword) {
		t.Fatalf("the recording lacks what this test scrubs:\n%s", export)
	}

	out := filepath.Join(dir, "shared.db")
	res := mcpvcr(t, "", "scrub", db, "-o", out)
	if res.code != 0 {
		t.Fatalf("scrub exited %d:\n%s%s", res.code, res.stdout, res.stderr)
	}
	for _, want := range []string{"json-member 1,", "email 2,", "home-path 6,", "token 2"} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("scrub reported %q; want it to count %s", res.stdout, want)
		}
	}
	private := []string{scrubEmail, "annsmith", scrubToken, scrubPassword}
	for _, p := range private {
		if strings.Contains(res.stdout+res.stderr, p) {
			t.Errorf("scrub's report names %q", p)
		}
	}
	if fi, err := os.Stat(out); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the scrubbed copy: %v, mode %v; want 0600", err, fi.Mode().Perm())
	}
	places := map[string]string{"export": mcpvcr(t, "", "export", "--cassette", out).stdout}
	files, _ := filepath.Glob(out + "*")
	for _, f := range files {
		b, _ := os.ReadFile(f)
		places[filepath.Base(f)] = string(b)
	}
	for place, content := range places {
		for _, p := range private {
			if strings.Contains(content, p) {
				t.Errorf("%s of the scrubbed copy holds %q", place, p)
			}
		}
	}
	if export := places["export"]; !regexp.MustCompile(`redacted-[0-9a-f]{12}@example\.invalid`).MatchString(export) ||
		!strings.Contains(export, "/home/user-") || !strings.Contains(export, `C:\\\\Users\\\\user-`) {
		t.Errorf("the scrubbed export lacks the placeholders:\n%s", export)
	}
	if res := mcpvcr(t, "", "check", out); res.code != 0 {
		t.Errorf("check of the scrubbed copy exited %d:\n%s%s", res.code, res.stdout, res.stderr)
	}

	var repErr syncBuffer
	rep := exec.Command(mcpvcrBin, "replay", "--stdio", "--cassette", out)
	rep.Stderr = &repErr
	replayed, err := scrubScript(ctx, t, &mcp.CommandTransport{Command: rep})
	if err != nil {
		t.Errorf("close replay session: %v", err)
	}
	if code := rep.ProcessState.ExitCode(); code != 0 || !strings.Contains(repErr.String(), " 0 unmatched") {
		t.Errorf("replay of the scrubbed copy exited %d; want 0 and no unmatched frames:\n%s", code, repErr.String())
	}
	if !strings.Contains(replayed, "@example.invalid") || strings.Contains(replayed, scrubEmail) {
		t.Errorf("replay of the scrubbed copy answered %s; want the recorded answer with placeholders", replayed)
	}

	// A .jsonl copy is text, scrubbed alike.
	jsonl := filepath.Join(dir, "shared.jsonl")
	if res := mcpvcr(t, "", "scrub", db, "-o", jsonl); res.code != 0 {
		t.Fatalf("scrub -o .jsonl exited %d:\n%s", res.code, res.stderr)
	}
	if b, _ := os.ReadFile(jsonl); !strings.HasPrefix(string(b), `{"type":"mcpvcr"`) || strings.Contains(string(b), scrubEmail) {
		t.Errorf("scrub -o shared.jsonl wrote:\n%s", b)
	}

	// Never over the input.
	before, _ := os.ReadFile(db)
	for _, target := range []string{db, db + "-wal", filepath.Join(dir, ".", "c.db")} {
		if res := mcpvcr(t, "", "scrub", db, "-o", target); res.code != 2 || !strings.Contains(res.stderr, "is the cassette scrub reads") {
			t.Errorf("scrub %s -o %s exited %d:\n%s; want 2, refused", db, target, res.code, res.stderr)
		}
	}
	if after, _ := os.ReadFile(db); string(after) != string(before) {
		t.Errorf("scrub changed its input")
	}
}

// TestScrub_Stateless scrubs the committed stateless 2026-07-28 recording
// (refusals of a foreign Origin and Host among its exchanges) and replays
// the checks against the copy: each gets the recorded answer, and the
// copy passes check.
func TestScrub_Stateless(t *testing.T) {
	parallel(t)
	b, err := os.ReadFile(statelessGolden)
	if err != nil {
		t.Fatal(err)
	}
	var live []statelessAnswer
	if err := json.Unmarshal(b, &live); err != nil {
		t.Fatal(err)
	}
	want := map[string]statelessAnswer{}
	for _, a := range live {
		want[a.Check] = a
	}
	out := filepath.Join(t.TempDir(), "shared.db")
	if res := mcpvcr(t, "", "scrub", statelessCassette, "-o", out); res.code != 0 {
		t.Fatalf("scrub exited %d:\n%s", res.code, res.stderr)
	}
	if res := mcpvcr(t, "", "check", out); res.code != 0 {
		t.Errorf("check of the scrubbed copy exited %d:\n%s%s", res.code, res.stdout, res.stderr)
	}
	rep := startServing(t, "replay", "--cassette", out, "--listen", "127.0.0.1:0")
	for _, c := range statelessChecks() {
		if got := c.do(t, rep.URL+"/mcp"); got != want[c.name] {
			t.Errorf("check %q on the scrubbed copy = %+v; want %+v", c.name, got, want[c.name])
		}
	}
	if code := rep.Stop(); code != 0 {
		t.Errorf("replay exited %d:\n%s", code, rep.stderr)
	}
}
