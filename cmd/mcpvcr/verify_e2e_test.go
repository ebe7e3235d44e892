package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/diff"
	"github.com/mcpvcr/mcpvcr/internal/mcptest"
)

// recordScript records one stdio session of server (a command line) into
// db through mcpvcr record, driven by the Go SDK client running script.
func recordScript(ctx context.Context, tb testing.TB, db, version string, client *mcp.Client, script func(context.Context, *mcp.ClientSession) error, server ...string) {
	tb.Helper()
	var stderr bytes.Buffer
	rec := exec.Command(mcpvcrBin, append([]string{"record", "--cassette", db, "--"}, server...)...)
	rec.Stderr = &stderr
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: rec}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		tb.Fatalf("connect to mcpvcr record: %v\n%s", err, stderr.String())
	}
	if err := script(ctx, cs); err != nil {
		cs.Close()
		tb.Fatalf("script: %v", err)
	}
	if err := cs.Close(); err != nil {
		tb.Fatalf("close: %v", err)
	}
	if code := rec.ProcessState.ExitCode(); code != 0 {
		tb.Fatalf("mcpvcr record exited %d:\n%s", code, stderr.String())
	}
}

// recordGoSDK records the mcptest script against the Go SDK test server
// with args, over stdio, at version.
func recordGoSDK(ctx context.Context, tb testing.TB, db, version string, args ...string) {
	tb.Helper()
	var stderr bytes.Buffer
	rec := exec.Command(mcpvcrBin, append([]string{"record", "--cassette", db, "--", mcptest.BuildServer(tb)}, args...)...)
	rec.Stderr = &stderr
	mcptest.Run(ctx, tb, &mcp.CommandTransport{Command: rec}, version)
	if code := rec.ProcessState.ExitCode(); code != 0 {
		tb.Fatalf("mcpvcr record exited %d:\n%s", code, stderr.String())
	}
}

// jsonReport is the --format json output.
type jsonReport struct {
	Differ  bool           `json:"differ"`
	Reports []*diff.Report `json:"reports"`
}

