package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcpvcr/mcpvcr/internal/termtext"
	"github.com/mcpvcr/mcpvcr/store"
)

// trick is what a stranger's cassette puts in a name to fool a reader: a
// right-to-left override (which shows "evil\u202etxt.exe" as
// "evilexe.txt"), a zero-width space and a C1 control (U+009B, the CSI
// that starts a terminal command).
const trick = "evil\u202etxt.exe\u200b\u009b2J"

// hostileTermJSONL is a committed HTTP cassette's export with trick in
// the session's name and upstream, in a label, in a request's client
// name and method, and two bodies that are not JSON-RPC: a malformed one
// of bodySize bytes and one cut at record's --max-frame (oversize).
func hostileTermJSONL(t *testing.T, bodySize int) []byte {
	t.Helper()
	in, err := os.ReadFile(filepath.Join("..", "..", "cassettes", "gosdk-http-2025-11-25.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	var maxSeq, maxOff, post float64
	sc := bufio.NewScanner(bytes.NewReader(in))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var rec map[string]any
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		switch rec["type"] {
		case "session":
			rec["name"], rec["upstream"] = trick, "http://x/"+trick
			rec["labels"] = map[string]string{"team" + trick: trick}
		case "stream":
			if rec["kind"] == "post" && post == 0 {
				post = rec["id"].(float64)
			}
		case "frame":
			maxSeq, maxOff = max(maxSeq, rec["seq"].(float64)), max(maxOff, rec["offset_ns"].(float64))
			if rec["seq"].(float64) == 1 {
				raw := rec["raw"].(string)
				raw = strings.Replace(raw, `"name":"mcptest-client"`, `"name":"`+trick+`"`, 1)
				rec["raw"] = raw
			}
		}
		enc.Encode(rec)
	}
	frame := func(raw string, oversize int) {
		maxSeq++
		maxOff++
		rec := map[string]any{"type": "frame", "session": 1, "seq": maxSeq, "stream": post, "dir": "s2c", "offset_ns": maxOff, "raw": raw}
		if oversize > 0 {
			rec["oversize"] = oversize
		}
		enc.Encode(rec)
	}
	call, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 99, "method": "tools/" + trick, "params": map[string]any{"name": trick}})
	frame(string(call)+"\n", 0)
	frame("<html>"+trick+strings.Repeat("A", bodySize)+"</html>", 0)
	frame("<html>"+strings.Repeat("B", 1<<16), 100<<20)
	return out.Bytes()
}

// badRune reports the first C1 control, bidi control or zero-width
// character in s, which no output may hold raw.
func badRune(s string) (rune, bool) {
	for _, r := range s {
		if (r >= 0x80 && r <= 0x9f) || termtext.Invisible(r) {
			return r, true
		}
	}
	return 0, false
}

