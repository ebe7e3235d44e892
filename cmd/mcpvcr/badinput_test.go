package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/internal/mcptest"
	"github.com/mcpvcr/mcpvcr/store"
)

// TestRecord_StdioBytesExact records through `cat`, a stand-in server
// that echoes its input: stdout must be exactly the input (nothing of
// mcpvcr's own reaches it), and the cassette must hold every line, the
// malformed ones flagged and a 16 MB one whole.
func TestRecord_StdioBytesExact(t *testing.T) {
	parallel(t)
	db := filepath.Join(t.TempDir(), "c.db")
	big := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + strings.Repeat("x", 16<<20) + `"}}}`
	in := `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n" +
		"this is not json\n" +
		"\n" +
		big + "\r\n" +
		`[{"jsonrpc":"2.0","id":3,"method":"a"},{"jsonrpc":"2.0","method":"b"}]` + "\n" +
		`{"jsonrpc":"2.0","id":4,"method":"no newline at the end"}`
	res := mcpvcr(t, in, "record", "--cassette", db, "--", "cat")
	if res.code != 0 {
		t.Fatalf("record exited %d: %s", res.code, res.stderr)
	}
	if res.stdout != in {
		t.Fatalf("stdout differs from what the server wrote: got %d bytes, want %d", len(res.stdout), len(in))
	}
	show := mcpvcr(t, "", "show", "1", "--cassette", db)
	if show.code != 0 {
		t.Fatalf("show exited %d: %s", show.code, show.stderr)
	}
	for _, want := range []string{"malformed", "batch(2)", "no-newline", "16777"} {
		if !strings.Contains(show.stdout, want) {
			t.Errorf("show output lacks %q:\n%s", want, head(show.stdout, 30))
		}
	}
	// The export holds the exact bytes: re-import and compare the stream.
	exp := mcpvcr(t, "", "export", "1", "--cassette", db)
	if exp.code != 0 {
		t.Fatalf("export exited %d: %s", exp.code, exp.stderr)
	}
	if !strings.Contains(exp.stdout, strings.Repeat("x", 1000)) {
		t.Errorf("export lacks the 16 MB frame's bytes")
	}
}

func head(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}

// TestRecord_ServerExitsMidSession: the server reads one line and exits 7.
// mcpvcr exits 7 too, and keeps what was recorded.
func TestRecord_ServerExitsMidSession(t *testing.T) {
	parallel(t)
	db := filepath.Join(t.TempDir(), "c.db")
	in := `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n" + `{"jsonrpc":"2.0","id":2,"method":"ping"}` + "\n"
	res := mcpvcr(t, in, "record", "--cassette", db, "--", "sh", "-c", `read line; echo "$line"; exit 7`)
	if res.code != 7 {
		t.Fatalf("record exited %d; want the server's 7\n%s", res.code, res.stderr)
	}
	if !strings.Contains(res.stderr, "exited with code 7") {
		t.Errorf("stderr does not say the server exited with 7:\n%s", res.stderr)
	}
	ls := mcpvcr(t, "", "ls", "--cassette", db)
	if ls.code != 0 || !strings.Contains(ls.stdout, "stdio") {
		t.Errorf("ls = %d %q; want the session", ls.code, ls.stdout)
	}
	show := mcpvcr(t, "", "show", "1", "--cassette", db)
	if got := strings.Count(show.stdout, " ping "); got < 1 {
		t.Errorf("show has %d ping frames; want the recorded ones:\n%s", got, show.stdout)
	}
}

// TestRecord_ClientClosesEarly: the client sends initialize, reads the
// answer and closes stdin before the handshake is done; the real server
// exits on EOF, and mcpvcr with it, keeping the session.
func TestRecord_ClientClosesEarly(t *testing.T) {
	parallel(t)
	server := mcptest.BuildServer(t)
	db := filepath.Join(t.TempDir(), "c.db")
	cmd := exec.Command(mcpvcrBin, "record", "--cassette", db, "--", server)
	stdin, stdout, stderr := startPiped(t, cmd)
	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n"
	if _, err := stdin.Write([]byte(in)); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadBytes('\n')
	if err != nil {
		t.Fatalf("read the initialize result: %v", err)
	}
	if m := jsonrpc.Parse(line); m.Kind != jsonrpc.KindResult {
		t.Errorf("stdout = %q; want the initialize result", line)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("record: %v\n%s", err, stderr.String())
	}
	ls := mcpvcr(t, "", "ls", "--cassette", db)
	if !strings.Contains(ls.stdout, "2025-06-18") {
		t.Errorf("ls = %q; want the session at 2025-06-18", ls.stdout)
	}
}