// verifyJSON runs mcpvcr with args plus --format json and decodes the
// report. It fails tb unless the exit code is want.
func verifyJSON(tb testing.TB, want int, args ...string) *diff.Report {
	tb.Helper()
	res := mcpvcr(tb, "", append([]string{args[0], "--format", "json"}, args[1:]...)...)
	if res.code != want {
		tb.Fatalf("mcpvcr %s = exit %d; want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), res.code, want, res.stdout, res.stderr)
	}
	var r jsonReport
	if err := json.Unmarshal([]byte(res.stdout), &r); err != nil {
		tb.Fatalf("mcpvcr %s: decode the JSON report: %v\n%s", strings.Join(args, " "), err, res.stdout)
	}
	if len(r.Reports) != 1 {
		tb.Fatalf("mcpvcr %s: %d reports; want 1", strings.Join(args, " "), len(r.Reports))
	}
	if r.Differ != (want == exitDiffer) {
		tb.Errorf("report differ = %v with exit code %d", r.Differ, want)
	}
	return r.Reports[0]
}

// found is one difference, as tests compare them.
type found struct {
	Request string // the request's label
	Status  diff.Status
	Path    string
	Kind    diff.ChangeKind
}

// differences flattens a report's differing requests and their changes.
func differences(r *diff.Report) []found {
	var out []found
	all := append([]diff.RequestDiff(nil), r.Requests...)
	if r.Server != nil {
		all = append(all, *r.Server)
	}
	for _, rd := range all {
		if !rd.Differs() {
			continue
		}
		if len(rd.Changes) == 0 {
			out = append(out, found{Request: rd.Label(), Status: rd.Status})
		}
		for _, c := range rd.Changes {
			out = append(out, found{Request: rd.Label(), Status: rd.Status, Path: c.Path, Kind: c.Kind})
		}
	}
	return out
}

// v2Changes are the differences between the Go SDK test server V1 and V2
// for the mcptest script at 2025-06-18 over stdio (seqs of that session).
// V2 changes tool add's input schema (an optional c), adds tool multiply
// and reports version 2.0.0 from tool info: exactly three differences.
var v2Changes = []found{
	{"tools/list (seq 4)", diff.StatusChanged, "result.tools[name=add].inputSchema.properties.c", diff.Added},
	{"tools/list (seq 4)", diff.StatusChanged, "result.tools[name=multiply]", diff.Added},
	{"tools/call info (seq 10)", diff.StatusChanged, "result.structuredContent.version", diff.Changed},
}

// TestVerify_GoSDKStdio records the Go SDK test server V1 over stdio with
// the mcptest client, then verifies the recording against V1 (no
// differences) and, 20 times, against V2 (exactly V2's changes: no noise
// leaks in).
func TestVerify_GoSDKStdio(t *testing.T) {
	parallel(t)
	ctx := testCtx(t)
	server := mcptest.BuildServer(t)
	db := filepath.Join(t.TempDir(), "c.db")
	recordGoSDK(ctx, t, db, mcptest.V20250618)

	same := verifyJSON(t, exitOK, "verify", "1", "--cassette", db, "--", server)
	if diff := cmp.Diff([]found(nil), differences(same)); diff != "" {
		t.Errorf("verify against V1 found differences (-want +got):\n%s", diff)
	}
	n, _, _ := same.Counts()
	if n < 19 {
		t.Errorf("verify against V1 compared %d requests; want the script's", n)
	}
	for i := range 20 {
		r := verifyJSON(t, exitDiffer, "verify", "1", "--cassette", db, "--", server, "-variant", "v2")
		if diff := cmp.Diff(v2Changes, differences(r)); diff != "" {
			t.Fatalf("run %d: verify against V2 (-want +got):\n%s", i+1, diff)
		}
		if _, differ, _ := r.Counts(); differ != 2 {
			t.Errorf("run %d: %d requests differ; want 2 (tools/list, tools/call info)", i+1, differ)
		}
	}

	text := mcpvcr(t, "", "verify", "1", "--cassette", db, "--", server, "-variant", "v2")
	for _, want := range []string{
		"tools/call info (seq 10): 1 change\n  changed  result.structuredContent.version\n             - \"1.0.0\"\n             + \"2.0.0\"\n",
		"  added    result.tools[name=multiply]\n",
		fmt.Sprintf("2 of %d requests differ: 2 changed (3 changes)\n", n),
	} {
		if !strings.Contains(text.stdout, want) {
			t.Errorf("verify text report lacks %q:\n%s", want, text.stdout)
		}
	}
	if text.code != exitDiffer {
		t.Errorf("verify against V2 = exit %d; want %d", text.code, exitDiffer)
	}
}

// TestVerify_Modern verifies a 2026-07-28 stdio recording, whose
// sampling, elicitation and roots travel as multi round-trip retries.
func TestVerify_Modern(t *testing.T) {
	parallel(t)
	ctx := testCtx(t)
	server := mcptest.BuildServer(t)
	db := filepath.Join(t.TempDir(), "c.db")
	recordGoSDK(ctx, t, db, mcptest.V20260728)
	verifyJSON(t, exitOK, "verify", "1", "--cassette", db, "--", server)
	r := verifyJSON(t, exitDiffer, "verify", "1", "--cassette", db, "--", server, "-variant", "v2")
	var got []string
	for _, f := range differences(r) {
		got = append(got, f.Request+" "+f.Path)
	}
	want := []string{
		"tools/list (seq 3) result.tools[name=add].inputSchema.properties.c",
		"tools/list (seq 3) result.tools[name=multiply]",
		"tools/call info (seq 9) result.structuredContent.version",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("verify 2026-07-28 against V2 (-want +got):\n%s", diff)
	}
}

// TestVerify_Crash verifies against a server that goes away after five
// client lines: what it answered is compared, the request it got no
// answer to and those never sent are listed, and verify exits 1.
func TestVerify_Crash(t *testing.T) {
	parallel(t)
	ctx := testCtx(t)
	server := mcptest.BuildServer(t)
	db := filepath.Join(t.TempDir(), "c.db")
	recordGoSDK(ctx, t, db, mcptest.V20250618)
	// The wrapper passes five lines (initialize … tools/call add) to the
	// server, and on the sixth (tools/call info) closes its stdin and exits
	// 2: the server has answered the five, never sees the sixth.
	wrapper := `i=0; while IFS= read -r l; do i=$((i+1)); [ $i -gt 5 ] && break; printf '%s\n' "$l"; done | "$0"; exit 2`
	r := verifyJSON(t, exitDiffer, "verify", "1", "--cassette", db, "--", "sh", "-c", wrapper, server)
	var unanswered []string
	for _, rd := range r.Requests {
		switch {
		case rd.Status == diff.StatusUnanswered:
			unanswered = append(unanswered, rd.Label()+": "+rd.Reason)
		case rd.Differs():
			t.Errorf("%s: %s; want it the same or unanswered", rd.Label(), rd.Status)
		}
	}
	want := []string{"tools/call info (seq 10): no answer: the server went away first"}
	all := verifyJSON(t, exitOK, "verify", "1", "--cassette", db, "--", server)
	for _, rd := range all.Requests {
		if rd.Seq > 10 {
			want = append(want, rd.Label()+": not sent: the server had gone away")
		}
	}
	if diff := cmp.Diff(want, unanswered); diff != "" {
		t.Errorf("unanswered requests (-want +got):\n%s", diff)
	}
	notes := strings.Join(r.Notes, "\n")
	for _, n := range []string{"the server went away during the run", "the server exited with code 2"} {
		if !strings.Contains(notes, n) {
			t.Errorf("notes %q lack %q", notes, n)
		}
	}
}

// TestVerify_CommandForHTTPCassette: a cassette of HTTP sessions verified
// with a server command says its sessions were recorded over HTTP and to
// give --upstream URL, with a single session named and with none.
func TestVerify_CommandForHTTPCassette(t *testing.T) {
	parallel(t)
	cassette := filepath.Join("..", "..", "cassettes", "multi-gosdk-http-sse.jsonl")
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"verify", "--cassette", cassette, "--", "true"},
			[]string{"the cassette holds no stdio sessions; its 8 were recorded over HTTP", "try: mcpvcr verify --upstream URL"}},
		{[]string{"verify", "1", "--cassette", cassette, "--", "true"},
			[]string{"session 1 was recorded over http: give the server's URL, not a command", "try: mcpvcr verify 1 --upstream URL"}},
	} {
		res := mcpvcr(t, "", tc.args...)
		if res.code != exitUsage {
			t.Errorf("mcpvcr %s exited %d; want %d\n%s", strings.Join(tc.args, " "), res.code, exitUsage, res.stderr)
		}
		for _, w := range tc.want {
			if !strings.Contains(res.stderr, w) {
				t.Errorf("mcpvcr %s says\n%s\nwant %q", strings.Join(tc.args, " "), res.stderr, w)
			}
		}
	}
}

