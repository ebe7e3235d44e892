package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// checkFixture is the committed cassette the check tests start from.
var checkFixture = filepath.Join("..", "..", "cassettes", "gosdk-stdio-2025-06-18.jsonl")

// importedCassette imports jsonl into a new .db cassette and returns its
// path.
func importedCassette(tb testing.TB, jsonl string) string {
	tb.Helper()
	db := filepath.Join(tb.TempDir(), "c.db")
	if r := mcpvcr(tb, "", "import", jsonl, "--cassette", db); r.code != 0 {
		tb.Fatalf("mcpvcr import %s = %d; stderr:\n%s", jsonl, r.code, r.stderr)
	}
	return db
}

// rewrite writes a changed copy of src next to dir's other files and
// returns its path.
func rewrite(tb testing.TB, src, name string, change func([]byte) []byte) string {
	tb.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		tb.Fatal(err)
	}
	dst := filepath.Join(tb.TempDir(), name)
	if err := os.WriteFile(dst, change(b), 0o644); err != nil {
		tb.Fatal(err)
	}
	return dst
}

// dropLine removes the first line of b that contains all of subs.
func dropLine(b []byte, subs ...string) []byte {
	lines := bytes.SplitAfter(b, []byte("\n"))
	for i, l := range lines {
		all := true
		for _, s := range subs {
			all = all && bytes.Contains(l, []byte(s))
		}
		if all {
			return bytes.Join(append(lines[:i:i], lines[i+1:]...), nil)
		}
	}
	return b
}

func TestCheck(t *testing.T) {
	parallel(t)
	sound := importedCassette(t, checkFixture)
	tests := []struct {
		name     string
		path     func(t *testing.T) string
		args     []string // before the path; nil: the path is the argument
		wantCode int
		wantOut  []string // in stdout
		wantErr  []string // in stderr
	}{{
		name:     "SoundDB",
		path:     func(*testing.T) string { return sound },
		wantCode: exitOK,
		wantOut:  []string{"(SQLite cassette)", "1 session, 3 streams,", "ok    SQLite file", "ok    references and frame order", "ok    frame contents", "result: ok"},
	}, {
		name:     "SoundDBByFlag",
		path:     func(*testing.T) string { return sound },
		args:     []string{"--cassette"},
		wantCode: exitOK,
		wantOut:  []string{"result: ok"},
	}, {
		name:     "SoundJSONL",
		path:     func(*testing.T) string { return checkFixture },
		wantCode: exitOK,
		wantOut:  []string{"(JSONL export)", "ok    JSONL export", "result: ok"},
	}, {
		name: "JSONLMissingFrame",
		path: func(t *testing.T) string {
			return rewrite(t, checkFixture, "gap.jsonl", func(b []byte) []byte { return dropLine(b, `"type":"frame"`, `"seq":5,`) })
		},
		wantCode: exitDiffer,
		wantOut:  []string{"FAIL  references and frame order", "session 1: frame 5 is missing", "result: 1 problem"},
		wantErr:  []string{"1 problem found", "try: fix the lines"},
	}, {
		name: "JSONLBrokenLine",
		path: func(t *testing.T) string {
			return rewrite(t, checkFixture, "broken.jsonl", func(b []byte) []byte {
				return bytes.Replace(b, []byte(`"type":"frame","session":1,"seq":7,`), []byte(`"type":"frame","session":1,"seq":"7",`), 1)
			})
		},
		wantCode: exitDiffer,
		wantOut:  []string{"FAIL  JSONL export", "line ", "not checked"},
	}, {
		name: "DBTruncated",
		path: func(t *testing.T) string {
			return rewrite(t, sound, "half.db", func(b []byte) []byte { return b[:len(b)/2] })
		},
		wantCode: exitDiffer,
		wantOut:  []string{"FAIL  SQLite file", "database disk image is malformed", "not checked"},
		wantErr:  []string{"try: salvage what SQLite can still read"},
	}, {
		name: "DBHeaderDamaged",
		path: func(t *testing.T) string {
			return rewrite(t, sound, "header.db", func(b []byte) []byte {
				for i := 16; i < 100; i++ {
					b[i] = 0xff
				}
				return b
			})
		},
		wantCode: exitDiffer,
		wantOut:  []string{"FAIL  SQLite file", "file is not a database"},
	}, {
		// Damage inside a frame's bytes: SQLite keeps no checksums, so its
		// integrity check passes, and the content check must catch it.
		name: "DBFrameBytesDamaged",
		path: func(t *testing.T) string {
			return rewrite(t, sound, "bytes.db", func(b []byte) []byte {
				return bytes.ReplaceAll(b, []byte(`"method":"tools/list"`), []byte(`"method":"tools/lust"`))
			})
		},
		wantCode: exitDiffer,
		wantOut: []string{"ok    SQLite file", "FAIL  frame contents",
			`its bytes give method "tools/lust", but it is indexed with method "tools/list"`},
	}, {
		name:     "Missing",
		path:     func(t *testing.T) string { return filepath.Join(t.TempDir(), "none.db") },
		wantCode: exitFailure,
		wantErr:  []string{"does not exist", "try: "},
	}, {
		name: "Empty",
		path: func(t *testing.T) string {
			return rewrite(t, sound, "empty.db", func([]byte) []byte { return nil })
		},
		wantCode: exitFailure,
		wantErr:  []string{"is empty"},
	}, {
		name:     "NotACassette",
		path:     func(*testing.T) string { return filepath.Join("..", "..", "README.md") },
		wantCode: exitFailure,
		wantErr:  []string{"neither a SQLite cassette nor a JSONL export"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := tt.path(t)
			args := append(append([]string{"check"}, tt.args...), path)
			r := mcpvcr(t, "", args...)
			if r.code != tt.wantCode {
				t.Errorf("mcpvcr %s = %d; want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.code, tt.wantCode, r.stdout, r.stderr)
			}
			for _, w := range tt.wantOut {
				if !strings.Contains(r.stdout, w) {
					t.Errorf("stdout lacks %q:\n%s", w, r.stdout)
				}
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
				}
			}
		})
	}
}

func TestCheck_Usage(t *testing.T) {
	parallel(t)
	r := mcpvcr(t, "", "check", "a.db", "b.db")
	if got, want := r.code, exitUsage; got != want {
		t.Errorf("mcpvcr check a.db b.db = %d; want %d (stderr %q)", got, want, r.stderr)
	}
}

// TestCheck_LeavesNoFile checks that checking a missing cassette does not
// create it, as opening it for writing would.
func TestCheck_LeavesNoFile(t *testing.T) {
	parallel(t)
	path := filepath.Join(t.TempDir(), "none.db")
	mcpvcr(t, "", "check", path)
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("mcpvcr check %s created the file (stat: %v)", path, err)
	}
}
