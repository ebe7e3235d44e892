package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
)

// exportedFrame is what the oversize tests read of an exported frame.
type exportedFrame struct {
	Type, Dir, Raw, RawB64 string
	Seq, Oversize          int64
}

// exportFrames exports db and returns its frames.
func exportFrames(tb testing.TB, db string) []exportedFrame {
	tb.Helper()
	r := mcpvcr(tb, "", "export", "--cassette", db)
	if r.code != 0 {
		tb.Fatalf("mcpvcr export = %d; stderr:\n%s", r.code, r.stderr)
	}
	var fs []exportedFrame
	for line := range strings.Lines(r.stdout) {
		var f exportedFrame
		if err := json.Unmarshal([]byte(line), &f); err != nil {
			tb.Fatalf("export line %.200q: %v", line, err)
		}
		if f.Type == "frame" {
			fs = append(fs, f)
		}
	}
	return fs
}

// echoBig calls the echo tool with text of n bytes and fails tb unless the
// answer carries it whole.
func echoBig(tb testing.TB, cs *mcp.ClientSession, n int) {
	tb.Helper()
	text := strings.Repeat("0123456789abcdef", n/16)
	res, err := cs.CallTool(testCtx(tb), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": text}})
	if err != nil {
		tb.Fatalf("echo of %d bytes: %v", len(text), err)
	}
	if len(res.Content) != 1 {
		tb.Fatalf("echo of %d bytes: %d contents", len(text), len(res.Content))
	}
	if got, ok := res.Content[0].(*mcp.TextContent); !ok || got.Text != text {
		tb.Fatalf("echo of %d bytes came back changed (forwarding must be whole)", len(text))
	}
}

// checkOversize checks the recording of a session that echoed 1 MiB
// under a 64 KiB limit: the request and the answer are stored cut to the
// limit with their true length, every other frame whole; check passes
// and show marks them.
func checkOversize(t *testing.T, db string) {
	t.Helper()
	const limit = 64 << 10
	var big []exportedFrame
	for _, f := range exportFrames(t, db) {
		switch {
		case f.Oversize == 0 && len(f.Raw)+len(f.RawB64) > limit:
			t.Errorf("frame %d holds %d bytes with no oversize flag; want at most %d", f.Seq, len(f.Raw), limit)
		case f.Oversize != 0:
			if len(f.Raw) != limit || f.Oversize <= 1<<20 {
				t.Errorf("frame %d (%s): %d bytes stored, oversize %d; want %d stored of more than 1 MiB", f.Seq, f.Dir, len(f.Raw), f.Oversize, limit)
			}
			big = append(big, f)
		}
	}
	if len(big) != 2 || big[0].Dir != "c2s" || big[1].Dir != "s2c" {
		t.Errorf("oversize frames %+v; want the echo request and its answer", big)
	}
	if r := mcpvcr(t, "", "check", db); r.code != 0 {
		t.Errorf("mcpvcr check = %d; want 0\n%s%s", r.code, r.stdout, r.stderr)
	}
	show := mcpvcr(t, "", "show", "1", "--cassette", db)
	if show.code != 0 || strings.Count(show.stdout, "oversize=") != 2 || !strings.Contains(show.stdout, fmt.Sprintf("(stored %d)", limit)) {
		t.Errorf("mcpvcr show = %d; want the two oversize frames marked:\n%s%s", show.code, show.stdout, show.stderr)
	}
}

// TestRecord_MaxFrameStdio records, under --max-frame 64KiB, a Go SDK
// client echoing 1 MiB through the Go SDK server over stdio: the line is
// forwarded whole both ways, stored cut with its length, and the session
// goes on (a small echo after it) to exit 0.
func TestRecord_MaxFrameStdio(t *testing.T) {
	parallel(t)
	server := mcptest.BuildServer(t)
	ctx := testCtx(t)
	db := filepath.Join(t.TempDir(), "c.db")
	var stderr bytes.Buffer
	rec := exec.Command(mcpvcrBin, "record", "--cassette", db, "--max-frame", "64KiB", "--", server)
	rec.Stderr = &stderr
	cs, err := mcptest.NewClient().Connect(ctx, &mcp.CommandTransport{Command: rec}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	echoBig(t, cs, 1<<20+64)
	echoBig(t, cs, 64)
	cs.Close()
	if code := rec.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("mcpvcr record exited %d; want the server's 0; stderr:\n%s", code, stderr.String())
	}
	checkOversize(t, db)
}

// TestRecord_MaxFrameHTTP is TestRecord_MaxFrameStdio over Streamable
// HTTP, with SSE and with JSON answers: a request body, an answer body
// and an SSE event longer than the limit.
func TestRecord_MaxFrameHTTP(t *testing.T) {
	parallel(t)
	for _, m := range []struct {
		name  string
		flags []string
	}{{"SSE", nil}, {"JSON", []string{"-json"}}} {
		t.Run(m.name, func(t *testing.T) {
			ctx := testCtx(t)
			upstream := mcptest.StartServer(t, append([]string{"-transport", "http"}, m.flags...)...)
			db := filepath.Join(t.TempDir(), "c.db")
			s := startServing(t, "record", "--cassette", db, "--upstream", upstream, "--listen", "127.0.0.1:0", "--max-frame", "65536")
			cs, err := mcptest.NewClient().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.URL}, nil)
			if err != nil {
				t.Fatal(err)
			}
			echoBig(t, cs, 1<<20+64)
			echoBig(t, cs, 64)
			cs.Close()
			if code := s.Stop(); code != 0 {
				t.Fatalf("mcpvcr record exited %d; stderr:\n%s", code, s.stderr)
			}
			checkOversize(t, db)
		})
	}
}