// TestVerify_BadInput checks that verify explains what it cannot do.
func TestVerify_BadInput(t *testing.T) {
	parallel(t)
	ctx := testCtx(t)
	server := mcptest.BuildServer(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "c.db")
	recordGoSDK(ctx, t, db, mcptest.V20250618)
	// Session 2: a server that got no client frames at all.
	if res := mcpvcr(t, "", "record", "--cassette", db, "--", server); res.code != 0 {
		t.Fatalf("record an empty session = exit %d:\n%s", res.code, res.stderr)
	}
	tests := []struct {
		name string
		args []string
		code int
		msgs []string
	}{
		{"NoClientFrames", []string{"verify", "2", "--", server}, exitFailure,
			[]string{"session 2: the session holds no client requests to send", "try: verify a session in which a client spoke"}},
		{"DoesNotStart", []string{"verify", "1", "--", filepath.Join(dir, "no-such-server")}, exitFailure,
			[]string{"the server did not start", "no such file or directory", "try: check that the command after -- runs on its own"}},
		{"NeverAnswers", []string{"verify", "1", "--timeout", "1s", "--", "sleep", "60"}, exitFailure,
			[]string{"did not answer the first request within 1s (the server was still running; verify stopped it)"}},
		{"URLForStdioCassette", []string{"verify", "--upstream", "http://127.0.0.1:1/mcp"}, exitUsage,
			[]string{"the cassette holds no HTTP sessions; its 2 were recorded over stdio", "try: mcpvcr verify -- SERVER_COMMAND"}},
		{"ExitsAtOnce", []string{"verify", "1", "--", "sh", "-c", "echo cannot open config >&2; exit 4"}, exitFailure,
			[]string{"the server did not answer the first request", "exited with code 4", "cannot open config"}},
		{"OtherRevision", []string{"verify", "1", "--", server, "-versions", mcptest.V20250326}, exitFailure,
			[]string{"the server speaks protocol revision 2025-03-26, but the session was recorded at 2025-06-18",
				"try: run a server that speaks 2025-06-18"}},
		{"NoServer", []string{"verify", "1"}, exitUsage, []string{"verify needs the live server"}},
		{"UpstreamForStdio", []string{"verify", "1", "--upstream", "http://127.0.0.1:1/mcp"}, exitUsage,
			[]string{"session 1 was recorded over stdio"}},
		{"NoSuchSession", []string{"verify", "9", "--", server}, exitFailure, []string{"session 9", "not found"}},
		{"BadIgnore", []string{"verify", "1", "--ignore", "result[", "--", server}, exitUsage, []string{`bad path "result["`}},
		{"BadFormat", []string{"verify", "1", "--format", "xml", "--", server}, exitUsage, []string{`--format "xml"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := mcpvcr(t, "", append([]string{tt.args[0], "--cassette", db}, tt.args[1:]...)...)
			if res.code != tt.code {
				t.Errorf("mcpvcr %s = exit %d; want %d\nstderr:\n%s", strings.Join(tt.args, " "), res.code, tt.code, res.stderr)
			}
			for _, m := range tt.msgs {
				if !strings.Contains(res.stderr, m) {
					t.Errorf("stderr lacks %q:\n%s", m, res.stderr)
				}
			}
			if res.stdout != "" {
				t.Errorf("stdout = %q; want nothing when verify cannot run", res.stdout)
			}
		})
	}
	// Failed runs leave nothing behind: still the two recorded sessions.
	if ls := mcpvcr(t, "", "ls", "--cassette", db); strings.Count(ls.stdout, "\n") != 3 {
		t.Errorf("mcpvcr ls after failed verify runs:\n%s\nwant the header and sessions 1 and 2", ls.stdout)
	}
}

// TestVerify_Formats checks the JUnit report and --ignore.
func TestVerify_Formats(t *testing.T) {
	parallel(t)
	ctx := testCtx(t)
	server := mcptest.BuildServer(t)
	db := filepath.Join(t.TempDir(), "c.db")
	recordGoSDK(ctx, t, db, mcptest.V20250618)

	res := mcpvcr(t, "", "verify", "1", "--cassette", db, "--format", "junit", "--", server, "-variant", "v2")
	var doc struct {
		Suites []struct {
			Tests    int `xml:"tests,attr"`
			Failures int `xml:"failures,attr"`
			Cases    []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Message string `xml:"message,attr"`
					Body    string `xml:",chardata"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal([]byte(res.stdout), &doc); err != nil || len(doc.Suites) != 1 {
		t.Fatalf("JUnit report does not decode (%v):\n%s", err, res.stdout)
	}
	s := doc.Suites[0]
	n, _, _ := verifyJSON(t, exitOK, "verify", "1", "--cassette", db, "--", server).Counts()
	if s.Tests != n+1 || s.Failures != 2 || len(s.Cases) != n+1 {
		t.Errorf("JUnit suite: %d tests, %d failures, %d cases; want %d (the requests and the server's own traffic), 2, %[4]d", s.Tests, s.Failures, len(s.Cases), n+1)
	}
	for _, c := range s.Cases {
		if c.Name == "tools/call info (seq 10)" && (c.Failure == nil || !strings.Contains(c.Failure.Body, `+ "2.0.0"`)) {
			t.Errorf("JUnit case %q: failure %+v; want one carrying the diff", c.Name, c.Failure)
		}
	}

	r := verifyJSON(t, exitDiffer, "verify", "1", "--cassette", db,
		"--ignore", "tools/list:result.tools[*]",
		"--ignore", "tools/call add:**",
		"--", server, "-variant", "v2")
	want := []found{{"tools/call info (seq 10)", diff.StatusChanged, "result.structuredContent.version", diff.Changed}}
	if diff := cmp.Diff(want, differences(r)); diff != "" {
		t.Errorf("verify --ignore (-want +got):\n%s", diff)
	}
	verifyJSON(t, exitOK, "verify", "1", "--cassette", db, "--ignore", "tools/list:result.tools[*]",
		"--ignore", "tools/call add:**", "--ignore", "#10:result.structuredContent.version", "--", server, "-variant", "v2")
}

// TestVerify_Update accepts V2's answers as the expectation: verify then
// compares with them, so V2 passes and V1 shows the changes in reverse.
func TestVerify_Update(t *testing.T) {
	parallel(t)
	ctx := testCtx(t)
	server := mcptest.BuildServer(t)
	db := filepath.Join(t.TempDir(), "c.db")
	recordGoSDK(ctx, t, db, mcptest.V20250618)

	res := mcpvcr(t, "", "verify", "1", "--cassette", db, "--update", "--", server, "-variant", "v2")
	if res.code != exitOK || !strings.Contains(res.stderr, "session 2 is now the expectation in place of session 1") {
		t.Fatalf("verify --update = exit %d; want 0 and a note on the new expectation\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	r := verifyJSON(t, exitOK, "verify", "1", "--cassette", db, "--", server, "-variant", "v2")
	if r.Old.ID != 2 {
		t.Errorf("verify 1 after --update compared with session %d; want 2", r.Old.ID)
	}
	r = verifyJSON(t, exitDiffer, "verify", "--cassette", db, "--", server)
	if _, differ, _ := r.Counts(); differ != 2 {
		t.Errorf("verify (all sessions) against V1 after accepting V2: %d requests differ; want 2", differ)
	}
	// The accepted run replays like any recording.
	stderr := &syncBuffer{}
	rep := exec.Command(mcpvcrBin, "replay", "2", "--stdio", "--cassette", db)
	rep.Stderr = stderr
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("replay's stderr:\n%s", stderr)
		}
	})
	mcptest.Run(ctx, t, &mcp.CommandTransport{Command: rep}, mcptest.V20250618)
	if !strings.Contains(stderr.String(), " 0 unmatched") {
		t.Errorf("replay of the accepted run:\n%s", stderr.String())
	}
}

// TestDiff compares two recordings of the Go SDK server, V1 and V2,
// recorded by two client runs, and a recording with itself.
func TestDiff(t *testing.T) {
	parallel(t)
	ctx := testCtx(t)
	db := filepath.Join(t.TempDir(), "c.db")
	recordGoSDK(ctx, t, db, mcptest.V20250618)
	recordGoSDK(ctx, t, db, mcptest.V20250618, "-variant", "v2")
	r := verifyJSON(t, exitDiffer, "diff", "1", "2", "--cassette", db)
	if diff := cmp.Diff(v2Changes, differences(r)); diff != "" {
		t.Errorf("diff 1 2 (-want +got):\n%s", diff)
	}
	verifyJSON(t, exitOK, "diff", "1", "1", "--cassette", db)
	for _, tt := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"diff", "1"}, exitUsage, "diff takes two sessions"},
		{[]string{"diff", "1", "7"}, exitFailure, "session 7"},
	} {
		res := mcpvcr(t, "", append([]string{tt.args[0], "--cassette", db}, tt.args[1:]...)...)
		if res.code != tt.code || !strings.Contains(res.stderr, tt.msg) {
			t.Errorf("mcpvcr %s = exit %d, stderr %q; want exit %d and %q", strings.Join(tt.args, " "), res.code, res.stderr, tt.code, tt.msg)
		}
	}
}

