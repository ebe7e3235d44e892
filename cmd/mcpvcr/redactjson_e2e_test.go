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

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
)

// bodySecrets are tool arguments that must never reach the cassette:
// default names in three spellings, and one named by --redact-json.
var bodySecrets = map[string]string{
	"password":      "pw-secret-0001",
	"api_key":       "ak-secret-0002",
	"Client-Secret": "cs-secret-0003",
	"ssn":           "ssn-secret-0004",
}

// secretScript calls server-everything's echo with the secrets as extra
// arguments, twice, and returns what the client saw.
func secretScript(ctx context.Context, tb testing.TB, transport mcp.Transport) (map[string]any, error) {
	tb.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "mcpvcr-test", Version: "1.0.0"}, nil)
	cs, err := c.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: mcptest.V20251125})
	if err != nil {
		tb.Fatalf("connect: %v", err)
	}
	out := map[string]any{}
	for _, msg := range []string{"first", "second"} {
		args := map[string]any{"message": msg, "nested": map[string]any{"apiKey": "nested-secret-0005"}}
		for k, v := range bodySecrets {
			args[k] = v
		}
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: args})
		if err != nil {
			out[msg] = "error: " + err.Error()
			continue
		}
		b, _ := json.Marshal(r)
		var x any
		_ = json.Unmarshal(b, &x)
		out[msg] = x
	}
	return out, cs.Close()
}

// TestRecord_RedactsJSONSecrets records server-everything over stdio while
// a Go SDK client calls a tool with secrets among its arguments (the
// default names password, api_key, Client-Secret, a nested apiKey, and ssn
// named by --redact-json). None of them is in the cassette's files, its
// export or show; each is a placeholder, the same one for the same value;
// and replay matches a client that sends the real values again.
func TestRecord_RedactsJSONSecrets(t *testing.T) {
	parallel(t)
	argv := mcptest.Everything(t)
	ctx := testCtx(t)
	db := filepath.Join(t.TempDir(), "c.db")
	dumpOnFailure(t, db)
	rec := exec.Command(mcpvcrBin, append([]string{"record", "--cassette", db, "--redact-json", "ssn", "--"}, argv...)...)
	live, _ := secretScript(ctx, t, &mcp.CommandTransport{Command: rec, TerminateDuration: 200 * time.Millisecond})
	if strings.Contains(toJSON(live), "error") {
		t.Fatalf("the live server refused the calls: %v", live)
	}

	places := map[string]string{}
	files, _ := filepath.Glob(db + "*")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		places[filepath.Base(f)] = string(b)
	}
	export := mcpvcr(t, "", "export", "--cassette", db).stdout
	places["export"] = export
	places["show"] = mcpvcr(t, "", "show", "1", "--cassette", db).stdout
	for _, v := range append(mapValues(bodySecrets), "nested-secret-0005") {
		for place, content := range places {
			if strings.Contains(content, v) {
				t.Errorf("%s holds %q", place, v)
			}
		}
	}
	for _, k := range []string{"password", "api_key", "Client-Secret", "ssn", "apiKey"} {
		re := regexp.MustCompile(`\\"` + k + `\\":\\"(REDACTED-[0-9a-f]{12})\\"`)
		got := re.FindAllStringSubmatch(export, -1)
		if len(got) != 2 || got[0][1] != got[1][1] {
			t.Errorf("the export holds %d placeholders for %s, %v; want 2, the same one for the same value", len(got), k, got)
		}
	}
	if !strings.Contains(export, `\"message\":\"first\"`) {
		t.Errorf("the export lost the arguments that are not secret:\n%s", export)
	}

	var repErr syncBuffer
	rep := exec.Command(mcpvcrBin, "replay", "--stdio", "--cassette", db)
	rep.Stderr = &repErr
	replayed, err := secretScript(ctx, t, &mcp.CommandTransport{Command: rep})
	if err != nil {
		t.Errorf("close replay session: %v", err)
	}
	if diff := cmp.Diff(live, replayed); diff != "" {
		t.Errorf("replay differs from the live server (-live +replay):\n%s\n%s", diff, repErr.String())
	}
	if code := rep.ProcessState.ExitCode(); code != 0 || !strings.Contains(repErr.String(), " 0 unmatched") {
		t.Errorf("mcpvcr replay exited %d; want 0 and no unmatched frames:\n%s", code, repErr.String())
	}
}