// TestRecord_CutRequestBody sends mcpvcr record a POST whose body stops
// short of its Content-Length, then half-closes the connection: the
// proxy must not make up an answer (Go's server would send 200 with an
// empty body for a handler that writes nothing) but close the connection,
// and record the stream as ended by the client, with the bytes that
// arrived (their first --max-frame bytes when more came: such a body is
// being forwarded when it is cut).
func TestRecord_CutRequestBody(t *testing.T) {
	parallel(t)
	upstream := mcptest.StartServer(t, "-transport", "http")
	head := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",`
	for _, tt := range []struct {
		name     string
		sent     string
		maxFrame string
	}{
		{"Small", head, "64MiB"},
		{"OverMaxFrame", head + `"pad":"` + strings.Repeat("x", 4000), "1KiB"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "c.db")
			s := startServing(t, "record", "--cassette", db, "--upstream", upstream, "--listen", "127.0.0.1:0", "--max-frame", tt.maxFrame)
			u, err := url.Parse(s.URL)
			if err != nil {
				t.Fatal(err)
			}
			conn, err := net.Dial("tcp", u.Host)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n%s",
				u.RequestURI(), u.Host, len(tt.sent)+100, tt.sent)
			if err := conn.(*net.TCPConn).CloseWrite(); err != nil {
				t.Fatal(err)
			}
			// A deadline bounds a proxy that neither answers nor closes.
			_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
			got, err := io.ReadAll(conn)
			if err != nil {
				t.Fatalf("reading the answer to a cut body: %v (want the connection closed)", err)
			}
			if len(got) != 0 {
				t.Errorf("the proxy answered a cut request body with %q; want the connection closed without an answer", got)
			}
			if code := s.Stop(); code != 0 {
				t.Fatalf("mcpvcr record exited %d; stderr:\n%s", code, s.stderr)
			}
			r := mcpvcr(t, "", "export", "--cassette", db)
			var ends, raws []string
			for line := range strings.Lines(r.stdout) {
				var rec struct{ Type, End, Raw string }
				_ = json.Unmarshal([]byte(line), &rec)
				switch rec.Type {
				case "stream":
					ends = append(ends, rec.End)
				case "frame":
					raws = append(raws, rec.Raw)
				}
			}
			want := tt.sent[:min(len(tt.sent), 1024)]
			if fmt.Sprint(ends) != "[client-aborted]" || len(raws) != 1 || raws[0] != want {
				t.Errorf("recorded streams ending %v with frames %.200q; want one client-aborted stream with the %d bytes that arrived\n%.2000s", ends, raws, len(want), r.stdout)
			}
			if !strings.Contains(s.stderr.String(), "cut its request body short") {
				t.Errorf("stderr does not say the client cut its body:\n%s", s.stderr)
			}
		})
	}
}

// TestListen_IdleTimeout: a keep-alive connection left idle after one
// request is closed by mcpvcr record and mcpvcr replay (--idle-timeout,
// short here), rather than held for good.
func TestListen_IdleTimeout(t *testing.T) {
	parallel(t)
	upstream := mcptest.StartServer(t, "-transport", "http")
	cassette := filepath.Join("..", "..", "cassettes", "gosdk-http-2025-06-18.jsonl")
	for _, tt := range []struct {
		name string
		args []string
	}{
		{"Record", []string{"record", "--cassette", filepath.Join(t.TempDir(), "c.db"), "--upstream", upstream}},
		{"Replay", []string{"replay", "--cassette", cassette}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := startServing(t, append(tt.args, "--listen", "127.0.0.1:0", "--idle-timeout", "100ms")...)
			u, err := url.Parse(s.URL)
			if err != nil {
				t.Fatal(err)
			}
			conn, err := net.Dial("tcp", u.Host)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			// A DELETE: an exchange that ends (a GET would open a stream).
			fmt.Fprintf(conn, "DELETE %s HTTP/1.1\r\nHost: %s\r\n\r\n", u.RequestURI(), u.Host)
			// The deadline bounds a server that never closes the connection.
			_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
			got, err := io.ReadAll(conn)
			if err != nil {
				t.Fatalf("after an answer (%.80q) the idle connection was not closed: %v", got, err)
			}
			if !bytes.HasPrefix(got, []byte("HTTP/1.1 ")) {
				t.Errorf("answer %q; want an HTTP answer, then the idle connection closed", got)
			}
		})
	}
}

