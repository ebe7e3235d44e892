package main

import (
	"encoding/json"
	"encoding/xml"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/diff"
	"github.com/mcpvcr/mcpvcr/internal/mcptest"
)

// TestVerify_WriteGuard records calls of a read-only tool (info) and a
// destructive one (forget) over HTTP, then verifies with the write guard
// on (--read-only: the test server is on loopback, where the guard is off
// by default): forget is skipped, info is compared, and the skip is its
// own line that changes the exit code only with --fail-on-skip.
func TestVerify_WriteGuard(t *testing.T) {
	parallel(t)
	ctx := testCtx(t)
	db := filepath.Join(t.TempDir(), "c.db")
	server := []string{"-transport", "http", "-annotated"}
	rec := startServing(t, "record", "--cassette", db, "--upstream", mcptest.StartServer(t, server...), "--listen", "127.0.0.1:0")
	cs, err := mcptest.NewClient().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: rec.URL}, nil)
	if err != nil {
		t.Fatalf("connect through mcpvcr record: %v", err)
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"info", "forget"} {
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{}}); err != nil {
			t.Fatalf("tools/call %s: %v", name, err)
		}
	}
	if err := cs.Close(); err != nil {
		t.Fatal(err)
	}
	if code := rec.Stop(); code != 0 {
		t.Fatalf("mcpvcr record exited %d:\n%s", code, rec.stderr)
	}
	live := mcptest.StartServer(t, server...)
	statuses := func(r *diff.Report) map[string]diff.Status {
		out := map[string]diff.Status{}
		for _, rd := range r.Requests {
			if rd.Method == "tools/call" {
				out[rd.Name] = rd.Status
			}
		}
		return out
	}
	for _, tt := range []struct {
		name  string
		flags []string
		code  int
		want  map[string]diff.Status
	}{
		{"Loopback", nil, exitOK, map[string]diff.Status{"info": diff.StatusSame, "forget": diff.StatusSame}},
		{"ReadOnly", []string{"--read-only"}, exitOK, map[string]diff.Status{"info": diff.StatusSame, "forget": diff.StatusSkipped}},
		{"FailOnSkip", []string{"--read-only", "--fail-on-skip"}, exitDiffer, map[string]diff.Status{"info": diff.StatusSame, "forget": diff.StatusSkipped}},
		{"AllowTool", []string{"--read-only", "--allow-writes=forget"}, exitOK, map[string]diff.Status{"info": diff.StatusSame, "forget": diff.StatusSame}},
		{"AllowAll", []string{"--read-only", "--allow-writes"}, exitOK, map[string]diff.Status{"info": diff.StatusSame, "forget": diff.StatusSame}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"verify", "1", "--cassette", db, "--upstream", live}, tt.flags...)
			res := mcpvcr(t, "", append(args, "--format", "json")...)
			if res.code != tt.code {
				t.Fatalf("mcpvcr %s = exit %d; want %d\n%s\n%s", strings.Join(args, " "), res.code, tt.code, res.stdout, res.stderr)
			}
			var r jsonReport
			if err := json.Unmarshal([]byte(res.stdout), &r); err != nil || len(r.Reports) != 1 {
				t.Fatalf("decode the JSON report: %v\n%s", err, res.stdout)
			}
			if diff := cmp.Diff(tt.want, statuses(r.Reports[0])); diff != "" {
				t.Errorf("tools/call statuses (-want +got):\n%s", diff)
			}
			if r.Differ {
				t.Errorf("report differs:\n%s", res.stdout)
			}
		})
	}
	text := mcpvcr(t, "", "verify", "1", "--cassette", db, "--upstream", live, "--read-only")
	for _, want := range []string{"tools/call forget (seq", "skipped: not sent: tool forget may write (the live tools/list marks it destructiveHint: true)", "skipped 1 tool call that may write"} {
		if !strings.Contains(text.stdout, want) {
			t.Errorf("text report lacks %q:\n%s", want, text.stdout)
		}
	}

	// JUnit: the skipped call is a skipped test case.
	junit := mcpvcr(t, "", "verify", "1", "--cassette", db, "--upstream", live, "--read-only", "--format", "junit")
	var doc struct {
		Suites []struct {
			Skipped int `xml:"skipped,attr"`
			Cases   []struct {
				Name    string    `xml:"name,attr"`
				Skipped *struct{} `xml:"skipped"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal([]byte(junit.stdout), &doc); err != nil || len(doc.Suites) != 1 {
		t.Fatalf("parse the JUnit report: %v\n%s", err, junit.stdout)
	}
	var skipped []string
	for _, c := range doc.Suites[0].Cases {
		if c.Skipped != nil {
			skipped = append(skipped, c.Name[:strings.Index(c.Name, " (")])
		}
	}
	if diff := cmp.Diff([]string{"tools/call forget"}, skipped); diff != "" || doc.Suites[0].Skipped != 1 {
		t.Errorf("JUnit skipped cases (-want +got), suite count %d:\n%s", doc.Suites[0].Skipped, diff)
	}
	// SARIF: one result, of kind notApplicable.
	sarif := mcpvcr(t, "", "verify", "1", "--cassette", db, "--upstream", live, "--read-only", "--format", "sarif")
	var log struct {
		Version string `json:"version"`
		Runs    []struct {
			Results []struct {
				RuleID string `json:"ruleId"`
				Kind   string `json:"kind"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(sarif.stdout), &log); err != nil || sarif.code != exitOK || log.Version != "2.1.0" || len(log.Runs) != 1 {
		t.Fatalf("verify --format sarif = exit %d, %v:\n%s", sarif.code, err, sarif.stdout)
	}
	if got := log.Runs[0].Results; len(got) != 1 || got[0].RuleID != "mcpvcr/skipped" || got[0].Kind != "notApplicable" {
		t.Errorf("SARIF results = %+v; want one mcpvcr/skipped, notApplicable", got)
	}
}