// TestReplay_Unmatched: a request the recording lacks gets a JSON-RPC
// error naming the closest recorded frame, and replay exits 1.
func TestReplay_Unmatched(t *testing.T) {
	parallel(t)
	db := filepath.Join(t.TempDir(), "c.db")
	in := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}` + "\n"
	if res := mcpvcr(t, in, "record", "--cassette", db, "--", "sh", "-c", `read line; echo '{"jsonrpc":"2.0","id":1,"result":{}}'`); res.code != 0 {
		t.Fatalf("record exited %d: %s", res.code, res.stderr)
	}
	live := `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","arguments":{"text":"bye"}}}` + "\n"
	res := mcpvcr(t, live, "replay", "--stdio", "--cassette", db)
	if res.code != 1 {
		t.Errorf("replay exited %d; want 1", res.code)
	}
	m := jsonrpc.Parse([]byte(res.stdout))
	if m.Kind != jsonrpc.KindError || string(m.ID) != "9" || !strings.Contains(string(m.Error), "-32019") || !strings.Contains(string(m.Error), "closest") {
		t.Errorf("stdout = %s; want error -32019 for id 9 naming the closest frame", res.stdout)
	}
	for _, want := range []string{"1 unmatched", `"bye"`, `"hi"`} {
		if !strings.Contains(res.stderr, want) {
			t.Errorf("summary lacks %q:\n%s", want, res.stderr)
		}
	}
}

