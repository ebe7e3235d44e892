package diff

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// reportWithEverything is a report with a change, a missing request,
// server traffic and a skipped call.
func reportWithEverything(t *testing.T) *Report {
	t.Helper()
	changed := `< {"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`
	old := lineRecording(t, 1, initReq, initResp, inited, listReq, `< {"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"a"}]}}`,
		callReq, `< {"jsonrpc":"2.0","id":3,"result":{"content":[]}}`)
	new := lineRecording(t, 2, initReq, initResp, inited, listReq, `< {"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"a"},{"name":"b"}]}}`, changed)
	r := Compare(old, new, Noise{})
	r.Requests = append(r.Requests, RequestDiff{Seq: 9, Method: "tools/call", Name: "forget", Status: StatusSkipped, Reason: "not sent: tool forget may write"})
	return r
}

// TestWriteSARIF decodes the SARIF report strictly into the SARIF shape
// and, where node and the schema (npm @microsoft/jest-sarif) are
// installed, validates it against the SARIF 2.1.0 JSON schema.
func TestWriteSARIF(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, "sarif", reportWithEverything(t)); err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b.Bytes()))
	dec.DisallowUnknownFields()
	var log sarifLog
	if err := dec.Decode(&log); err != nil {
		t.Fatalf("decode SARIF strictly: %v\n%s", err, b.String())
	}
	if log.Version != "2.1.0" || len(log.Runs) != 1 {
		t.Fatalf("SARIF version %q with %d runs; want 2.1.0 and 1", log.Version, len(log.Runs))
	}
	var got []string
	for _, res := range log.Runs[0].Results {
		if r := log.Runs[0].Tool.Driver.Rules[res.RuleIndex]; r.ID != res.RuleID {
			t.Errorf("result %q: ruleIndex %d names rule %q", res.Message.Text, res.RuleIndex, r.ID)
		}
		got = append(got, res.RuleID+" "+res.Level+" "+res.Locations[0].LogicalLocations[0].FullyQualifiedName)
	}
	want := []string{
		"mcpvcr/changed error session 1/tools/list (seq 4)/result.tools[name=b]",
		"mcpvcr/missing error session 1/tools/call info (seq 6)",
		"mcpvcr/skipped none session 1/tools/call forget (seq 9)",
		`mcpvcr/server-traffic error session 1/requests and notifications the server sent on its own/notifications["notifications/tools/list_changed"]`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("SARIF results (-want +got):\n%s", diff)
	}
	validateSARIF(t, b.Bytes())
}

// TestWriteSARIFAt: every result has a physical location, as code-scanning
// uploads require: the frame of its request where the locator finds it,
// the new session's for a request only it sent, the artifact alone
// without a locator.
func TestWriteSARIFAt(t *testing.T) {
	r := reportWithEverything(t)
	r.Requests = append(r.Requests, RequestDiff{NewSeq: 12, Method: "ping", Status: StatusExtra, Reason: "not in the recording"})
	r.New.ID = 2
	loc := func(session, seq int64) Location {
		return Location{URI: "testdata/release.jsonl", Line: int(session*100 + seq)}
	}
	for _, tc := range []struct {
		name string
		loc  Locator
		want []string
	}{
		{"locator", loc, []string{"testdata/release.jsonl:104", "testdata/release.jsonl:106", "testdata/release.jsonl:109", "testdata/release.jsonl:212", "testdata/release.jsonl:100"}},
		{"none", nil, []string{"mcpvcr-session-1:0", "mcpvcr-session-1:0", "mcpvcr-session-1:0", "mcpvcr-session-2:0", "mcpvcr-session-1:0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteSARIFAt(&b, tc.loc, r); err != nil {
				t.Fatal(err)
			}
			var log sarifLog
			if err := json.Unmarshal(b.Bytes(), &log); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, res := range log.Runs[0].Results {
				p := res.Locations[0].PhysicalLocation
				line := 0
				if p.Region != nil {
					line = p.Region.StartLine
				}
				got = append(got, fmt.Sprintf("%s:%d", p.ArtifactLocation.URI, line))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("physical locations (-want +got):\n%s", diff)
			}
			validateSARIF(t, b.Bytes())
		})
	}
}

// validateSARIF validates doc against the SARIF 2.1.0 schema with the ajv
// that @microsoft/jest-sarif brings (the schema is JSON Schema draft 4).
func validateSARIF(t *testing.T, doc []byte) {
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
  if (!ajv.validate(schema, JSON.parse(input))) {
    console.error(JSON.stringify(ajv.errors, null, 1));
    process.exit(1);
  }
});`
	cmd := exec.Command(node, "-e", script, root)
	cmd.Stdin = bytes.NewReader(doc)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("the SARIF report does not validate against the SARIF 2.1.0 schema: %v\n%s\n%s", err, out, doc)
	}
}

// TestValidateSARIF checks that the schema check can fail.
func TestValidateSARIF(t *testing.T) {
	bad := []byte(`{"version":"2.1.0","runs":[{"tool":{"driver":{}},"results":[{"message":{}}]}]}`)
	root := filepath.Join("..", "node_modules", "@microsoft", "jest-sarif", "lib", "schemas", "sarif-2.1.0-rtm.5.json")
	if _, err := os.Stat(root); err != nil {
		t.Skip("the SARIF schema is not installed")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("no node")
	}
	abs, _ := filepath.Abs(filepath.Join("..", "node_modules", "@microsoft", "jest-sarif"))
	cmd := exec.Command(node, "-e", `const r=process.argv[1];const Ajv=require(r+"/node_modules/ajv");const a=new Ajv({schemaId:"auto",validateSchema:false});a.addMetaSchema(require(r+"/node_modules/ajv/lib/refs/json-schema-draft-04.json"));process.exit(a.validate(require(r+"/lib/schemas/sarif-2.1.0-rtm.5.json"),JSON.parse(process.argv[2]))?0:1)`, abs, string(bad))
	if cmd.Run() == nil {
		t.Errorf("a SARIF log without a driver name validated")
	}
}

// TestWriteJUnit_Skipped parses the JUnit report: a call the write guard
// skipped is a skipped test case, counted on its suite.
func TestWriteJUnit_Skipped(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJUnit(&b, reportWithEverything(t)); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Suites []struct {
			Tests    int `xml:"tests,attr"`
			Failures int `xml:"failures,attr"`
			Skipped  int `xml:"skipped,attr"`
			Cases    []struct {
				Name    string    `xml:"name,attr"`
				Failure *struct{} `xml:"failure"`
				Skipped *struct {
					Message string `xml:"message,attr"`
				} `xml:"skipped"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("parse JUnit: %v\n%s", err, b.String())
	}
	s := doc.Suites[0]
	if s.Skipped != 1 || s.Failures != 3 {
		t.Errorf("suite: %d skipped, %d failures; want 1 and 3\n%s", s.Skipped, s.Failures, b.String())
	}
	var skipped []string
	for _, c := range s.Cases {
		if c.Skipped != nil {
			if c.Failure != nil {
				t.Errorf("case %s is both skipped and failed", c.Name)
			}
			skipped = append(skipped, c.Name+": "+c.Skipped.Message)
		}
	}
	if diff := cmp.Diff([]string{"tools/call forget (seq 9): not sent: tool forget may write"}, skipped); diff != "" {
		t.Errorf("skipped cases (-want +got):\n%s", diff)
	}
	if !strings.Contains(b.String(), "<skipped") {
		t.Errorf("no <skipped> element:\n%s", b.String())
	}
}