// verifyEverythingScript drives @modelcontextprotocol/server-everything: a
// long operation with progress first, during which the server asks the
// client for its roots (350 ms after initialization), then tools,
// sampling, resources (one whose text holds the time of day) and prompts.
func verifyEverythingScript(ctx context.Context, cs *mcp.ClientSession) error {
	calls := []struct {
		name string
		args map[string]any
		meta mcp.Meta
	}{
		{"trigger-long-running-operation", map[string]any{"duration": 1.5, "steps": 3}, mcp.Meta{"progressToken": "long-1"}},
		{"echo", map[string]any{"message": "hello"}, nil},
		{"get-sum", map[string]any{"a": 2, "b": 3}, nil},
		{"get-tiny-image", map[string]any{}, nil},
		{"get-structured-content", map[string]any{"location": "New York"}, nil},
		{"trigger-sampling-request", map[string]any{"prompt": "Say hello.", "maxTokens": 16}, nil},
	}
	for _, c := range calls {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.name, Arguments: c.args, Meta: c.meta})
		if err != nil {
			return fmt.Errorf("tools/call %s: %w", c.name, err)
		}
		if res.IsError {
			return fmt.Errorf("tools/call %s: error result %v", c.name, res.Content)
		}
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		return err
	}
	if _, err := cs.ListResources(ctx, nil); err != nil {
		return err
	}
	if _, err := cs.ListResourceTemplates(ctx, nil); err != nil {
		return err
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "demo://resource/dynamic/text/1"}); err != nil {
		return err
	}
	if _, err := cs.ListPrompts(ctx, nil); err != nil {
		return err
	}
	_, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "simple-prompt"})
	return err
}

