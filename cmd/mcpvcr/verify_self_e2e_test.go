package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
)

// selfRuns is how often a fresh recording is verified against the server
// it was recorded from.
const selfRuns = 3

// tsSessionScript is the TypeScript SDK client of the verify tests.
var tsSessionScript = filepath.Join("..", "..", "internal", "mcptest", "testdata", "tsclient", "session.mjs")

// selfClient is a client that records one session: run runs it against
// target (an MCP URL, or over stdio the server command line, which is
// mcpvcr record in front of the server).
type selfClient struct {
	name string
	run  func(t *testing.T, stdio bool, target ...string)
}

// selfClients are the clients of the verify-against-itself tests:
// Inspector's CLI with one method each run, and the TypeScript SDK's
// client, closing at once and after 1 s, well after server-everything has
// asked for the roots (350 ms after initialized) and logged that it got
// them.
func selfClients(t *testing.T) []selfClient {
	cli := mcptest.InspectorCLI(t)
	node := mcptest.Everything(t)[0]
	inspector := func(method ...string) func(*testing.T, bool, ...string) {
		return func(t *testing.T, stdio bool, target ...string) {
			args := append(slices.Clone(cli[1:]), "--protocol-era", "legacy", "--connect-timeout", "10000")
			if stdio {
				args = append(args, "--transport", "stdio")
			} else {
				args = append(args, "--transport", "http")
			}
			args = append(append(args, method...), target...)
			cmd := exec.CommandContext(testCtx(t), cli[0], args...)
			cmd.Env = append(os.Environ(), "MCP_CATALOG_PATH="+filepath.Join(t.TempDir(), "mcp.json"))
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("Inspector CLI %v: %v\n%s", args, err, out)
			}
		}
	}
	ts := func(lingerMS int) func(*testing.T, bool, ...string) {
		return func(t *testing.T, stdio bool, target ...string) {
			mode := "http"
			if stdio {
				mode = "stdio"
			}
			cmd := exec.CommandContext(testCtx(t), node, append([]string{tsSessionScript, mode}, target...)...)
			cmd.Env = append(os.Environ(), "LINGER_MS="+strconv.Itoa(lingerMS))
			var stdout, stderr syncBuffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("TypeScript client: %v\n%s", err, stderr.String())
			}
			t.Logf("TypeScript client saw %s", stdout.String())
		}
	}
	return []selfClient{
		{"InspectorToolsList", inspector("--method", "tools/list")},
		{"InspectorEcho", inspector("--tool-arg", "message=hi", "--method", "tools/call", "--tool-name", "echo")},
		{"TSClient", ts(0)},
		{"TSClientLinger", ts(1000)},
	}
}

// recordSelfHTTP records one session of c against the Streamable HTTP
// server at upstream through mcpvcr record, into a new cassette it
// returns.
func recordSelfHTTP(t *testing.T, c selfClient, upstream string) string {
	t.Helper()
	db := filepath.Join(t.TempDir(), "c.db")
	rec := startServing(t, "record", "--cassette", db, "--upstream", upstream, "--listen", "127.0.0.1:0")
	c.run(t, false, rec.URL)
	if code := rec.Stop(); code != 0 {
		t.Fatalf("mcpvcr record exited %d:\n%s", code, rec.stderr)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("recording:\n%s", mcpvcr(t, "", "show", "1", "--cassette", db).stdout)
		}
	})
	return db
}

// verifySelf verifies session 1 of db selfRuns times with target (verify
// arguments after the session), each run to exit 0 with no difference.
func verifySelf(t *testing.T, db string, target ...string) {
	t.Helper()
	for i := range selfRuns {
		r := verifyJSON(t, exitOK, append([]string{"verify", "1", "--cassette", db}, target...)...)
		if d := cmp.Diff([]found(nil), differences(r)); d != "" {
			t.Errorf("run %d (-want +got):\n%s", i+1, d)
		}
	}
}

