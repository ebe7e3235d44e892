package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
)

// auditFindings runs mcpvcr audit --format json on the cassette and
// returns the rule of each finding, "rule level" sorted, and the exit code.
func auditFindings(tb testing.TB, cassette string, args ...string) ([]string, int) {
	tb.Helper()
	r := mcpvcr(tb, "", append([]string{"audit", "--cassette", cassette, "--format", "json"}, args...)...)
	if r.code != 0 && r.code != 1 {
		tb.Fatalf("mcpvcr audit exited %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
	var doc struct {
		Findings []struct {
			Rule  string `json:"rule"`
			Level string `json:"level"`
			Sent  string `json:"sent"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		tb.Fatalf("audit JSON: %v\n%s", err, r.stdout)
	}
	var out []string
	for _, f := range doc.Findings {
		s := f.Rule + " " + f.Level
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	if len(out) > 0 {
		tb.Logf("audit:\n%s", mcpvcr(tb, "", append([]string{"audit", "--cassette", cassette}, args...)...).stdout)
	}
	return out, r.code
}

// wantAudit checks that the findings are exactly want (rule and level,
// each once however often it repeats) and the exit code follows them.
func wantAudit(t *testing.T, cassette string, want ...string) {
	t.Helper()
	got, code := auditFindings(t, cassette)
	slices.Sort(want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("audit findings (-want +got):\n%s", diff)
	}
	wantCode := 0
	for _, w := range want {
		if strings.HasSuffix(w, " error") {
			wantCode = 1
		}
	}
	if code != wantCode {
		t.Errorf("mcpvcr audit exited %d; want %d", code, wantCode)
	}
}

// wantClientAudit is wantAudit for a real client's recording, whose
// every session must be of a known revision: one of unknown revision
// would be checked by no rule.
func wantClientAudit(t *testing.T, cassette string, want ...string) {
	t.Helper()
	wantClientAuditAt(t, cassette, "", want...)
}

// wantClientAuditAt is wantClientAudit where every session must also have
// negotiated revision (any known one when revision is "").
func wantClientAuditAt(t *testing.T, cassette, revision string, want ...string) {
	t.Helper()
	var sessions []struct {
		Revision string `json:"revision"`
	}
	ls := mcpvcr(t, "", "ls", "--cassette", cassette, "--format", "json")
	if err := json.Unmarshal([]byte(ls.stdout), &sessions); err != nil || len(sessions) == 0 {
		t.Fatalf("mcpvcr ls: %v\n%s", err, ls.stdout)
	}
	t.Logf("sessions: %s", ls.stdout)
	for _, s := range sessions {
		if s.Revision == "" {
			t.Errorf("a session of unknown revision: the audit checks nothing in it:\n%s", ls.stdout)
		} else if revision != "" && s.Revision != revision {
			t.Errorf("a session of revision %s; want %s, the one the server was made to negotiate", s.Revision, revision)
		}
	}
	wantAudit(t, cassette, want...)
}

// goSDKModernRoots is what the Go SDK client v1.8.0 breaks in 2026-07-28:
// it declares roots.listChanged in every request's _meta.
const goSDKModernRoots = "modern/roots-without-list-changed error"

// TestAudit_GoSDKStdio records the Go SDK client's test script over stdio
// at every revision it speaks and audits the recording.
func TestAudit_GoSDKStdio(t *testing.T) {
	parallel(t)
	server := mcptest.BuildServer(t)
	for _, v := range mcptest.Versions {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			db := filepath.Join(t.TempDir(), "c.db")
			var recErr bytes.Buffer
			rec := exec.Command(mcpvcrBin, "record", "--cassette", db, "--", server)
			rec.Stderr = &recErr
			mcptest.Run(testCtx(t), t, &mcp.CommandTransport{Command: rec}, v)
			if code := rec.ProcessState.ExitCode(); code != 0 {
				t.Fatalf("mcpvcr record exited %d:\n%s", code, recErr.String())
			}
			var want []string
			if v == mcptest.V20260728 {
				want = append(want, goSDKModernRoots)
			}
			wantClientAudit(t, db, want...)
		})
	}
}

// auditRecordHTTP records run against upstream through mcpvcr record and
// returns the cassette.
func auditRecordHTTP(t *testing.T, upstream string, run func(url string)) string {
	t.Helper()
	db := filepath.Join(t.TempDir(), "c.db")
	rec := startServing(t, "record", "--cassette", db, "--upstream", upstream, "--listen", "127.0.0.1:0")
	run(rec.URL)
	if code := rec.Stop(); code != 0 {
		t.Fatalf("mcpvcr record exited %d:\n%s", code, rec.stderr)
	}
	return db
}

// TestAudit_GoSDKHTTP records the Go SDK client's test script over
// Streamable HTTP at each revision (2026-07-28 against the stateless
// server) and over HTTP+SSE (2024-11-05), and audits it.
func TestAudit_GoSDKHTTP(t *testing.T) {
	parallel(t)
	for _, tc := range []struct {
		version string
		flags   []string
		want    []string
	}{
		// The Go SDK client sends MCP-Protocol-Version: 2025-03-26 when it
		// negotiated 2025-03-26: a header that revision did not have.
		{mcptest.V20250326, nil, []string{"http/protocol-version-not-before-2025-06-18 warning"}},
		{mcptest.V20250618, nil, nil},
		{mcptest.V20251125, nil, nil},
		// With an event store the server closes streams for the client
		// to resume: the resumption rules see real GETs with Last-Event-ID.
		{mcptest.V20250326, []string{"-eventstore"}, []string{"http/protocol-version-not-before-2025-06-18 warning"}},
		{mcptest.V20250618, []string{"-eventstore"}, nil},
		{mcptest.V20251125, []string{"-eventstore"}, nil},
		// In 2026-07-28 it also POSTs notifications/cancelled for the
		// call it cancels, besides closing that call's stream.
		{mcptest.V20260728, []string{"-stateless"}, []string{goSDKModernRoots, "cancel/modern-http-by-close error"}},
		{mcptest.V20241105, []string{"sse"}, nil},
	} {
		t.Run(strings.Join(append([]string{tc.version}, tc.flags...), ""), func(t *testing.T) {
			t.Parallel()
			ctx := testCtx(t)
			var db string
			if slices.Contains(tc.flags, "sse") {
				upstream := mcptest.StartServer(t, "-transport", "sse")
				db = auditRecordHTTP(t, upstream, func(url string) {
					mcptest.Run(ctx, t, &mcp.SSEClientTransport{Endpoint: url}, tc.version)
				})
			} else {
				upstream := mcptest.StartServer(t, append([]string{"-transport", "http"}, tc.flags...)...)
				db = auditRecordHTTP(t, upstream, func(url string) {
					mcptest.Run(ctx, t, &mcp.StreamableClientTransport{Endpoint: url}, tc.version)
				})
			}
			wantClientAudit(t, db, tc.want...)
			if slices.Contains(tc.flags, "-eventstore") {
				if ex := mcpvcr(t, "", "export", "--cassette", db); !strings.Contains(ex.stdout, `"kind":"resume"`) {
					t.Errorf("no resuming GET recorded: the resumption rules saw nothing")
				}
			}
		})
	}
}

// goServerCase is a revision and transport at which the TypeScript SDK
// client and Inspector's CLI are recorded against the Go SDK test server
// made to negotiate that revision alone (-versions): server-everything
// negotiates 2025-11-25 only.
type goServerCase struct{ version, transport string }

func (c goServerCase) String() string { return c.version + "-" + c.transport }

// goServerCases: stdio and Streamable HTTP at each legacy revision before
// 2025-11-25, and HTTP+SSE at 2024-11-05.
var goServerCases = []goServerCase{
	{mcptest.V20241105, "stdio"}, {mcptest.V20241105, "http"}, {mcptest.V20241105, "sse"},
	{mcptest.V20250326, "stdio"}, {mcptest.V20250326, "http"},
	{mcptest.V20250618, "stdio"}, {mcptest.V20250618, "http"},
}

// versionHeaderEarly is what the TypeScript SDK client (1.32.2) and
// Inspector's CLI (2.12.0) break over HTTP when 2025-03-26 or 2024-11-05
// was negotiated: they send MCP-Protocol-Version naming it on every
// request after initialize (notifications/initialized, the GET, every
// call), over Streamable HTTP and over HTTP+SSE, a header those revisions
// did not have.
const versionHeaderEarly = "http/protocol-version-not-before-2025-06-18 warning"

// sendsEarlyVersionHeader reports whether the TypeScript client and
// Inspector break versionHeaderEarly in case c.
func sendsEarlyVersionHeader(c goServerCase) bool {
	return c.transport != "stdio" && c.version <= mcptest.V20250326
}

// recordGoServer records run against the Go SDK test server negotiating
// c.version alone over c.transport, through mcpvcr record, and returns
// the cassette. run gets mcpvcr record's URL over http and sse, and over
// stdio the command line that records the server.
func recordGoServer(t *testing.T, c goServerCase, run func(url string, stdio []string)) string {
	t.Helper()
	if c.transport == "stdio" {
		db := filepath.Join(t.TempDir(), "c.db")
		run("", []string{mcpvcrBin, "record", "--cassette", db, "--", mcptest.BuildServer(t), "-versions", c.version})
		return db
	}
	upstream := mcptest.StartServer(t, "-transport", c.transport, "-versions", c.version)
	return auditRecordHTTP(t, upstream, func(url string) { run(url, nil) })
}

// TestAudit_TSClient records the TypeScript SDK client against
// server-everything (2025-11-25) over Streamable HTTP and stdio, and
// against the Go SDK test server at each older revision, and audits it.
func TestAudit_TSClient(t *testing.T) {
	parallel(t)
	node := mcptest.Everything(t)[0]
	t.Run("http", func(t *testing.T) {
		t.Parallel()
		upstream := mcptest.EverythingHTTP(t, mcptest.StreamableHTTP)
		db := auditRecordHTTP(t, upstream, func(url string) { runTS(t, node, url, "everything") })
		wantClientAuditAt(t, db, mcptest.V20251125)
	})
	t.Run("stdio", func(t *testing.T) {
		t.Parallel()
		db := filepath.Join(t.TempDir(), "c.db")
		cmd, _ := json.Marshal(append([]string{mcpvcrBin, "record", "--cassette", db, "--"}, mcptest.Everything(t)...))
		runTS(t, node, "stdio:"+string(cmd), "everything")
		wantClientAuditAt(t, db, mcptest.V20251125)
	})
	for _, c := range goServerCases {
		t.Run(c.String(), func(t *testing.T) {
			t.Parallel()
			db := recordGoServer(t, c, func(url string, stdio []string) {
				var env []string
				if stdio != nil {
					cmd, _ := json.Marshal(stdio)
					url = "stdio:" + string(cmd)
				} else if c.transport == "sse" {
					env = append(env, "TRANSPORT=sse")
				}
				// Script "script": the Go SDK test script's first steps,
				// its slow call cancelled with notifications/cancelled.
				// Every step passes; over stdio mcpvcr record exits 0.
				for _, step := range runTS(t, node, url, "script", env...) {
					name, outcome, ok := strings.Cut(step, ": ")
					want := "ok"
					if name == "server exit" {
						want = "0"
					}
					if ok && outcome != want {
						t.Errorf("TypeScript client: %s: %s; want %s", name, outcome, want)
					}
				}
			})
			var want []string
			if sendsEarlyVersionHeader(c) {
				want = append(want, versionHeaderEarly)
			}
			wantClientAuditAt(t, db, c.version, want...)
		})
	}
}

// runTS runs the TypeScript client's script (chaos.mjs) against url with
// env added to its environment, and returns what it saw, step by step.
func runTS(t *testing.T, node, url, script string, env ...string) []string {
	t.Helper()
	cmd := exec.CommandContext(testCtx(t), node, tsChaosScript, url, script)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr syncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("TypeScript client: %v\n%s", err, stderr.String())
	}
	t.Logf("TypeScript client saw %s", stdout.String())
	var saw []string
	if err := json.Unmarshal([]byte(stdout.String()), &saw); err != nil {
		t.Fatalf("TypeScript client's output: %v", err)
	}
	return saw
}

// TestAudit_Inspector records the Inspector CLI calling a tool of
// server-everything (2025-11-25) over stdio and over Streamable HTTP, and
// of the Go SDK test server at each older revision, and audits it.
func TestAudit_Inspector(t *testing.T) {
	parallel(t)
	cli := mcptest.InspectorCLI(t)
	// inspect calls tool echo with arg and returns the CLI's output.
	inspect := func(t *testing.T, arg string, target ...string) string {
		args := append(slices.Clone(cli[1:]), target...)
		args = append(args, "--method", "tools/call", "--tool-name", "echo", "--tool-arg", arg)
		cmd := exec.CommandContext(testCtx(t), cli[0], args...)
		cmd.Env = append(os.Environ(), "MCP_CATALOG_PATH="+filepath.Join(t.TempDir(), "mcp.json"))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("Inspector CLI: %v\n%s", err, out)
		}
		return string(out)
	}
	t.Run("stdio", func(t *testing.T) {
		t.Parallel()
		db := filepath.Join(t.TempDir(), "c.db")
		inspect(t, "message=hi", append([]string{mcpvcrBin, "record", "--cassette", db, "--"}, mcptest.Everything(t)...)...)
		wantClientAuditAt(t, db, mcptest.V20251125)
	})
	t.Run("http", func(t *testing.T) {
		t.Parallel()
		upstream := mcptest.EverythingHTTP(t, mcptest.StreamableHTTP)
		db := auditRecordHTTP(t, upstream, func(url string) { inspect(t, "message=hi", url, "--transport", "http") })
		wantClientAuditAt(t, db, mcptest.V20251125)
	})
	for _, c := range goServerCases {
		t.Run(c.String(), func(t *testing.T) {
			t.Parallel()
			db := recordGoServer(t, c, func(url string, stdio []string) {
				target := stdio
				if stdio == nil {
					target = []string{url, "--transport", c.transport}
				}
				// The Go SDK test server's echo takes text.
				if out := inspect(t, "text=hi", target...); !strings.Contains(out, `"text": "hi"`) {
					t.Errorf("Inspector CLI: echo did not answer hi:\n%s", out)
				}
			})
			var want []string
			if sendsEarlyVersionHeader(c) {
				want = append(want, versionHeaderEarly)
			}
			wantClientAuditAt(t, db, c.version, want...)
		})
	}
}

// rawRequest sends a request as a hand-written client would: body, if
// not empty, as JSON (accepting JSON or events), else accepting events;
// hdr on top.
func rawRequest(t *testing.T, ctx context.Context, method, url, body string, hdr map[string]string) *http.Response {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// rawPost POSTs body to url with headers, as a hand-written client
// would, and returns the response's Mcp-Session-Id.
func rawPost(t *testing.T, url, body string, hdr map[string]string) string {
	t.Helper()
	resp := rawRequest(t, testCtx(t), http.MethodPost, url, body, hdr)
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.Header.Get("Mcp-Session-Id")
}

// rawGet opens the standalone GET stream with headers and closes it at
// once.
func rawGet(t *testing.T, url string, hdr map[string]string) {
	t.Helper()
	rawRequest(t, testCtx(t), http.MethodGet, url, "", hdr).Body.Close()
}

// TestAudit_RawHTTP: hand-written clients that break header rules against
// the Go SDK test server, recorded through mcpvcr record; audit names
// exactly the rules they break, and --skip leaves them out.
func TestAudit_RawHTTP(t *testing.T) {
	parallel(t)
	t.Run("legacy", func(t *testing.T) {
		t.Parallel()
		upstream := mcptest.StartServer(t, "-transport", "http")
		db := auditRecordHTTP(t, upstream, func(url string) {
			sid := rawPost(t, url, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`,
				map[string]string{"MCP-Protocol-Version": "2025-06-18"})
			// The newest version instead of the negotiated one.
			rawPost(t, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"})
			// A GET without the version.
			rawGet(t, url, map[string]string{"Mcp-Session-Id": sid})
			// No session id: mcpvcr record files this request under a
			// session of its own, which audit cannot tie to the first.
			rawPost(t, url, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, map[string]string{"MCP-Protocol-Version": "2025-06-18"})
		})
		wantAudit(t, db, "http/protocol-version-absent-on-initialize warning", "http/protocol-version-negotiated error")
		if got, _ := auditFindings(t, db, "1", "--rules", "http/protocol-version-negotiated"); len(got) != 1 {
			t.Errorf("audit 1 --rules http/protocol-version-negotiated = %v", got)
		}
		got, code := auditFindings(t, db, "--skip", "http/session-id,http/protocol-version-negotiated")
		if len(got) != 1 || code != 0 {
			t.Errorf("audit --skip = %v, exit %d; want the warning alone, exit 0", got, code)
		}
	})
	t.Run("modern", func(t *testing.T) {
		t.Parallel()
		upstream := mcptest.StartServer(t, "-transport", "http", "-stateless")
		meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
		db := auditRecordHTTP(t, upstream, func(url string) {
			rawPost(t, url, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+meta+`}}`,
				map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list", "Mcp-Session-Id": "left-over"})
			rawPost(t, url, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},`+meta+`}}`,
				map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call"})
			rawPost(t, url, `{"jsonrpc":"2.0","id":3,"method":"ping","params":{`+meta+`}}`,
				map[string]string{"MCP-Protocol-Version": "2025-11-25", "Mcp-Method": "ping"})
		})
		wantAudit(t, db, "http/no-session-id error", "http/mcp-name error", "modern/no-ping error", "http/modern-protocol-version error")
	})
}

// TestAudit_SARIF: the SARIF log of a JSONL export validates against the
// SARIF 2.1.0 schema, and every result points at its frame's line.
func TestAudit_SARIF(t *testing.T) {
	parallel(t)
	upstream := mcptest.StartServer(t, "-transport", "http")
	db := auditRecordHTTP(t, upstream, func(url string) {
		sid := rawPost(t, url, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`, nil)
		rawPost(t, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, map[string]string{"Mcp-Session-Id": sid})
	})
	export := filepath.Join(t.TempDir(), "c.jsonl")
	if r := mcpvcr(t, "", "export", "--cassette", db, "-o", export); r.code != 0 {
		t.Fatalf("export: %d %s", r.code, r.stderr)
	}
	out := filepath.Join(t.TempDir(), "audit.sarif")
	if r := mcpvcr(t, "", "audit", export, "--format", "sarif", "-o", out); r.code != 1 {
		t.Fatalf("audit exited %d; want 1:\n%s", r.code, r.stderr)
	}
	doc, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	validateAuditSARIF(t, doc)
	var log struct {
		Runs []struct {
			Results []struct {
				RuleID    string `json:"ruleId"`
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct{ URI string }     `json:"artifactLocation"`
						Region           *struct{ StartLine int } `json:"region"`
					} `json:"physicalLocation"`
				} `json:"locations"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(doc, &log); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(mustRead(t, export)), "\n")
	res := log.Runs[0].Results
	if len(res) == 0 {
		t.Fatalf("no results:\n%s", doc)
	}
	for _, r := range res {
		p := r.Locations[0].PhysicalLocation
		if p.ArtifactLocation.URI != filepath.ToSlash(export) || p.Region == nil {
			t.Errorf("%s: location %+v; want a line of %s", r.RuleID, p, export)
			continue
		}
		if line := lines[p.Region.StartLine-1]; !strings.Contains(line, `"type":"frame"`) || !strings.Contains(line, "notifications/initialized") {
			t.Errorf("%s: line %d is not the frame: %s", r.RuleID, p.Region.StartLine, line)
		}
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// validateAuditSARIF validates doc against the SARIF 2.1.0 schema with the
// ajv of @microsoft/jest-sarif, failing under MCPVCR_REQUIRE_PEERS=1 when
// it is missing.
func validateAuditSARIF(t *testing.T, doc []byte) {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", "..", "node_modules", "@microsoft", "jest-sarif"))
	if err != nil {
		t.Fatal(err)
	}
	node, err := exec.LookPath("node")
	if _, serr := os.Stat(filepath.Join(root, "lib", "schemas", "sarif-2.1.0-rtm.5.json")); err != nil || serr != nil {
		if mcptest.RequirePeers() {
			t.Fatalf("node or the SARIF schema is missing (npm ci installs @microsoft/jest-sarif): %v %v", err, serr)
		}
		t.Skipf("node or the SARIF schema is missing: %v %v", err, serr)
	}
	script := `const r=process.argv[1];const Ajv=require(r+"/node_modules/ajv");const a=new Ajv({schemaId:"auto",allErrors:true,validateSchema:false});` +
		`a.addMetaSchema(require(r+"/node_modules/ajv/lib/refs/json-schema-draft-04.json"));let s="";process.stdin.on("data",d=>s+=d);` +
		`process.stdin.on("end",()=>{const d=JSON.parse(s);if(!a.validate(require(r+"/lib/schemas/sarif-2.1.0-rtm.5.json"),d)){console.error(JSON.stringify(a.errors));process.exit(1)}` +
		`for(const x of d.runs[0].results){if(!x.locations[0].physicalLocation){console.error("no physicalLocation");process.exit(1)}}})`
	cmd := exec.Command(node, "-e", script, root)
	cmd.Stdin = bytes.NewReader(doc)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("the SARIF log does not validate against the SARIF 2.1.0 schema: %v\n%s\n%s", err, out, doc)
	}
}

// TestAudit_Usage: usage mistakes exit 2 with a try: line; --help lists
// the rules.
func TestAudit_Usage(t *testing.T) {
	parallel(t)
	db := filepath.Join(cassetteDir, "gosdk-stdio-2025-11-25.jsonl")
	for _, args := range [][]string{{"--format", "xml"}, {"--rules", "nope"}, {"--skip", "http/nope"}} {
		r := mcpvcr(t, "", append([]string{"audit", db}, args...)...)
		if r.code != 2 || !strings.Contains(r.stderr, "try: ") {
			t.Errorf("audit %v = %d %q; want 2 and a try: line", args, r.code, r.stderr)
		}
	}
	h := mcpvcr(t, "", "audit", "--help")
	if !strings.Contains(h.stdout, "http/mcp-param ") || !strings.Contains(h.stdout, "resume/last-event-id") {
		t.Errorf("audit --help does not list the rules:\n%s", h.stdout)
	}
	if r := mcpvcr(t, "", "audit", db); r.code != 0 || !strings.Contains(r.stdout, "0 error(s), 0 warning(s)") {
		t.Errorf("audit of a clean cassette = %d %q", r.code, r.stdout)
	}
	// JUnit: a suite per session, a passing case per rule that applies.
	r := mcpvcr(t, "", "audit", db, "--format", "junit", "--rules", "http,lifecycle")
	var doc struct {
		Suites []struct {
			Tests    int `xml:"tests,attr"`
			Failures int `xml:"failures,attr"`
			Cases    []struct {
				Name string `xml:"name,attr"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal([]byte(r.stdout), &doc); err != nil || r.code != 0 || len(doc.Suites) != 1 {
		t.Fatalf("audit --format junit = %d, %v:\n%s", r.code, err, r.stdout)
	}
	// A stdio session: the lifecycle rules apply, the HTTP ones do not.
	if s := doc.Suites[0]; s.Tests != 2 || s.Failures != 0 || s.Cases[0].Name != "lifecycle/initialize-not-cancelled" {
		t.Errorf("JUnit suite = %+v; want the two lifecycle rules, passing", s)
	}
}