// TestVerify_Everything records the reference TypeScript server over
// stdio, then verify --learn runs it twice and stores what differs
// between the runs (the time of day in a dynamic resource), after which
// verify reports no differences.
func TestVerify_Everything(t *testing.T) {
	parallel(t)
	server := mcptest.Everything(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	db := filepath.Join(t.TempDir(), "c.db")
	recordScript(ctx, t, db, mcptest.V20250618, mcptest.NewClient(), verifyEverythingScript, server...)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("recording:\n%s", mcpvcr(t, "", "show", "1", "--cassette", db).stdout)
		}
	})

	// Without learning, the time of day differs. The run is kept, as
	// session 2, for diff below.
	r := verifyJSON(t, exitDiffer, append([]string{"verify", "1", "--keep", "--cassette", db, "--"}, server...)...)
	var got []string
	for _, f := range differences(r) {
		got = append(got, f.Path)
	}
	timeOfDay := "result.contents[uri=demo://resource/dynamic/text/1].text"
	if diff := cmp.Diff([]string{timeOfDay}, got); diff != "" {
		t.Errorf("verify before learning (-want +got):\n%s", diff)
	}

	// --learn alone shows what it would learn and stores nothing.
	dry := mcpvcr(t, "", append([]string{"verify", "1", "--cassette", db, "--learn", "--"}, server...)...)
	if dry.code != exitOK {
		t.Fatalf("verify --learn = exit %d\nstdout:\n%s\nstderr:\n%s", dry.code, dry.stdout, dry.stderr)
	}
	for _, want := range []string{"mcpvcr: noise: #", timeOfDay, "nothing stored: add --save"} {
		if !strings.Contains(dry.stderr, want) {
			t.Errorf("verify --learn stderr lacks %q:\n%s", want, dry.stderr)
		}
	}
	if export := mcpvcr(t, "", "export", "1", "--cassette", db); strings.Contains(export.stdout, `"mcpvcr.noise"`) {
		t.Errorf("verify --learn without --save stored a noise label")
	}
	learn := mcpvcr(t, "", append([]string{"verify", "1", "--cassette", db, "--learn", "--save", "--"}, server...)...)
	if learn.code != exitOK {
		t.Fatalf("verify --learn --save = exit %d\nstdout:\n%s\nstderr:\n%s", learn.code, learn.stdout, learn.stderr)
	}
	if !strings.Contains(learn.stderr, "mcpvcr: learned 1 noise path(s)") {
		t.Errorf("verify --learn stderr lacks what it learned:\n%s", learn.stderr)
	}
	r = verifyJSON(t, exitOK, append([]string{"verify", "1", "--cassette", db, "--"}, server...)...)
	if n, _, _ := r.Counts(); n != 13 {
		t.Errorf("verify compared %d requests; want 13 (initialize and the script's 12)", n)
	}
	if r.Server == nil || r.Server.Status != diff.StatusSame {
		t.Errorf("server traffic = %+v; want the roots/list request and notifications, the same", r.Server)
	}
	// The mask is stored with the session, so diff uses it too: the run
	// verified before learning (session 2) no longer differs.
	export := mcpvcr(t, "", "export", "1", "--cassette", db)
	if !strings.Contains(export.stdout, `"labels":{"mcpvcr.noise":"#`) || !strings.Contains(export.stdout, timeOfDay) {
		t.Errorf("session 1 has no %s label naming %s:\n%s", diff.NoiseLabel, timeOfDay, strings.SplitN(export.stdout, "\n", 3)[1])
	}
	verifyJSON(t, exitOK, "diff", "1", "2", "--cassette", db)
}