// TestVerify_SelfHTTP records Inspector's CLI and the TypeScript SDK's
// client against server-everything over Streamable HTTP, and verifies
// each recording against the same running server, which must show no
// difference, run after run: the GET stream opens after the POST of
// notifications/initialized has ended, as it did when recorded (opened
// earlier, it gets the tools/list_changed notifications the recorded
// client never saw), and the run lasts as long as the recorded session
// did (ended at the last answer, it misses the server's roots/list and
// the log message after it).
func TestVerify_SelfHTTP(t *testing.T) {
	parallel(t)
	for _, c := range selfClients(t) {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			server := mcptest.EverythingHTTP(t, mcptest.StreamableHTTP)
			db := recordSelfHTTP(t, c, server)
			verifySelf(t, db, "--upstream", server)
		})
	}
}

// TestVerify_SelfStdio is TestVerify_SelfHTTP over stdio: the server
// command recorded and the one verified are the same.
func TestVerify_SelfStdio(t *testing.T) {
	parallel(t)
	server := mcptest.Everything(t)
	for _, c := range selfClients(t) {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			db := filepath.Join(t.TempDir(), "c.db")
			c.run(t, true, append([]string{mcpvcrBin, "record", "--cassette", db, "--"}, server...)...)
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("recording:\n%s", mcpvcr(t, "", "show", "1", "--cassette", db).stdout)
				}
			})
			verifySelf(t, db, append([]string{"--"}, server...)...)
		})
	}
}

// rootless puts a proxy in front of the Streamable HTTP server at
// upstream that hides the client's roots capability from it, and returns
// the proxy's MCP URL: seen through it, server-everything no longer asks
// for the roots nor logs that it got them.
func rootless(t *testing.T, upstream string) string {
	t.Helper()
	u, err := url.Parse(upstream)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: u.Scheme, Host: u.Host})
	rp.FlushInterval = -1
	rp.Transport = baseTransport.Clone()
	director := rp.Director
	rp.Director = func(r *http.Request) {
		director(r)
		if r.Body == nil {
			return
		}
		b, err := io.ReadAll(r.Body)
		r.Body.Close()
		if err != nil {
			t.Errorf("rootless proxy: read the request: %v", err)
		}
		b = bytes.ReplaceAll(b, []byte(`"roots":{`), []byte(`"rootz":{`))
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
		r.Header.Set("Content-Length", strconv.Itoa(len(b)))
	}
	srv := httptest.NewServer(rp)
	t.Cleanup(srv.Close)
	return srv.URL + u.Path
}

// TestVerify_SelfChanged is TestVerify_SelfHTTP against a server that
// really changed: one that stopped asking for the roots, or started to.
// Waiting for what the recording had, and no longer than the recorded
// session lasted, must not hide it.
func TestVerify_SelfChanged(t *testing.T) {
	parallel(t)
	var ts selfClient
	for _, c := range selfClients(t) {
		if c.name == "TSClientLinger" {
			ts = c
		}
	}
	// The tool that lists the roots is offered only to a client with
	// roots; the log message follows the client's answer to roots/list,
	// which a recording without it does not hold (verify answers with an
	// error, and the server logs nothing).
	tool := "tools/list (seq 5) result.tools[name=get-roots-list]"
	server := "requests and notifications the server sent on its own "
	for _, tt := range []struct {
		name           string
		recordRootless bool
		want           []string
	}{
		{"Removed", false, []string{
			tool + " removed",
			server + `notifications["notifications/message"] removed`,
			server + `requests["roots/list"] removed`,
		}},
		{"Added", true, []string{
			tool + " added",
			server + `requests["roots/list"] added`,
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			everything := mcptest.EverythingHTTP(t, mcptest.StreamableHTTP)
			recorded, verified := everything, rootless(t, everything)
			if tt.recordRootless {
				recorded, verified = verified, recorded
			}
			db := recordSelfHTTP(t, ts, recorded)
			r := verifyJSON(t, exitDiffer, "verify", "1", "--cassette", db, "--upstream", verified)
			var got []string
			for _, f := range differences(r) {
				got = append(got, fmt.Sprintf("%s %s %s", f.Request, f.Path, f.Kind))
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("verify against the changed server (-want +got):\n%s", d)
			}
		})
	}
}
