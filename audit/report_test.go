package audit

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpvcr/mcpvcr/store"
)

// brokenHeaders is a recording that breaks two header rules and one
// SHOULD.
func brokenHeaders(t *testing.T) ([]*store.Recording, []Finding) {
	b := newRB(t, "2025-06-18", store.StreamableHTTP)
	legacyInit(b, "2025-06-18", map[string]string{"MCP-Protocol-Version": "2025-06-18"})
	b.post(map[string]string{"MCP-Protocol-Version": "2025-11-25\x1b[31m"}, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "")
	recs := []*store.Recording{b.rec}
	return recs, Audit(recs, nil)
}

func TestAudit_Levels(t *testing.T) {
	_, fs := brokenHeaders(t)
	var got []string
	for _, f := range fs {
		got = append(got, f.Rule+" "+f.Level.String()+" "+f.Where())
	}
	want := "http/protocol-version-absent-on-initialize warning session 1 post#1 seq 1|" +
		"http/protocol-version-negotiated error session 1 post#3 seq 4|http/session-id error session 1 post#3 seq 4"
	if strings.Join(got, "|") != want {
		t.Errorf("findings:\n got %s\nwant %s", strings.Join(got, "|"), want)
	}
	if got, want := Errors(fs), 2; got != want {
		t.Errorf("Errors() = %d; want %d", got, want)
	}
}

func TestSelect(t *testing.T) {
	rs, err := Select([]string{"http"}, []string{"http/session-id"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if !strings.HasPrefix(r.ID, "http/") || r.ID == "http/session-id" {
			t.Errorf("Select(http, skip http/session-id) has %s", r.ID)
		}
	}
	if _, err := Select([]string{"nope"}, nil); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("Select(nope) = %v; want an unknown rule error", err)
	}
}

func TestWriteText_Escapes(t *testing.T) {
	_, fs := brokenHeaders(t)
	var b bytes.Buffer
	if err := WriteText(&b, fs); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "\x1b") {
		t.Errorf("text output holds a raw escape:\n%s", b.String())
	}
	if !strings.Contains(b.String(), "2 error(s), 1 warning(s)") {
		t.Errorf("no summary:\n%s", b.String())
	}
}

func TestWriteJSON(t *testing.T) {
	_, fs := brokenHeaders(t)
	var b bytes.Buffer
	if err := WriteJSON(&b, fs); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Findings []map[string]any `json:"findings"`
		Errors   int              `json:"errors"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Findings) != 3 || doc.Errors != 2 || doc.Findings[1]["level"] != "error" || doc.Findings[1]["seq"] != float64(4) {
		t.Errorf("JSON report: %s", b.String())
	}
}

func TestWriteJUnit(t *testing.T) {
	recs, fs := brokenHeaders(t)
	var b bytes.Buffer
	if err := WriteJUnit(&b, []int64{1}, map[int64][]*Rule{1: {Lookup("http/session-id"), Lookup("http/mcp-method")}}, fs); err != nil {
		t.Fatal(err)
	}
	_ = recs
	var doc junitSuites
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if s := doc.Suites[0]; s.Tests != 2 || s.Failures != 1 {
		t.Errorf("JUnit suite: %s", b.String())
	}
}

func TestWriteSARIF(t *testing.T) {
	_, fs := brokenHeaders(t)
	for _, tc := range []struct {
		name string
		loc  Locator
		want string
	}{
		{"locator", func(s, seq int64) Location { return Location{URI: "bug.jsonl", Line: int(seq + 1)} }, "bug.jsonl:2 bug.jsonl:5 bug.jsonl:5"},
		{"none", nil, "mcpvcr-session-1:0 mcpvcr-session-1:0 mcpvcr-session-1:0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteSARIF(&b, tc.loc, Rules(), fs); err != nil {
				t.Fatal(err)
			}
			var log sarifLog
			if err := json.Unmarshal(b.Bytes(), &log); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range log.Runs[0].Results {
				p := r.Locations[0].PhysicalLocation
				line := 0
				if p.Region != nil {
					line = p.Region.StartLine
				}
				got = append(got, p.ArtifactLocation.URI+":"+itoa(line))
				if Rules()[r.RuleIndex].ID != r.RuleID {
					t.Errorf("ruleIndex %d is not %s", r.RuleIndex, r.RuleID)
				}
			}
			if strings.Join(got, " ") != tc.want {
				t.Errorf("physical locations = %s; want %s", strings.Join(got, " "), tc.want)
			}
			ValidateSARIF(t, b.Bytes())
		})
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// ValidateSARIF validates doc against the SARIF 2.1.0 schema with the ajv
// that @microsoft/jest-sarif brings (draft 4), as diff's tests do. Under
// MCPVCR_REQUIRE_PEERS=1 a missing schema fails the test.
func ValidateSARIF(t testing.TB, doc []byte) {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", "node_modules", "@microsoft", "jest-sarif"))
	if err != nil {
		t.Fatal(err)
	}
	node, err := exec.LookPath("node")
	if _, serr := os.Stat(filepath.Join(root, "lib", "schemas", "sarif-2.1.0-rtm.5.json")); err != nil || serr != nil {
		if os.Getenv("MCPVCR_REQUIRE_PEERS") == "1" {
			t.Fatalf("node or the SARIF schema is missing (npm ci installs @microsoft/jest-sarif): %v %v", err, serr)
		}
		t.Skipf("node or the SARIF schema is missing (npm ci installs @microsoft/jest-sarif): %v %v", err, serr)
	}
	script := `
const root = process.argv[1];
const Ajv = require(root + "/node_modules/ajv");
const ajv = new Ajv({schemaId: "auto", allErrors: true, validateSchema: false});
ajv.addMetaSchema(require(root + "/node_modules/ajv/lib/refs/json-schema-draft-04.json"));
const schema = require(root + "/lib/schemas/sarif-2.1.0-rtm.5.json");
let input = "";
process.stdin.on("data", d => input += d);
process.stdin.on("end", () => {
  const doc = JSON.parse(input);
  if (!ajv.validate(schema, doc)) {
    console.error(JSON.stringify(ajv.errors, null, 1));
    process.exit(1);
  }
  for (const r of doc.runs[0].results) {
    if (!r.locations || !r.locations[0].physicalLocation) { console.error("a result without a physicalLocation"); process.exit(1); }
  }
});`
	cmd := exec.Command(node, "-e", script, root)
	cmd.Stdin = bytes.NewReader(doc)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("the SARIF log does not validate against the SARIF 2.1.0 schema: %v\n%s\n%s", err, out, doc)
	}
}