// TestVerify_GoSDKHTTP records the Go SDK test server over Streamable
// HTTP (SSE and JSON answers, resumable streams that the server closes
// mid-call, and the stateless 2026-07-28 shape) through mcpvcr record
// --upstream, then verifies the recording against fresh V1 and V2
// servers.
func TestVerify_GoSDKHTTP(t *testing.T) {
	parallel(t)
	type mode struct {
		name  string
		flags []string
	}
	legacy := []mode{{"SSE", nil}, {"JSON", []string{"-json"}}, {"EventStore", []string{"-eventstore"}}}
	cases := map[string][]mode{
		mcptest.V20250326: legacy,
		mcptest.V20250618: legacy,
		mcptest.V20251125: legacy,
		mcptest.V20260728: {{"Stateless", []string{"-stateless"}}},
	}
	for v, modes := range cases {
		for _, m := range modes {
			t.Run(v+"/"+m.name, func(t *testing.T) {
				t.Parallel()
				ctx := testCtx(t)
				db := filepath.Join(t.TempDir(), "c.db")
				upstream := mcptest.StartServer(t, append([]string{"-transport", "http"}, m.flags...)...)
				rec := startServing(t, "record", "--cassette", db, "--upstream", upstream, "--listen", "127.0.0.1:0")
				mcptest.Run(ctx, t, &mcp.StreamableClientTransport{Endpoint: rec.URL}, v)
				if code := rec.Stop(); code != 0 {
					t.Fatalf("mcpvcr record exited %d:\n%s", code, rec.stderr)
				}
				t.Cleanup(func() {
					if t.Failed() {
						t.Logf("recording:\n%s", mcpvcr(t, "", "show", "1", "--cassette", db).stdout)
					}
				})

				v1 := mcptest.StartServer(t, append([]string{"-transport", "http"}, m.flags...)...)
				r := verifyJSON(t, exitOK, "verify", "1", "--cassette", db, "--upstream", v1)
				if diff := cmp.Diff([]found(nil), differences(r)); diff != "" {
					t.Errorf("verify against V1 (-want +got):\n%s", diff)
				}
				v2 := mcptest.StartServer(t, append([]string{"-transport", "http", "-variant", "v2"}, m.flags...)...)
				r = verifyJSON(t, exitDiffer, "verify", "1", "--cassette", db, "--upstream", v2)
				var got []string
				for _, f := range differences(r) {
					got = append(got, f.Request[:strings.Index(f.Request, " (")]+" "+f.Path)
				}
				want := []string{
					"tools/list result.tools[name=add].inputSchema.properties.c",
					"tools/list result.tools[name=multiply]",
					"tools/call info result.structuredContent.version",
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("verify against V2 (-want +got):\n%s", diff)
					for _, rd := range r.Requests {
						for _, c := range rd.Changes {
							t.Logf("%s %s %s: %s → %s", rd.Label(), c.Path, c.Kind, c.Old, c.New)
						}
					}
					t.Logf("the run against V2:\n%s", mcpvcr(t, "", "show", "3", "--cassette", db).stdout)
				}
				if v != mcptest.V20250618 || m.name != "SSE" {
					return
				}
				old := mcptest.StartServer(t, "-transport", "http", "-versions", mcptest.V20250326)
				for _, tt := range []struct {
					upstream, msg string
				}{
					{old, "the server speaks protocol revision 2025-03-26, but the session was recorded at 2025-06-18"},
					{"http://127.0.0.1:1/mcp", "is not reachable"},
				} {
					res := mcpvcr(t, "", "verify", "1", "--cassette", db, "--upstream", tt.upstream)
					if res.code != exitFailure || !strings.Contains(res.stderr, tt.msg) {
						t.Errorf("verify --upstream %s = exit %d, stderr %q; want exit 3 and %q", tt.upstream, res.code, res.stderr, tt.msg)
					}
				}
			})
		}
	}
}