// TestReliability_DiskFullFirstBatch records onto a 2 MB tmpfs a server
// whose second line alone (3 MB) fills the disk, right after its first:
// both land in the writer's first batch. The session and its first frame
// are committed at once, so the cassette keeps them (before, the first
// transaction failed whole and the cassette held no session at all,
// although the error said what was recorded before the failure is kept).
// The server is a shell: the fault needs exact sizes, not a protocol.
func TestReliability_DiskFullFirstBatch(t *testing.T) {
	parallel(t)
	mnt := mountTmpfs(t, "2m")
	db := filepath.Join(mnt, "full.db")
	first := `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"first"}}`
	script := fmt.Sprintf(`printf '%%s\n' '%s'; head -c 3000000 /dev/zero | tr '\0' x; echo`, first)
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(mcpvcrBin, "record", "--cassette", db, "--", "sh", "-c", script)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	_ = cmd.Run()
	if got, want := stdout.Len(), len(first)+1+3000000+1; got != want {
		t.Errorf("the client received %d bytes; want all %d", got, want)
	}
	if got, want := cmd.ProcessState.ExitCode(), exitFailure; got != want {
		t.Errorf("mcpvcr record on a full disk exited %d; want %d\n%s", got, want, stderr.String())
	}
	if r := mcpvcr(t, "", "check", db); r.code != 0 {
		t.Fatalf("mcpvcr check on the full disk = %d; want 0\n%s%s", r.code, r.stdout, r.stderr)
	}
	ls := mcpvcr(t, "", "ls", "--cassette", db)
	fs := exportFrames(t, db)
	if ls.code != 0 || len(fs) != 1 || fs[0].Raw != first+"\n" {
		t.Errorf("the cassette holds frames %+v (ls: %d %q); want the session and its first line, committed at once\n%s", fs, ls.code, ls.stdout+ls.stderr, stderr.String())
	}
}

// TestRecord_ForwardsWhileCassetteLocked: another process holds the
// cassette's write lock (as a busy recorder sharing it does, between its
// commits, only longer) while a Go SDK client initializes and calls a tool
// through mcpvcr record: forwarding does not wait for the cassette. Once
// the lock is free, the session is recorded whole.
func TestRecord_ForwardsWhileCassetteLocked(t *testing.T) {
	parallel(t)
	server := mcptest.BuildServer(t)
	locker := goBuild(t, "github.com/mcpvcr/mcpvcr/internal/mcptest/locker")
	ctx := testCtx(t)
	db := filepath.Join(t.TempDir(), "c.db")
	lock := exec.Command(locker, db)
	release, err := lock.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := lock.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := lock.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lock.Process.Kill(); lock.Wait() })
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "locked\n" {
		t.Fatalf("locker said %q, %v; want locked", line, err)
	}

	var stderr bytes.Buffer
	rec := exec.Command(mcpvcrBin, "record", "--cassette", db, "--", server)
	rec.Stderr = &stderr
	cs, err := mcptest.NewClient().Connect(ctx, &mcp.CommandTransport{Command: rec}, nil)
	if err != nil {
		t.Fatalf("connect while the cassette is locked: %v\n%s", err, stderr.String())
	}
	echoBig(t, cs, 64)
	release.Close() // the lock is free once the empty import is refused
	if err := lock.Wait(); err != nil {
		t.Fatalf("locker: %v", err)
	}
	cs.Close()
	if code := rec.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("mcpvcr record exited %d; stderr:\n%s", code, stderr.String())
	}
	var methods []string
	for _, f := range exportFrames(t, db) {
		var m struct{ Method string }
		_ = json.Unmarshal([]byte(f.Raw), &m)
		if f.Dir == "c2s" && m.Method != "" {
			methods = append(methods, m.Method)
		}
	}
	if len(methods) < 2 || (methods[0] != "initialize" && methods[0] != "server/discover") || methods[len(methods)-1] != "tools/call" {
		t.Errorf("recorded client methods %v; want the handshake first and the tools/call last", methods)
	}
}
