package main

import (
	"bytes"
	"context"
	"database/sql"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
	"github.com/mcpvcr/mcpvcr/store"
)

// These tests cover what "safe by default" promises about files and
// terminals (README, Reliability): an output is never the cassette, it is
// written whole or not at all, every file is 0600, a cassette that cannot
// be written is read read-only, and recorded control characters never
// reach the terminal raw.

// recordCat records one stdio session of `cat`, which echoes what the
// client sends, into db; the lines of in are the client's frames.
func recordCat(t *testing.T, db, in string, flags ...string) {
	t.Helper()
	args := append(append([]string{"record", "--cassette", db}, flags...), "--", "cat")
	if res := mcpvcr(t, in, args...); res.code != 0 {
		t.Fatalf("record exited %d: %s", res.code, res.stderr)
	}
}

const pingLine = `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n"

// TestExport_OutputIsNeverTheCassette: export -o naming the cassette, its
// -wal or -shm, or a link to it, is a usage error in every format, and
// leaves the cassette as it was.
func TestExport_OutputIsNeverTheCassette(t *testing.T) {
	parallel(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "c.db")
	recordCat(t, db, pingLine)
	before, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(db, filepath.Join(dir, "link.jsonl")); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"jsonl", "har", "html", "go-vcr"} {
		for _, out := range []string{db, "./c.db", "c.db-wal", "c.db-shm", "link.jsonl"} {
			cmd := exec.Command(mcpvcrBin, "export", "1", "--cassette", "c.db", "--format", format, "-o", out)
			cmd.Dir = dir
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			}
			if code != exitUsage || !strings.Contains(stderr.String(), "would overwrite the cassette") {
				t.Errorf("export --format %s -o %s exited %d; want %d and a refusal:\n%s", format, out, code, exitUsage, stderr.String())
			}
		}
	}
	after, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Errorf("the cassette changed: %d bytes before, %d after", len(before), len(after))
	}
	if res := mcpvcr(t, "", "check", db); res.code != 0 {
		t.Errorf("check after the refused exports exited %d:\n%s%s", res.code, res.stdout, res.stderr)
	}
}

// TestExport_FailedExportKeepsTheOldFile: an export that fails half-way
// (the cassette's frame pages are damaged) leaves the file it would have
// replaced as it was, and no temporary file behind.
func TestExport_FailedExportKeepsTheOldFile(t *testing.T) {
	parallel(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "c.db")
	var in strings.Builder
	for i := range 5 {
		in.WriteString(`{"jsonrpc":"2.0","id":` + string(rune('1'+i)) + `,"method":"m","params":{"x":"` + strings.Repeat("y", 200_000) + `"}}` + "\n")
	}
	recordCat(t, db, in.String())
	// Damage the middle of the file, where the big frames' overflow
	// pages are; the first pages (the schema, the sessions) stay whole.
	f, err := os.OpenFile(db, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := f.Stat()
	if _, err := f.WriteAt(bytes.Repeat([]byte{0xff}, 64<<10), fi.Size()/2); err != nil {
		t.Fatal(err)
	}
	f.Close()
	out := filepath.Join(dir, "out.jsonl")
	if err := os.WriteFile(out, []byte("the old export\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	res := mcpvcr(t, "", "export", "--cassette", db, "-o", out)
	if res.code != exitFailure {
		t.Fatalf("export of a damaged cassette exited %d; want %d:\n%s", res.code, exitFailure, res.stderr)
	}
	if b, _ := os.ReadFile(out); string(b) != "the old export\n" {
		t.Errorf("after the failed export %s holds %d bytes (%.40q); want the old export", out, len(b), b)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("a temporary file is left behind: %s", e.Name())
		}
	}
}

// TestFileModes records the Go SDK server over HTTP and requires the
// cassette, its -wal and -shm while the recorder runs, and every export
// to be 0600.
func TestFileModes(t *testing.T) {
	parallel(t)
	ctx := testCtx(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "c.db")
	upstream := mcptest.StartServer(t, "-transport", "http")
	rec := startServing(t, "record", "--cassette", db, "--upstream", upstream, "--listen", "127.0.0.1:0")
	cs, err := mcptest.NewClient().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: rec.URL}, nil)
	if err != nil {
		t.Fatalf("connect through the recorder: %v", err)
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	for _, p := range []string{db, db + "-wal", db + "-shm"} {
		requireMode(t, p, 0o600)
	}
	cs.Close()
	if code := rec.Stop(); code != 0 {
		t.Fatalf("record exited %d:\n%s", code, rec.stderr)
	}
	requireMode(t, db, 0o600)
	for _, format := range []string{"jsonl", "har", "html", "go-vcr"} {
		out := filepath.Join(dir, "out."+format)
		if res := mcpvcr(t, "", "export", "1", "--cassette", db, "--format", format, "-o", out); res.code != 0 {
			t.Fatalf("export --format %s exited %d: %s", format, res.code, res.stderr)
		}
		requireMode(t, out, 0o600)
	}
}

func requireMode(t *testing.T, path string, want fs.FileMode) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Errorf("stat: %v", err)
		return
	}
	if got := fi.Mode().Perm(); got != want {
		t.Errorf("mode of %s = %v; want %v", filepath.Base(path), got, want)
	}
}

// TestReadOnlyCassette runs the commands that only read against a
// cassette this process may not write: in a folder it may not write, and
// another user's 0644 file in a folder it may. As root (CI), mcpvcr runs
// as the user nobody, since permission bits do not stop root. Each
// command works, says once that it reads read-only, and leaves nothing
// beside the cassette.
func TestReadOnlyCassette(t *testing.T) {
	parallel(t)
	for _, tt := range []struct {
		name      string
		folder    fs.FileMode // of the cassette's folder
		asNonRoot fs.FileMode // the cassette's mode when not root
	}{
		{"ReadOnlyFolder", 0o755, 0o444},
		{"OtherUsersFile", 0o777, 0o444},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := sharedTempDir(t)
			db := filepath.Join(dir, "c.db")
			recordCat(t, db, pingLine)
			cred := asOtherUser(t)
			mode := fs.FileMode(0o644)
			if cred == nil {
				mode = tt.asNonRoot
			}
			if err := os.Chmod(db, mode); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(dir, tt.folder); err != nil {
				t.Fatal(err)
			}
			if cred == nil && tt.folder == 0o755 {
				os.Chmod(dir, 0o555)
				t.Cleanup(func() { os.Chmod(dir, 0o755) })
			}
			readOnlyCommands(t, cred, db)
			ents, _ := os.ReadDir(dir)
			if len(ents) != 1 {
				var names []string
				for _, e := range ents {
					names = append(names, e.Name())
				}
				t.Errorf("the folder holds %q; want only the cassette (a reader creates no -wal or -shm)", names)
			}
		})
	}
}

// readOnlyCommands runs ls, show, check, export and replay against db as
// cred, and requires each to work and to say once that it reads
// read-only.
func readOnlyCommands(t *testing.T, cred *syscall.Credential, db string) {
	t.Helper()
	for _, args := range [][]string{
		{"ls", db},
		{"show", "1", db},
		{"check", db},
		{"export", db},
		{"replay", "--stdio", "--cassette", db},
	} {
		res := runAs(t, cred, pingLine, args...)
		if res.code != 0 {
			t.Errorf("mcpvcr %s exited %d; want 0:\n%s", args[0], res.code, res.stderr)
			continue
		}
		if n := strings.Count(res.stderr, "reading it read-only"); n != 1 {
			t.Errorf("mcpvcr %s says %d times that it reads read-only; want once:\n%s", args[0], n, res.stderr)
		}
	}
}

// TestReadOnlyCassette_FullOrReadOnlyDisk reads a cassette on a full
// tmpfs, then on the same tmpfs mounted read-only. Mounting needs root
// (CAP_SYS_ADMIN); TestReadOnlyCassette covers the rest everywhere.
func TestReadOnlyCassette_FullOrReadOnlyDisk(t *testing.T) {
	parallel(t)
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root; TestReadOnlyCassette covers read-only files")
	}
	src := filepath.Join(t.TempDir(), "c.db")
	recordCat(t, src, pingLine)
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("mount a tmpfs: %v: %s (TestReadOnlyCassette covers read-only files)", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", dir).Run() })
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "c.db")
	if err := os.WriteFile(db, b, 0o600); err != nil {
		t.Fatal(err)
	}
	fill, err := os.Create(filepath.Join(dir, "fill"))
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := fill.Write(make([]byte, 4096)); err != nil {
			break // the disk is full
		}
	}
	fill.Close()
	t.Run("FullDisk", func(t *testing.T) { readOnlyCommands(t, nil, db) })
	for _, name := range []string{"fill", "c.db-wal", "c.db-shm"} {
		os.Remove(filepath.Join(dir, name))
	}
	if out, err := exec.Command("mount", "-o", "remount,ro", dir).CombinedOutput(); err != nil {
		t.Fatalf("remount read-only: %v: %s", err, out)
	}
	t.Run("ReadOnlyFileSystem", func(t *testing.T) { readOnlyCommands(t, nil, db) })
}

// sharedTempDir is a temporary folder, and a copy of the mcpvcr binary in
// reach, that another user can enter.
func sharedTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "mcpvcr-ro-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		os.Chmod(dir, 0o755)
		os.RemoveAll(dir)
	})
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// The binary's own folder is private to this test run.
	if err := os.Chmod(filepath.Dir(mcpvcrBin), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// asOtherUser returns the credential of the user nobody when the test
// runs as root, nil otherwise.
func asOtherUser(t *testing.T) *syscall.Credential {
	if os.Geteuid() != 0 {
		return nil
	}
	return &syscall.Credential{Uid: 65534, Gid: 65534}
}

// runAs runs the binary as cred (this user if nil) with stdin.
func runAs(t *testing.T, cred *syscall.Credential, stdin string, args ...string) result {
	t.Helper()
	cmd := exec.Command(mcpvcrBin, args...)
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Dir = os.TempDir()
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("run mcpvcr %v: %v", args, err)
		}
		code = ee.ExitCode()
	}
	return result{code, out.String(), errb.String()}
}

// TestCheck_MethodNotUTF8: a fresh recording whose method holds bytes
// that are not UTF-8 passes check: the index and the bytes agree.
func TestCheck_MethodNotUTF8(t *testing.T) {
	parallel(t)
	db := filepath.Join(t.TempDir(), "c.db")
	recordCat(t, db, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\xff\xfe\"}\n")
	res := mcpvcr(t, "", "check", db)
	if res.code != 0 || !strings.Contains(res.stdout, "result: ok") {
		t.Errorf("check exited %d; want 0 and result: ok:\n%s%s", res.code, res.stdout, res.stderr)
	}
}

// TestTerminalEscapes records control characters (an OSC title sequence
// in a tool name and a session name, a C1 CSI and DEL in arguments, a raw
// ESC in a malformed line and in the server's stderr) and requires every
// text output that shows them to escape them.
func TestTerminalEscapes(t *testing.T) {
	parallel(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "c.db")
	call := func(v string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"\u001b]0;pwned\u0007","arguments":{"v":"` + v + "\u009b2J\x7f\"}}}\n"
	}
	name := "evil\x1b]0;title\x07"
	if res := mcpvcr(t, call("a")+"\x1b[2Jnot json\n", "record", "--cassette", db, "--name", name, "--",
		"sh", "-c", `cat; printf 'oops\033[31m\n' >&2`); res.code != 0 {
		t.Fatalf("record exited %d: %s", res.code, res.stderr)
	}
	recordCat(t, db, call("b"), "--name", name)

	// A damaged index, so that check has something to say about an id.
	damaged := filepath.Join(dir, "damaged.db")
	recordCat(t, damaged, pingLine)
	sdb, err := sql.Open("sqlite3", damaged)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sdb.Exec(`UPDATE frames SET rpc_id = ? WHERE seq = 1`, "\"\x1b]0;x\x07\u009b\""); err != nil {
		t.Fatal(err)
	}
	sdb.Close()

	for _, tt := range []struct {
		args []string
		code int
	}{
		{[]string{"ls", db}, 0},
		{[]string{"show", "1", db}, 0},
		{[]string{"show", "1", "-v", db}, 0},
		{[]string{"diff", "1", "2", "--cassette", db}, exitDiffer},
		{[]string{"verify", "1", "--cassette", db, "--", "sh", "-c", `sed -u s/a/b/`}, exitDiffer},
		{[]string{"check", damaged}, exitDiffer},
		{[]string{"replay", "--stdio", "--cassette", db, "1"}, -1},
	} {
		res := mcpvcr(t, call("c"), tt.args...)
		if tt.code >= 0 && res.code != tt.code {
			t.Errorf("mcpvcr %s exited %d; want %d:\n%s", strings.Join(tt.args, " "), res.code, tt.code, res.stderr)
		}
		for stream, out := range map[string]string{"stdout": res.stdout, "stderr": res.stderr} {
			if tt.args[0] == "replay" && stream == "stdout" {
				continue // the protocol's own bytes, forwarded exactly
			}
			if i := unsafeAt(out); i >= 0 {
				t.Errorf("mcpvcr %s writes a raw control character to %s at %d: %q", strings.Join(tt.args, " "), stream, i, around(out, i))
			}
		}
	}
}