// TestRecord_NoRedactJSON: --no-redact-json stores the arguments as sent.
func TestRecord_NoRedactJSON(t *testing.T) {
	parallel(t)
	argv := mcptest.Everything(t)
	ctx := testCtx(t)
	db := filepath.Join(t.TempDir(), "c.db")
	rec := exec.Command(mcpvcrBin, append([]string{"record", "--cassette", db, "--no-redact-json", "--"}, argv...)...)
	_, _ = secretScript(ctx, t, &mcp.CommandTransport{Command: rec, TerminateDuration: 200 * time.Millisecond})
	if export := mcpvcr(t, "", "export", "--cassette", db).stdout; !strings.Contains(export, bodySecrets["password"]) {
		t.Errorf("with --no-redact-json the export lacks the password as sent:\n%s", export)
	}
}

func mapValues(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestHTTP_RedactsJSONSecrets is TestRecord_RedactsJSONSecrets over
// Streamable HTTP: server-everything behind mcpvcr record --upstream, then
// mcpvcr replay --listen, which matches the real values again.
func TestHTTP_RedactsJSONSecrets(t *testing.T) {
	parallel(t)
	ctx := testCtx(t)
	upstream := mcptest.EverythingHTTP(t, mcptest.StreamableHTTP)
	db := recordThenReplay(t, upstream, "/mcp", nil, func(url string) string {
		out, err := secretScript(ctx, t, &mcp.StreamableClientTransport{Endpoint: url})
		if err != nil {
			t.Errorf("close session: %v", err)
		}
		return toJSON(out)
	})
	export := mcpvcr(t, "", "export", "--cassette", db).stdout
	for _, v := range []string{bodySecrets["password"], bodySecrets["api_key"], bodySecrets["Client-Secret"], "nested-secret-0005"} {
		if strings.Contains(export, v) {
			t.Errorf("the export holds %q", v)
		}
	}
	if !strings.Contains(export, `\"password\":\"REDACTED-`) {
		t.Errorf("the export lacks the password placeholder")
	}
}

// TestRecord_RedactsClientAnswerSecrets: the client's answer to a server
// request (an elicitation accepted with a password) is stored with a
// placeholder, and replay matches the client giving the real answer again.
func TestRecord_RedactsClientAnswerSecrets(t *testing.T) {
	parallel(t)
	ctx := testCtx(t)
	db := filepath.Join(t.TempDir(), "c.db")
	dumpOnFailure(t, db)
	const password = "elicit-pw-0001"
	client := func() *mcp.Client {
		return mcp.NewClient(&mcp.Implementation{Name: "mcpvcr-test", Version: "1.0.0"}, &mcp.ClientOptions{
			ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "ann", "password": password}}, nil
			},
		})
	}
	var got []string
	script := func(ctx context.Context, cs *mcp.ClientSession) error {
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "elicit", Arguments: map[string]any{}})
		if err != nil {
			return err
		}
		got = append(got, toJSON(r.StructuredContent))
		return nil
	}
	recordScript(ctx, t, db, mcptest.V20251125, client(), script, mcptest.BuildServer(t))
	if export := mcpvcr(t, "", "export", "--cassette", db).stdout; strings.Contains(export, password) || !strings.Contains(export, `\"password\":\"REDACTED-`) {
		t.Fatalf("the export holds the elicited password, or no placeholder for it:\n%s", export)
	}
	var repErr syncBuffer
	rep := exec.Command(mcpvcrBin, "replay", "--stdio", "--cassette", db)
	rep.Stderr = &repErr
	cs, err := client().Connect(ctx, &mcp.CommandTransport{Command: rep}, &mcp.ClientSessionOptions{ProtocolVersion: mcptest.V20251125})
	if err != nil {
		t.Fatalf("connect to replay: %v\n%s", err, repErr.String())
	}
	if err := script(ctx, cs); err != nil {
		t.Errorf("replayed elicit: %v\n%s", err, repErr.String())
	}
	cs.Close()
	if code := rep.ProcessState.ExitCode(); code != 0 || !strings.Contains(repErr.String(), " 0 unmatched") {
		t.Errorf("mcpvcr replay exited %d; want 0 and no unmatched frames:\n%s", code, repErr.String())
	}
	if len(got) != 2 || !strings.Contains(got[0], password) || strings.Contains(got[1], password) {
		t.Errorf("live and replayed elicit results %v; want the live one with the password, the replayed one with its placeholder", got)
	}
}