// TestOutput_HostileText (issue #48): ls, show and show --payload print
// a bidi control, a zero-width character and a C1 control as visible
// escapes, and show keeps the FLAGS of a 2 MB malformed body and of a
// 100 MB body stored cut to 60 characters.
func TestOutput_HostileText(t *testing.T) {
	parallel(t)
	dir := t.TempDir()
	jsonl, db := filepath.Join(dir, "hostile.jsonl"), filepath.Join(dir, "c.db")
	if err := os.WriteFile(jsonl, hostileTermJSONL(t, 2<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	if res := mcpvcr(t, "", "import", jsonl, "--cassette", db); res.code != 0 {
		t.Fatalf("import exited %d: %s", res.code, res.stderr)
	}
	escaped := `evil\u202etxt.exe\u200b\u009b2J`
	for _, args := range [][]string{{"ls"}, {"show", "1"}, {"show", "1", "--payload"}} {
		res := mcpvcr(t, "", append(args, "--cassette", db)...)
		if res.code != 0 {
			t.Fatalf("%v exited %d: %s", args, res.code, res.stderr)
		}
		if r, ok := badRune(res.stdout); ok {
			t.Errorf("%v prints %U raw", args, r)
		}
		if !strings.Contains(res.stdout, escaped) {
			t.Errorf("%v does not show %q as %s", args, trick, escaped)
		}
		if args[0] != "show" {
			continue
		}
		var body, cut string
		for _, l := range strings.Split(res.stdout, "\n") {
			if len(l) > 400 && !strings.HasPrefix(l, "      ") { // --payload's lines below a row are the frame, whole
				t.Errorf("%v prints a line of %d bytes: %.120q…", args, len(l), l)
			}
			if strings.Contains(l, "malformed,<html>") {
				body = l
			}
			if strings.Contains(l, "oversize=104857600") {
				cut = l
			}
		}
		for what, l := range map[string]string{"malformed body": body, "oversize body": cut} {
			if l == "" {
				t.Errorf("%v has no line for the %s", args, what)
				continue
			}
			fl := l[strings.LastIndex(l, "  ")+2:]
			if n := utf8.RuneCountInString(fl); n > 60 || !strings.HasSuffix(fl, "…") {
				t.Errorf("%v: the %s's FLAGS are %d characters: %q; want at most 60, ending in …", args, what, n, fl)
			}
		}
	}
}

// TestOutput_HostileJSON (issue #48): show --format json, ls --format
// json and export (JSONL and HAR) write C1, bidi and zero-width
// characters as \u escapes: valid JSON with the same values, and an
// export imported again holds the same bytes.
func TestOutput_HostileJSON(t *testing.T) {
	parallel(t)
	dir := t.TempDir()
	jsonl, db := filepath.Join(dir, "hostile.jsonl"), filepath.Join(dir, "c.db")
	if err := os.WriteFile(jsonl, hostileTermJSONL(t, 1<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	if res := mcpvcr(t, "", "import", jsonl, "--cassette", db); res.code != 0 {
		t.Fatalf("import exited %d: %s", res.code, res.stderr)
	}
	outputs := map[string]string{}
	for _, args := range [][]string{{"show", "1", "--format", "json"}, {"show", "1", "--format", "json", "--payload"},
		{"ls", "--format", "json"}, {"export", "1"}, {"export", "1", "--format", "har"}} {
		res := mcpvcr(t, "", append(args, "--cassette", db)...)
		if res.code != 0 {
			t.Fatalf("%v exited %d: %s", args, res.code, res.stderr)
		}
		name := strings.Join(args, " ")
		outputs[name] = res.stdout
		if r, ok := badRune(res.stdout); ok {
			t.Errorf("%s writes %U raw", name, r)
		}
		if !strings.Contains(res.stdout, `evil\u202etxt.exe\u200b\u009b2J`) {
			t.Errorf("%s does not write %q as JSON escapes", name, trick)
		}
		docs := []string{res.stdout}
		if args[0] == "export" && len(args) == 2 {
			docs = strings.Split(strings.TrimSpace(res.stdout), "\n")
		}
		for _, d := range docs {
			if !json.Valid([]byte(d)) {
				t.Fatalf("%s writes JSON that is not valid: %.200s", name, d)
			}
		}
	}
	var show struct {
		Session struct{ Name, Upstream string }
	}
	if err := json.Unmarshal([]byte(outputs["show 1 --format json"]), &show); err != nil {
		t.Fatal(err)
	}
	if show.Session.Name != trick || show.Session.Upstream != "http://x/"+trick {
		t.Errorf("show --format json: name %q, upstream %q; want the same values as stored", show.Session.Name, show.Session.Upstream)
	}
	// The export, imported again, holds the same bytes as the cassette.
	again := filepath.Join(dir, "again.jsonl")
	if err := os.WriteFile(again, []byte(outputs["export 1"]), 0o644); err != nil {
		t.Fatal(err)
	}
	db2 := filepath.Join(dir, "again.db")
	if res := mcpvcr(t, "", "import", again, "--cassette", db2); res.code != 0 {
		t.Fatalf("import of the export exited %d: %s", res.code, res.stderr)
	}
	a, b := recording(t, db), recording(t, db2)
	if a.Session.Name != b.Session.Name || len(a.Frames) != len(b.Frames) {
		t.Fatalf("the export imported again: name %q, %d frames; want %q, %d", b.Session.Name, len(b.Frames), a.Session.Name, len(a.Frames))
	}
	for i := range a.Frames {
		if !bytes.Equal(a.Frames[i].Raw, b.Frames[i].Raw) {
			t.Errorf("frame %d: the export imported again holds other bytes", a.Frames[i].Seq)
		}
	}
}

func recording(t *testing.T, path string) *store.Recording {
	t.Helper()
	db, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	r, err := db.Recording(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