// TestVerify_GoSDKSSE verifies a recording of the 2024-11-05 HTTP+SSE
// transport: the SSE stream is opened first and the client frames are
// POSTed to the endpoint it names.
func TestVerify_GoSDKSSE(t *testing.T) {
	parallel(t)
	ctx := testCtx(t)
	db := filepath.Join(t.TempDir(), "c.db")
	upstream := mcptest.StartServer(t, "-transport", "sse")
	rec := startServing(t, "record", "--cassette", db, "--upstream", upstream, "--listen", "127.0.0.1:0")
	mcptest.Run(ctx, t, &mcp.SSEClientTransport{Endpoint: rec.URL}, mcptest.V20241105)
	if code := rec.Stop(); code != 0 {
		t.Fatalf("mcpvcr record exited %d:\n%s", code, rec.stderr)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("recording:\n%s", mcpvcr(t, "", "show", "1", "--cassette", db).stdout)
		}
	})
	verifyJSON(t, exitOK, "verify", "1", "--cassette", db, "--upstream", mcptest.StartServer(t, "-transport", "sse"))
	r := verifyJSON(t, exitDiffer, "verify", "1", "--cassette", db, "--upstream", mcptest.StartServer(t, "-transport", "sse", "-variant", "v2"))
	if _, differ, changes := r.Counts(); differ != 2 || changes != 3 {
		t.Errorf("verify against V2: %d requests differ with %d changes; want 2 and 3:\n%+v", differ, changes, differences(r))
	}
}