// TestCLI_BadInput: each mistake gets a clear message, a hint and the
// documented exit code.
func TestCLI_BadInput(t *testing.T) {
	parallel(t)
	dir := t.TempDir()
	zero := filepath.Join(dir, "zero.db")
	if err := os.WriteFile(zero, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty.db") // a cassette with no sessions
	db, err := store.Open(context.Background(), empty)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	text := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(text, []byte("hello, this is not a cassette\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(dir, "good.db")
	if res := mcpvcr(t, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n", "record", "--cassette", good, "--", "cat"); res.code != 0 {
		t.Fatalf("record: %d %s", res.code, res.stderr)
	}
	tests := []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"NoServerCommand", []string{"record", "--cassette", good}, 2, []string{"needs the server command", "try:"}},
		{"UnknownFlag", []string{"ls", "--nope"}, 2, []string{"nope", "try: mcpvcr ls --help"}},
		{"MissingCassette", []string{"ls", "--cassette", filepath.Join(dir, "missing.db")}, 3, []string{"does not exist", "try: record one first"}},
		{"ZeroByteFile", []string{"ls", "--cassette", zero}, 3, []string{"is empty (0 bytes)", "try: record into it"}},
		{"EmptyCassetteLs", []string{"ls", "--cassette", empty}, 0, []string{"holds no sessions"}},
		{"EmptyCassetteReplay", []string{"replay", "--stdio", "--cassette", empty}, 3, []string{"has no stdio sessions", "empty"}},
		{"StdioCassetteOverHTTP", []string{"replay", "--listen", "127.0.0.1:0", "--cassette", good}, 3, []string{"it holds 1 stdio session\n", "try: replay its stdio sessions with mcpvcr replay --stdio"}},
		{"HTTPCassetteOverStdio", []string{"replay", "--stdio", "--cassette", filepath.Join("..", "..", "cassettes", "multi-gosdk-http-json.jsonl")}, 3, []string{"it holds 8 http sessions\n", "try: serve them over HTTP: mcpvcr replay --listen 127.0.0.1:8080"}},
		{"NotACassette", []string{"ls", "--cassette", text}, 3, []string{"not", "cassette", "try:"}},
		{"NoSuchSession", []string{"show", "99", "--cassette", good}, 3, []string{"session 99", "try: mcpvcr ls"}},
		{"BadSessionNumber", []string{"show", "x", "--cassette", good}, 2, []string{`"x" is not a session number`}},
		{"UnwritableCassette", []string{"record", "--cassette", filepath.Join(dir, "no", "such", "dir", "c.db"), "--", "cat"}, 3, []string{"c.db", "try:"}},
		{"ServerDoesNotStart", []string{"record", "--cassette", filepath.Join(dir, "x.db"), "--", filepath.Join(dir, "no-such-server")}, 3, []string{"no-such-server", "try:"}},
		{"UpstreamUnreachable", []string{"record", "--cassette", filepath.Join(dir, "u.db"), "--upstream", "http://127.0.0.1:1/mcp", "--listen", "127.0.0.1:0"}, 3, []string{"not reachable", "try: start the server first"}},
		{"UpstreamNotHTTP", []string{"record", "--cassette", filepath.Join(dir, "u.db"), "--upstream", "ftp://x/mcp"}, 2, []string{"is not an http(s) URL"}},
		{"ReplayWrongTransport", []string{"replay", "1", "--listen", "127.0.0.1:0", "--cassette", good}, 3, []string{"recorded over stdio", "--stdio"}},
		{"ReplayNeedsMode", []string{"replay", "--cassette", good}, 2, []string{"--stdio or --listen"}},
		{"BadPace", []string{"replay", "--stdio", "--pace", "slowly", "--cassette", good}, 2, []string{"--pace"}},
		{"ImportNotJSONL", []string{"import", text, "--cassette", filepath.Join(dir, "imp.db")}, 3, []string{"nothing was imported"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := mcpvcr(t, "", tt.args...)
			if res.code != tt.code {
				t.Errorf("mcpvcr %v exited %d; want %d\nstderr: %s", tt.args, res.code, tt.code, res.stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(res.stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, res.stderr)
				}
			}
			if tt.code != 0 && res.stdout != "" {
				t.Errorf("stdout = %q; want nothing on failure", res.stdout)
			}
		})
	}
	// Nothing recorded was harmed by the failures above.
	if res := mcpvcr(t, "", "show", "1", "--cassette", good); res.code != 0 || !strings.Contains(res.stdout, "ping") {
		t.Errorf("good cassette after the failures: %d %s", res.code, res.stderr)
	}
}

// TestVerify_HeaderNeverEchoesAToken: a --header that is not "Name:
// value" is refused (exit 2) with its first word, never its value.
func TestVerify_HeaderNeverEchoesAToken(t *testing.T) {
	parallel(t)
	db := filepath.Join(t.TempDir(), "c.db")
	res := mcpvcr(t, "", "verify", "1", "--cassette", db, "--upstream", "http://127.0.0.1:1/mcp", "--header", "Bearer s3cr3t-t0ken")
	if res.code != 2 {
		t.Fatalf("exit %d; want 2 (usage)\n%s", res.code, res.stderr)
	}
	if strings.Contains(res.stderr, "s3cr3t") {
		t.Errorf("stderr shows the token:\n%s", res.stderr)
	}
	if !strings.Contains(res.stderr, `"Bearer"`) {
		t.Errorf("stderr does not name the header by its first word:\n%s", res.stderr)
	}
}

// TestNoSuchSession_SaidOnce: every command given a session the cassette
// lacks names the cassette and the session once, and points at ls.
func TestNoSuchSession_SaidOnce(t *testing.T) {
	parallel(t)
	db := filepath.Join(t.TempDir(), "c.db")
	if res := mcpvcr(t, "", "import", filepath.Join("..", "..", "cassettes", "gosdk-http-2025-11-25.jsonl"), "--cassette", db); res.code != 0 {
		t.Fatalf("import: %s", res.stderr)
	}
	for _, args := range [][]string{
		{"show", "9"}, {"export", "9"}, {"view", "9", "--no-open"}, {"diff", "1", "9"},
		{"replay", "9", "--listen", "127.0.0.1:0"}, {"verify", "9", "--upstream", "http://127.0.0.1:1/mcp"},
	} {
		res := mcpvcr(t, "", append(args, "--cassette", db)...)
		want := "mcpvcr: cassette " + db + ": session 9: not found\ntry: mcpvcr ls --cassette " + db + " to see the sessions\n"
		if res.code != exitFailure || res.stderr != want {
			t.Errorf("mcpvcr %s exited %d:\n%s\nwant exit 3 and:\n%s", strings.Join(args, " "), res.code, res.stderr, want)
		}
	}
}

// TestNothingRecordedLeavesNoFile: an import of an export of no sessions,
// an import of a file that is no export, and a record whose server
// command is not there neither fail for nothing nor leave a cassette.
func TestNothingRecordedLeavesNoFile(t *testing.T) {
	parallel(t)
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.jsonl")
	if err := os.WriteFile(empty, []byte(`{"type":"mcpvcr","version":1}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	junk := filepath.Join(dir, "junk.jsonl")
	if err := os.WriteFile(junk, []byte("junk\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"import", empty}, exitOK, "holds no sessions; nothing was imported"},
		{[]string{"import", junk}, exitFailure, "nothing was imported"},
		{[]string{"record", "--", filepath.Join(dir, "no-such-server")}, exitFailure, "no such file or directory"},
	} {
		db := filepath.Join(dir, "c.db")
		args := append([]string{tt.args[0], "--cassette", db}, tt.args[1:]...)
		res := mcpvcr(t, "", args...)
		if res.code != tt.code || !strings.Contains(res.stderr, tt.want) {
			t.Errorf("mcpvcr %s: exit %d\n%s\nwant exit %d and %q", strings.Join(tt.args, " "), res.code, res.stderr, tt.code, tt.want)
		}
		if m, _ := filepath.Glob(db + "*"); len(m) > 0 {
			t.Errorf("mcpvcr %s left %q behind", strings.Join(tt.args, " "), m)
		}
	}
}

// TestBadInput_UnknownFlag: a mistyped flag is echoed as typed (one dash
// or two, without its value) with the closest flag of its command suggested; one close to
// nothing gets no guess.
func TestBadInput_UnknownFlag(t *testing.T) {
	parallel(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"replay", "--listn", "127.0.0.1:0"}, "unknown flag --listn: did you mean --listen?\ntry: mcpvcr replay --listen …"},
		{[]string{"replay", "-listn", "x"}, "unknown flag -listn: did you mean --listen?\ntry: mcpvcr replay --listen …"},
		{[]string{"replay", "-listn=x"}, "unknown flag -listn: did you mean --listen?"},
		{[]string{"ls", "--casete", "x.db"}, "unknown flag --casete: did you mean --cassette?"},
		{[]string{"show", "--payloa", "1"}, "did you mean --payload?"},
		{[]string{"replay", "--zzzzzz"}, "unknown flag --zzzzzz\ntry: mcpvcr replay --help"},
	} {
		r := mcpvcr(t, "", tc.args...)
		if r.code != 2 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("mcpvcr %v exited %d:\n%s\nwant 2 and %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
}

// TestBadInput_ListenTakenLeavesNoCassette: record whose --listen address
// is taken exits 3 and leaves no new, empty cassette behind.
func TestBadInput_ListenTakenLeavesNoCassette(t *testing.T) {
	parallel(t)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusMethodNotAllowed) }))
	defer up.Close()
	db := filepath.Join(t.TempDir(), "new.db")
	r := mcpvcr(t, "", "record", "--cassette", db, "--upstream", up.URL+"/mcp", "--listen", taken.Addr().String())
	if r.code != 3 || !strings.Contains(r.stderr, "address already in use") {
		t.Errorf("record on a taken port exited %d:\n%s\nwant 3 and the port named", r.code, r.stderr)
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Errorf("record on a taken port left %s behind (%v)", db, err)
	}
}

// TestBadInput_DefaultListenTakenSaysWhy: record's default address taken
// (another record, or a replay started as the quick starts do) is named
// as such, not only as a taken port.
func TestBadInput_DefaultListenTakenSaysWhy(t *testing.T) {
	// Hold the address if it is free; taken already, it is taken either way.
	if ln, err := net.Listen("tcp", defaultListen); err == nil {
		defer ln.Close()
	} else if !errors.Is(err, syscall.EADDRINUSE) {
		t.Skipf("cannot listen on %s: %v", defaultListen, err)
	}
	_, err := listen(&env{stderr: io.Discard}, defaultListen)
	if err == nil || !strings.Contains(err.Error(), "record listens there by default, and the quick starts replay there too") {
		t.Errorf("listen on a taken %s: %v; want it named as record's default and the quick starts' replay address", defaultListen, err)
	}
}
