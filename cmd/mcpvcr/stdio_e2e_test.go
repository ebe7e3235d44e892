package main

import (
	"bufio"
	"bytes"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/internal/mcptest"
)

// TestStdio_GoSDK records the Go SDK test server through mcpvcr record,
// driven by the Go SDK client, for every revision the SDK speaks, then
// points the same client at mcpvcr replay --stdio and requires the same
// results.
func TestStdio_GoSDK(t *testing.T) {
	parallel(t)
	server := mcptest.BuildServer(t)
	for _, v := range mcptest.Versions {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			ctx := testCtx(t)
			db := filepath.Join(t.TempDir(), "c.db")
			var recErr bytes.Buffer
			rec := exec.Command(mcpvcrBin, "record", "--cassette", db, "--name", v, "--", server)
			rec.Stderr = &recErr
			live := mcptest.Run(ctx, t, &mcp.CommandTransport{Command: rec}, v)
			if code := rec.ProcessState.ExitCode(); code != 0 {
				t.Fatalf("mcpvcr record exited %d; stderr:\n%s", code, recErr.String())
			}

			var repErr bytes.Buffer
			rep := exec.Command(mcpvcrBin, "replay", "--stdio", "--cassette", db)
			rep.Stderr = &repErr
			replayed := mcptest.Run(ctx, t, &mcp.CommandTransport{Command: rep}, v)
			if diff := cmp.Diff(live, replayed); diff != "" {
				t.Errorf("replayed transcript differs from the live one (-live +replay):\n%s\nreplay stderr:\n%s", diff, repErr.String())
			}
			if code := rep.ProcessState.ExitCode(); code != 0 || !strings.Contains(repErr.String(), " 0 unmatched") {
				t.Errorf("mcpvcr replay exited %d; want 0 and no unmatched frames; stderr:\n%s", code, repErr.String())
			}

			ls := mcpvcr(t, "", "ls", "--cassette", db)
			if ls.code != 0 || !strings.Contains(ls.stdout, v) {
				t.Errorf("mcpvcr ls = %d %q; want the session with revision %s", ls.code, ls.stdout, v)
			}
		})
	}
}

// lineClient talks newline-delimited JSON-RPC to a command by hand, for
// frames the SDK client does not send (batches, odd ids).
type lineClient struct {
	tb     testing.TB
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	stderr *syncBuffer
}

func startLineClient(tb testing.TB, args ...string) *lineClient {
	tb.Helper()
	c := &lineClient{tb: tb, cmd: exec.Command(mcpvcrBin, args...)}
	var out io.ReadCloser
	c.in, out, c.stderr = startPiped(tb, c.cmd)
	c.out = bufio.NewReader(out)
	return c
}

// call sends one line and returns the next line the server writes.
func (c *lineClient) call(line string) string {
	c.tb.Helper()
	c.send(line)
	got, err := c.out.ReadString('\n')
	if err != nil {
		c.tb.Fatalf("read the answer to %s: %v\n%s", line, err, c.stderr)
	}
	return got
}

func (c *lineClient) send(line string) {
	c.tb.Helper()
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		c.tb.Fatalf("send %s: %v", line, err)
	}
}

// close closes stdin and returns the exit code.
func (c *lineClient) close() int {
	c.tb.Helper()
	c.in.Close()
	_, _ = io.Copy(io.Discard, c.out)
	if err := c.cmd.Wait(); err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		c.tb.Fatal(err)
	}
	return 0
}

// TestStdio_Batch sends a raw 2025-03-26 JSON-RPC batch to the Go SDK
// server through mcpvcr record, then the same batch with other ids to
// mcpvcr replay: the replayed answer is the recorded array with the new
// ids.
func TestStdio_Batch(t *testing.T) {
	parallel(t)
	server := mcptest.BuildServer(t)
	db := filepath.Join(t.TempDir(), "c.db")
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"batch","version":"1"}}}`
	initialized := `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	batch := `[{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"one"}}},{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}]`

	rec := startLineClient(t, "record", "--cassette", db, "--", server)
	rec.call(init)
	rec.send(initialized)
	liveAnswer := rec.call(batch)
	if code := rec.close(); code != 0 {
		t.Fatalf("record exited %d:\n%s", code, rec.stderr)
	}
	live := jsonrpc.Parse([]byte(liveAnswer))
	if live.Kind != jsonrpc.KindBatch || len(live.Members) != 2 {
		t.Fatalf("live answer = %s; want a batch of two responses", liveAnswer)
	}
	show := mcpvcr(t, "", "show", "1", "--cassette", db)
	if strings.Count(show.stdout, "batch(2)") != 2 {
		t.Errorf("show lacks the batch and its answer:\n%s", show.stdout)
	}

	rep := startLineClient(t, "replay", "--stdio", "--cassette", db)
	rep.call(strings.Replace(init, `"id":1`, `"id":"i"`, 1))
	rep.send(initialized)
	renumbered := strings.NewReplacer(`"id":2`, `"id":"b"`, `"id":3`, `"id":"a"`).Replace(batch)
	got := rep.call(renumbered)
	want := strings.NewReplacer(`"id":2,`, `"id":"b",`, `"id":3,`, `"id":"a",`).Replace(liveAnswer)
	if got != want {
		t.Errorf("replayed batch answer:\n got %s\nwant %s", got, want)
	}
	if code := rep.close(); code != 0 {
		t.Errorf("replay exited %d:\n%s", code, rep.stderr)
	}
}