// TestVerify_KeepsRunsOnlyWhenAsked: verify leaves the cassette as it
// found it unless --keep is given; a kept run is left out of ls unless
// --all, with a line saying how many were.
func TestVerify_KeepsRunsOnlyWhenAsked(t *testing.T) {
	parallel(t)
	ctx := testCtx(t)
	server := mcptest.BuildServer(t)
	db := filepath.Join(t.TempDir(), "c.db")
	recordGoSDK(ctx, t, db, mcptest.V20250618)
	lines := func(args ...string) int {
		res := mcpvcr(t, "", append([]string{"ls", "--cassette", db}, args...)...)
		return strings.Count(res.stdout, "\n") - 1 // the header
	}
	for range 2 {
		if res := mcpvcr(t, "", "verify", "1", "--cassette", db, "--", server); res.code != 0 {
			t.Fatalf("verify exited %d:\n%s", res.code, res.stderr)
		}
	}
	if n := lines("--all"); n != 1 {
		t.Errorf("after two verify runs without --keep the cassette holds %d sessions; want the recorded one", n)
	}
	if res := mcpvcr(t, "", "verify", "1", "--keep", "--cassette", db, "--", server); res.code != 0 {
		t.Fatalf("verify --keep exited %d:\n%s", res.code, res.stderr)
	}
	ls := mcpvcr(t, "", "ls", "--cassette", db)
	if n := lines(); n != 1 || !strings.Contains(ls.stderr, "1 run of verify left out; mcpvcr ls --all lists them") {
		t.Errorf("ls after verify --keep lists %d sessions, says %q; want the recorded one and the run counted", n, ls.stderr)
	}
	if n := lines("--all"); n != 2 {
		t.Errorf("ls --all after verify --keep lists %d sessions; want the recorded one and its run", n)
	}
}

// TestVerify_SARIFLocations: verify --format sarif of a JSONL cassette
// locates every result physically, as code-scanning uploads require: the
// cassette as given and the line of the request's frame in it.
func TestVerify_SARIFLocations(t *testing.T) {
	parallel(t)
	ctx := testCtx(t)
	server := mcptest.BuildServer(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "c.db")
	recordGoSDK(ctx, t, db, mcptest.V20250618)
	if res := mcpvcr(t, "", "export", "1", "--cassette", db, "-o", filepath.Join(dir, "release.jsonl")); res.code != 0 {
		t.Fatalf("export: %d\n%s", res.code, res.stderr)
	}
	cmd := exec.CommandContext(ctx, mcpvcrBin, "verify", "1", "--cassette", "release.jsonl", "--format", "sarif", "--", server, "-variant", "v2")
	cmd.Dir = dir
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != exitDiffer {
		t.Fatalf("verify --format sarif: %v; want exit %d", err, exitDiffer)
	}
	var log struct {
		Runs []struct {
			Results []struct {
				Message   struct{ Text string }
				Locations []struct {
					PhysicalLocation *struct {
						ArtifactLocation struct{ URI string }
						Region           *struct{ StartLine int }
					}
				}
			}
		}
	}
	if err := json.Unmarshal(out, &log); err != nil || len(log.Runs) != 1 || len(log.Runs[0].Results) == 0 {
		t.Fatalf("the SARIF report: %v\n%s", err, out)
	}
	export, err := os.ReadFile(filepath.Join(dir, "release.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(export), "\n")
	for _, res := range log.Runs[0].Results {
		p := res.Locations[0].PhysicalLocation
		if p == nil || p.ArtifactLocation.URI != "release.jsonl" || p.Region == nil || p.Region.StartLine < 1 || p.Region.StartLine > len(lines) {
			t.Errorf("result %q has no physical location in release.jsonl: %+v", res.Message.Text, p)
			continue
		}
		if line := lines[p.Region.StartLine-1]; !strings.Contains(line, `"type":"frame"`) && !strings.Contains(line, `"type":"session"`) {
			t.Errorf("result %q points at line %d, which is no frame: %.120s", res.Message.Text, p.Region.StartLine, line)
		}
	}
}
