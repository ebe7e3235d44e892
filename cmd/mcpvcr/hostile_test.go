package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/s2"
	_ "github.com/mattn/go-sqlite3"
)

// Cassettes from a stranger (issue #48): each command meets a hostile
// file with a clear error, fast, and leaves it as it was.

// runHostile runs mcpvcr with args, killed after 20 s, and reports how
// long it took.
func runHostile(t *testing.T, args ...string) (result, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, mcpvcrBin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("run mcpvcr %v: %v", args, err)
		}
		code = ee.ExitCode()
	}
	if ctx.Err() != nil {
		t.Errorf("mcpvcr %v did not end within 20 s", args)
	}
	return result{code, out.String(), errb.String()}, took
}

// sqlOn runs stmts on the SQLite file at path, behind mcpvcr's back.
func sqlOn(t *testing.T, path string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// contents reads what the file at path holds, with plain SQL.
func contents(t *testing.T, path string) string {
	t.Helper()
	db, err := sql.Open("sqlite3", path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var s string
	err = db.QueryRow(`SELECT (SELECT count(*) || '/' || coalesce(sum(length(raw)), 0) FROM frames) || ' ' ||
		(SELECT count(*) FROM frame_packs) || ' ' || (SELECT count(*) FROM streams) || ' ' ||
		(SELECT group_concat(name, ',') FROM (SELECT name FROM sqlite_schema ORDER BY name))`).Scan(&s)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestHostileSchema(t *testing.T) {
	parallel(t)
	slow := "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 200000000) SELECT max(x) FROM c"
	var triggers []string
	for _, table := range []string{"sessions", "streams", "frames", "frame_members", "frame_packs", "cache"} {
		for _, ev := range []string{"INSERT", "UPDATE", "DELETE"} {
			triggers = append(triggers, "CREATE TRIGGER evil_"+table+"_"+strings.ToLower(ev)+" AFTER "+ev+" ON "+table+
				" BEGIN DELETE FROM frames WHERE session_id = 1; UPDATE sessions SET name = 'renamed'; END")
		}
	}
	for _, tc := range []struct {
		name  string
		stmts []string
		names []string
	}{
		{"triggers", triggers, []string{"trigger evil_frames_insert on frames", "trigger evil_sessions_update on sessions"}},
		{"cache trigger", []string{"CREATE TRIGGER slow AFTER INSERT ON cache BEGIN SELECT (" + slow + "); END"},
			[]string{"trigger slow on cache"}},
		{"view sessions", []string{"PRAGMA foreign_keys = OFF", "DROP INDEX sessions_transport", "DROP INDEX sessions_labelled",
			"ALTER TABLE sessions RENAME TO real_sessions",
			"CREATE VIEW sessions AS SELECT real_sessions.* FROM real_sessions, (" + slow + ")"},
			[]string{"view sessions", "table real_sessions"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := importedCassette(t, checkFixture)
			sqlOn(t, db, tc.stmts...)
			before := contents(t, db)
			other := filepath.Join("..", "..", "cassettes", "gosdk-stdio-2025-03-26.jsonl")
			for _, args := range [][]string{
				{"import", other, "--cassette", db},
				{"ls", "--cassette", db},
				{"show", "1", "--cassette", db},
				{"export", "--cassette", db},
				{"record", "--cassette", db, "--", "true"},
				{"replay", "1", "--stdio", "--cassette", db},
				{"check", db},
			} {
				r, took := runHostile(t, args...)
				out := r.stdout + r.stderr
				if r.code == 0 || took > 10*time.Second {
					t.Errorf("mcpvcr %v = %d after %v; want a refusal at once", args, r.code, took)
				}
				for _, n := range tc.names {
					if !strings.Contains(out, n) {
						t.Errorf("mcpvcr %v does not name %q:\n%s", args, n, out)
					}
				}
				if !strings.Contains(r.stderr, "ask its sender for a JSONL export") {
					t.Errorf("mcpvcr %v says nothing of what to do:\n%s", args, r.stderr)
				}
				if args[0] == "check" && !strings.Contains(r.stdout, "FAIL  schema") {
					t.Errorf("mcpvcr check does not fail the schema:\n%s", r.stdout)
				}
			}
			if after := contents(t, db); after != before {
				t.Errorf("the cassette changed: %s, then %s", before, after)
			}
		})
	}
}

// TestHostilePackBomb: ten packs of 27 bytes that each claim 599,186
// frames (7 MiB) are refused at once by every reader, naming the pack;
// check suggests export --rescue, which keeps every other frame.
func TestHostilePackBomb(t *testing.T) {
	parallel(t)
	db := importedCassette(t, checkFixture)
	const count = 599186
	body := bytes.Repeat([]byte{0, 0, 2, 0, 1, 0, 0, 0, 0, 0, 0, 0}, count)
	pack := append(binary.AppendUvarint([]byte{2}, uint64(len(body))), s2.Encode(nil, body)...)
	var stmts []string
	for i := range 10 {
		first := 61 + i*count
		stmts = append(stmts, "INSERT INTO frame_packs (session_id, first_seq, last_seq, frames) VALUES (1, "+
			strconv.Itoa(first)+", "+strconv.Itoa(first+count-1)+", x'"+hex.EncodeToString(pack)+"')")
	}
	sqlOn(t, db, stmts...)
	const named = "frames 61 to 599246: damaged pack: a pack claims 599186 frames"
	for _, args := range [][]string{
		{"show", "1", "--cassette", db},
		{"export", "--cassette", db},
		{"export", "--format", "html", "--cassette", db},
		{"replay", "1", "--stdio", "--cassette", db},
		{"check", db},
	} {
		r, took := runHostile(t, args...)
		if r.code == 0 || took > 10*time.Second || !strings.Contains(r.stdout+r.stderr, named) {
			t.Errorf("mcpvcr %v = %d after %v; want a refusal naming %q:\n%s%s", args, r.code, took, named, r.stdout, r.stderr)
		}
		if args[0] == "check" && !strings.Contains(r.stderr, "export --rescue") {
			t.Errorf("mcpvcr check does not suggest export --rescue:\n%s", r.stderr)
		}
	}
	rescued := filepath.Join(t.TempDir(), "rescued.jsonl")
	r, _ := runHostile(t, "export", "--rescue", "--cassette", db, "-o", rescued)
	if r.code != 0 || !strings.Contains(r.stderr, named) {
		t.Fatalf("mcpvcr export --rescue = %d; want 0 and the packs named:\n%s", r.code, r.stderr)
	}
	again := importedCassette(t, rescued)
	if r := mcpvcr(t, "", "check", again); r.code != 0 || !strings.Contains(r.stdout, "1 session, 3 streams, 60 frames") {
		t.Errorf("the rescue does not check as the 60 recorded frames:\n%s%s", r.stdout, r.stderr)
	}
}

// TestBadLineHint: a JSONL export with a line that does not import is
// met with the way to find and fix it, not with "a writable file path".
func TestBadLineHint(t *testing.T) {
	parallel(t)
	bad := rewrite(t, checkFixture, "bad.jsonl", func(b []byte) []byte {
		return append(b, []byte(`{"type":"frame","session":1,"seq":"x"}`+"\n")...)
	})
	// The line is named with its field, what it holds and what it
	// should, in the file's terms: no Go type.
	const said = `line 66: field "seq" holds a string; want a whole number`
	for _, args := range [][]string{
		{"ls", "--cassette", bad},
		{"import", bad, "--cassette", filepath.Join(t.TempDir(), "c.db")},
	} {
		r := mcpvcr(t, "", args...)
		if r.code == 0 || !strings.Contains(r.stderr, "mcpvcr check "+bad+" names each line that does not import") ||
			strings.Contains(r.stderr, "writable") || !strings.Contains(r.stderr, said) || strings.Contains(r.stderr, "Go ") {
			t.Errorf("mcpvcr %v = %d:\n%s", args, r.code, r.stderr)
		}
	}
	if r := mcpvcr(t, "", "check", bad); r.code == 0 || !strings.Contains(r.stdout, said) || strings.Contains(r.stdout, "Go ") {
		t.Errorf("mcpvcr check %s = %d:\n%s%s", bad, r.code, r.stdout, r.stderr)
	}
	// An export that cannot be read at all is not met with "writable".
	dir := filepath.Join(t.TempDir(), "dir.jsonl")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if r := mcpvcr(t, "", "ls", "--cassette", dir); r.code == 0 || strings.Contains(r.stderr, "writable") || !strings.Contains(r.stderr, "readable") {
		t.Errorf("mcpvcr ls --cassette %s = %d:\n%s", dir, r.code, r.stderr)
	}
	if _, err := os.Stat(bad); err != nil {
		t.Fatal(err)
	}
}

// TestHostileDamagedPackRescue: a cassette with a pack that does not
// decode. check, export and scrub name the session and frames that are
// lost and suggest a rescue into new files beside it; the commands they
// suggest, run as written, work.
func TestHostileDamagedPackRescue(t *testing.T) {
	parallel(t)
	db := importedCassette(t, checkFixture)
	sqlOn(t, db, "INSERT INTO frame_packs (session_id, first_seq, last_seq, frames) VALUES (1, 61, 70, x'02100102030405060708')")
	const named = "session 1: frames 61 to 70: damaged pack"
	// hinted returns the commands of r's hint that follow prefix, as
	// argument lists (the paths hold no blanks).
	hinted := func(r result, prefix string) [][]string {
		t.Helper()
		_, hint, ok := strings.Cut(r.stderr, "try: "+prefix)
		if !ok {
			t.Fatalf("no hint %q:\n%s", prefix, r.stderr)
		}
		hint, _, _ = strings.Cut(hint, "\n")
		var cmds [][]string
		for _, c := range strings.Split(hint, ", then ") {
			args := strings.Fields(c)
			if len(args) < 2 || args[0] != "mcpvcr" {
				t.Fatalf("hint %q: %q is not an mcpvcr command", hint, c)
			}
			for _, a := range args {
				if a == db || a == db+"-wal" {
					continue
				}
				if filepath.IsAbs(a) && filepath.Dir(a) == filepath.Dir(db) && a != db {
					if _, err := os.Stat(a); err == nil {
						t.Errorf("hint %q names %s, which exists", hint, a)
					}
				}
			}
			cmds = append(cmds, args[1:])
		}
		return cmds
	}

	r := mcpvcr(t, "", "check", db)
	if r.code == 0 || !strings.Contains(r.stdout, named) {
		t.Fatalf("check = %d; want the pack named:\n%s%s", r.code, r.stdout, r.stderr)
	}
	cmds := hinted(r, "keep what can still be read: ")
	for _, args := range cmds {
		if r := mcpvcr(t, "", args...); r.code != 0 {
			t.Fatalf("mcpvcr %v, as check suggests, = %d:\n%s", args, r.code, r.stderr)
		}
	}
	rescued := cmds[len(cmds)-1][len(cmds[len(cmds)-1])-1]
	if rescued == db {
		t.Fatalf("the rescue is imported into the damaged cassette itself: %v", cmds)
	}
	if r := mcpvcr(t, "", "check", rescued); r.code != 0 || !strings.Contains(r.stdout, "1 session, 3 streams, 60 frames") {
		t.Errorf("the rescue does not check as the 60 readable frames:\n%s%s", r.stdout, r.stderr)
	}

	out := filepath.Join(t.TempDir(), "x.jsonl")
	r = mcpvcr(t, "", "export", "--cassette", db, "-o", out)
	if r.code == 0 || !strings.Contains(r.stderr, named) || !strings.Contains(r.stderr, "try: keep what can still be read: mcpvcr export --rescue") {
		t.Errorf("export of the damaged cassette = %d; want the pack named and a rescue suggested:\n%s", r.code, r.stderr)
	}

	shared := filepath.Join(t.TempDir(), "shared.db")
	r = mcpvcr(t, "", "scrub", "--cassette", db, "-o", shared)
	if r.code == 0 || !strings.Contains(r.stderr, "scrub: read the cassette: "+named) || strings.Contains(r.stderr, "import: line") {
		t.Fatalf("scrub of the damaged cassette = %d; want the pack named plainly:\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(shared); err == nil {
		t.Errorf("scrub of the damaged cassette wrote %s", shared)
	}
	for _, args := range hinted(r, "nothing was written to "+shared+"; scrub what can still be read: ") {
		if r := mcpvcr(t, "", args...); r.code != 0 {
			t.Fatalf("mcpvcr %v, as scrub suggests, = %d:\n%s", args, r.code, r.stderr)
		}
	}
	if r := mcpvcr(t, "", "check", shared); r.code != 0 {
		t.Errorf("the scrubbed rescue does not check:\n%s%s", r.stdout, r.stderr)
	}
}