// unsafeAt returns where s holds a C0 control other than newline and tab,
// DEL, a C1 control or a byte that is not UTF-8; -1 when nowhere.
func unsafeAt(s string) int {
	for i, r := range s {
		if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || (r >= 0x80 && r <= 0x9f) || r == utf8.RuneError {
			return i
		}
	}
	return -1
}

func around(s string, i int) string {
	return s[max(0, i-40):min(len(s), i+40)]
}

// TestMessages_NameTheCassette: messages and hints name the cassette
// given as an argument, a damaged one gets the check hint, and record
// refuses to create a cassette named like an export.
func TestMessages_NameTheCassette(t *testing.T) {
	parallel(t)
	dir := t.TempDir()
	empty := filepath.Join(dir, "other.db")
	d, err := store.Open(context.Background(), empty)
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	if res := mcpvcr(t, "", "ls", empty); res.code != 0 || !strings.Contains(res.stderr, "cassette "+empty+" holds no sessions yet") {
		t.Errorf("ls %s = %d, %q; want the message to name %s", empty, res.code, res.stderr, empty)
	}

	dmg := filepath.Join(dir, "damaged.db")
	recordCat(t, dmg, pingLine)
	b, err := os.ReadFile(dmg)
	if err != nil {
		t.Fatal(err)
	}
	// The header page whole, the schema's pages gone.
	if err := os.WriteFile(dmg, append(b[:4096:4096], bytes.Repeat([]byte{0xa5}, 100)...), 0o600); err != nil {
		t.Fatal(err)
	}
	// The pages whole, the header's fields broken.
	header := filepath.Join(dir, "header.db")
	for i := 16; i < 100; i++ {
		b[i] = 0xff
	}
	if err := os.WriteFile(header, b, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{dmg, header} {
		for _, cmd := range []string{"ls", "export"} {
			res := mcpvcr(t, "", cmd, path)
			if res.code != exitFailure || !strings.Contains(res.stderr, "try: mcpvcr check "+path) {
				t.Errorf("%s of a damaged cassette = %d, %q; want %d and the hint mcpvcr check %s", cmd, res.code, res.stderr, exitFailure, path)
			}
		}
	}

	jsonl := filepath.Join(dir, "new.jsonl")
	res := mcpvcr(t, pingLine, "record", "--cassette", jsonl, "--", "cat")
	if res.code != exitUsage || !strings.Contains(res.stderr, "try: mcpvcr record --cassette "+filepath.Join(dir, "new.db")) {
		t.Errorf("record --cassette new.jsonl = %d, %q; want %d and a try: line naming new.db", res.code, res.stderr, exitUsage)
	}
	if _, err := os.Stat(jsonl); err == nil {
		t.Errorf("record --cassette new.jsonl created %s", jsonl)
	}
}
