package store_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpvcr/mcpvcr/store"
)

var update = flag.Bool("update", false, "rewrite golden files")

// export returns d's JSONL export of the given sessions.
func export(t testing.TB, d *store.DB, ids ...int64) []byte {
	t.Helper()
	var buf bytes.Buffer
	must(t, d.Export(context.Background(), &buf, ids...))
	return buf.Bytes()
}

// sameLines reports the first line where two exports differ.
func sameLines(t testing.TB, what string, want, got []byte) {
	t.Helper()
	if bytes.Equal(want, got) {
		return
	}
	wl, gl := strings.Split(string(want), "\n"), strings.Split(string(got), "\n")
	for i := range max(len(wl), len(gl)) {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			t.Fatalf("%s differs at line %d:\nwant %.300q\ngot  %.300q", what, i+1, w, g)
		}
	}
}

func TestDB_ExportGolden(t *testing.T) {
	d := openDB(t)
	recordSample(t, d)
	got := export(t, d)
	golden := filepath.Join("testdata", "jsonl", "sample", "export.golden")
	if *update {
		must(t, os.MkdirAll(filepath.Dir(golden), 0o755))
		must(t, os.WriteFile(golden, got, 0o644))
	}
	want, err := os.ReadFile(golden)
	must(t, err)
	sameLines(t, "Export()", want, got)
}

func TestDB_ExportImportRoundTrip(t *testing.T) {
	ctx := context.Background()
	src := openDB(t)
	smp := recordSample(t, src)
	// A 16 MB frame, as one line.
	big := &store.Session{Transport: store.Stdio, Name: "big"}
	must(t, src.CreateSession(ctx, big))
	out := newStdioStream(t, src, big.ID, store.StdoutStream)
	raw := `{"jsonrpc":"2.0","id":9,"result":{"content":[{"type":"text","text":"` + strings.Repeat("0123456789abcdef", 1<<20) + `"}]}}` + "\n"
	appendAll(t, src, frame(1, out, store.ServerToClient, 0, raw))
	a := export(t, src)

	// Into an empty cassette, the IDs come out as in the source.
	dst := openDB(t)
	ids, err := dst.Import(ctx, bytes.NewReader(a))
	must(t, err)
	if diff := cmp.Diff([]int64{1, 2, 3}, ids); diff != "" {
		t.Errorf("Import() IDs mismatch (-want +got):\n%s", diff)
	}
	sameLines(t, "export of the import", a, export(t, dst))
	for _, s := range smp.sessions {
		got, err := dst.Session(ctx, s.ID)
		must(t, err)
		if diff := cmp.Diff(s, got); diff != "" {
			t.Errorf("imported Session(%d) mismatch (-want +got):\n%s", s.ID, diff)
		}
		sts, err := dst.Streams(ctx, s.ID)
		must(t, err)
		if diff := cmp.Diff(smp.streams[s.ID], sts); diff != "" {
			t.Errorf("imported Streams(%d) mismatch (-want +got):\n%s", s.ID, diff)
		}
		fs, err := dst.Frames(ctx, s.ID)
		must(t, err)
		if diff := cmp.Diff(smp.frames[s.ID], fs); diff != "" {
			t.Errorf("imported Frames(%d) mismatch (-want +got):\n%s", s.ID, diff)
		}
	}
	fs, err := dst.Frames(ctx, 3)
	must(t, err)
	if len(fs) != 1 || string(fs[0].Raw) != raw {
		t.Errorf("imported big frame: %d frames, raw of %d bytes; want 1 frame of %d bytes", len(fs), len(fs[0].Raw), len(raw))
	}

	// Into a cassette that has sessions, the IDs are new, and exporting
	// just those gives the same bytes again.
	ids, err = dst.Import(ctx, bytes.NewReader(a))
	must(t, err)
	if diff := cmp.Diff([]int64{4, 5, 6}, ids); diff != "" {
		t.Errorf("second Import() IDs mismatch (-want +got):\n%s", diff)
	}
	sameLines(t, "export of the second import", a, export(t, dst, 6, 4, 5, 4))
	r, err := dst.Check(ctx)
	must(t, err)
	if !r.OK() {
		t.Errorf("Check() = %s", r)
	}
}

// TestDB_ImportLongLines: lines longer than import's read buffer, one
// after another, with escapes, and the last without its line ending,
// import the same from a reader that can seek (measured, then read
// whole), one that is not at its start, and one that cannot seek.
func TestDB_ImportLongLines(t *testing.T) {
	ctx := context.Background()
	src := openDB(t)
	s := &store.Session{Transport: store.Stdio, Name: "long"}
	must(t, src.CreateSession(ctx, s))
	out := newStdioStream(t, src, s.ID, store.StdoutStream)
	for seq, n := range []int{200 << 10, 64<<10 - 30, 1 << 20, 3} {
		const unit = `line "quoted" \ tab	`
		text := strings.Repeat(unit, n/len(unit)+1)[:n]
		raw := `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":` + strconv.Quote(text) + `}}` + "\n"
		appendAll(t, src, frame(int64(seq+1), out, store.ServerToClient, 0, raw))
	}
	big := &store.Session{Transport: store.Stdio, Name: "last"}
	must(t, src.CreateSession(ctx, big))
	out = newStdioStream(t, src, big.ID, store.StdoutStream)
	appendAll(t, src, frame(1, out, store.ServerToClient, 0, `{"jsonrpc":"2.0","id":1,"result":{"text":"`+strings.Repeat("x", 300<<10)+`"}}`))
	a := bytes.TrimSuffix(export(t, src), []byte("\n"))
	for _, tc := range []struct {
		name string
		r    func() io.Reader
	}{
		{"Seeker", func() io.Reader { return bytes.NewReader(a) }},
		{"SeekerPastStart", func() io.Reader {
			r := bytes.NewReader(append([]byte("skip"), a...))
			_, err := r.Read(make([]byte, 4))
			must(t, err)
			return r
		}},
		{"Reader", func() io.Reader { return struct{ io.Reader }{bytes.NewReader(a)} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dst := openDB(t)
			_, err := dst.Import(ctx, tc.r())
			must(t, err)
			sameLines(t, "export of the import", append(bytes.Clone(a), '\n'), export(t, dst))
		})
	}
}

func TestDB_ImportDerives(t *testing.T) {
	// Derived fields in the file are for people: Import ignores them.
	ctx := context.Background()
	d := openDB(t)
	in := `{"type":"mcpvcr","version":1}
{"type":"session","id":7,"transport":"stdio","exit_code":0}
{"type":"stream","id":3,"session":7,"kind":"stdin","end":"open"}
{"type":"frame","session":7,"seq":1,"stream":3,"dir":"c2s","kind":"error","rpc_id":"99","method":"lies","raw":"{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"method\":\"ping\"}\r\n"}
`
	ids, err := d.Import(ctx, strings.NewReader(in))
	must(t, err)
	fs, err := d.Frames(ctx, ids[0])
	must(t, err)
	f := fs[0]
	if f.Kind.String() != "request" || f.ID != `"x"` || f.Method != "ping" || f.Malformed {
		t.Errorf("imported frame = kind %s id %s method %q malformed %t; want request \"x\" ping false", f.Kind, f.ID, f.Method, f.Malformed)
	}
}

func TestDB_ImportErrors(t *testing.T) {
	const (
		header  = `{"type":"mcpvcr","version":1}` + "\n"
		session = `{"type":"session","id":1,"transport":"stdio","exit_code":0}` + "\n"
		stream  = `{"type":"stream","id":1,"session":1,"kind":"stdout","end":"open"}` + "\n"
		frame1  = `{"type":"frame","session":1,"seq":1,"stream":1,"dir":"s2c","raw":"{}"}` + "\n"
	)
	tests := []struct {
		name string
		in   string
		is   error
		msg  string
	}{
		{"Empty", "", store.ErrNotExport, "empty input"},
		{"Text", "hello\nworld\n", store.ErrNotExport, "not an mcpvcr JSONL export: line 1: not JSON from byte 1 on: invalid character"},
		{"NoHeader", session, store.ErrNotExport, "line 1"},
		{"OtherJSON", `{"name":"x"}` + "\n", store.ErrNotExport, "line 1"},
		{"NewerVersion", `{"type":"mcpvcr","version":2}` + "\n", store.ErrNewerSchema, "version 2"},
		{"BadJSON", header + session + "{\"type\":\n", nil, "line 3: the line ends before its JSON does"},
		{"NotObject", header + "[1]\n", nil, "line 2: the line holds an array; want a JSON object"},
		{"BadHeaderField", `{"type":"mcpvcr","version":"1"}` + "\n", store.ErrNotExport, `line 1: field "version" holds a string; want a whole number`},
		{"BadFieldType", header + session + `{"type":"frame","session":1,"seq":"x","dir":"s2c"}` + "\n", nil, `line 3: field "seq" holds a string; want a whole number`},
		{"BadStreamField", header + session + `{"type":"stream","id":1,"session":1,"kind":"stdout","opened_ns":true}` + "\n", nil, `line 3: field "opened_ns" holds a boolean; want a whole number`},
		{"BadRawType", header + session + `{"type":"frame","session":1,"seq":1,"dir":"s2c","raw":5}` + "\n", nil, `line 3: field "raw" holds a number; want a string`},
		{"UnknownType", header + `{"type":"tape"}` + "\n", nil, `line 2: unknown record type "tape"`},
		{"UnknownKey", header + `{"type":"session","id":1,"transport":"stdio","colour":"red"}` + "\n", nil, `line 2: unknown field "colour" (an export written by mcpvcr has none; remove it)`},
		{"UnknownTransport", header + `{"type":"session","id":1,"transport":"smoke"}` + "\n", nil, `line 2: unknown transport "smoke"`},
		{"DuplicateSession", header + session + session, nil, "line 3: session 1 appears twice"},
		{"StreamBeforeSession", header + stream, store.ErrNotFound, "line 2"},
		{"FrameBeforeSession", header + frame1, store.ErrNotFound, "line 2"},
		{"FrameUnknownStream", header + session + frame1, nil, "line 3: frame 1: stream 1 is not a stream of session 1"},
		{"DuplicateSeq", header + session + stream + frame1 + frame1, nil, "line 5: frame 1 of session 1 appears twice"},
		{"SeqZero", header + session + `{"type":"frame","session":1,"seq":0,"dir":"s2c"}` + "\n", store.ErrInvalid, "line 3"},
		{"BadDirection", header + session + `{"type":"frame","session":1,"seq":1,"dir":"up"}` + "\n", nil, `line 3: unknown direction "up"`},
		{"RawTwice", header + session + `{"type":"frame","session":1,"seq":1,"dir":"c2s","raw":"a","raw_b64":"YQ=="}` + "\n", nil, "line 3: both raw and raw_b64"},
		{"BadBase64", header + session + `{"type":"frame","session":1,"seq":1,"dir":"c2s","raw_b64":"!!"}` + "\n", nil, "line 3: raw_b64"},
		{"BadTime", header + `{"type":"session","id":1,"transport":"stdio","started_at":"yesterday"}` + "\n", nil, "line 2: started_at"},
		{"ResumesLater", header + session + `{"type":"stream","id":1,"session":1,"kind":"resume","resumes":2,"end":"open"}` + "\n", nil, "line 3: stream 1 resumes stream 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			d := openDB(t)
			ids, err := d.Import(ctx, strings.NewReader(tt.in))
			if err == nil {
				t.Fatalf("Import() = %v, nil; want an error", ids)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("Import() = %v; want %v", err, tt.is)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("Import() = %q; want it to contain %q", err, tt.msg)
			}
			// Said in the file's terms: no Go type, no SQL.
			for _, w := range []string{"Go ", "struct", "int64", "json:", "constraint"} {
				if strings.Contains(err.Error(), w) {
					t.Errorf("Import() = %q; it names %q", err, w)
				}
			}
			// All or nothing.
			ss, err := d.Sessions(ctx)
			must(t, err)
			if len(ss) != 0 {
				t.Errorf("Sessions() after failed Import = %d sessions; want none", len(ss))
			}
			if err := d.Err(); err != nil {
				t.Errorf("Err() after failed Import = %v; want nil", err)
			}
		})
	}
}

func TestDB_ExportUnknownSession(t *testing.T) {
	d := openDB(t)
	recordSample(t, d)
	if err := d.Export(context.Background(), new(bytes.Buffer), 1, 42); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Export(1, 42) = %v; want ErrNotFound", err)
	}
}

func TestOpenFile(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := openPath(t, filepath.Join(dir, "src.db"))
	smp := recordSample(t, src)
	must(t, src.Flush(ctx))
	jsonl := filepath.Join(dir, "sample.jsonl")
	must(t, os.WriteFile(jsonl, export(t, src), 0o644))
	text := filepath.Join(dir, "notes.txt")
	must(t, os.WriteFile(text, []byte("hello\n"), 0o644))

	for _, path := range []string{jsonl, filepath.Join(dir, "src.db")} {
		t.Run(filepath.Ext(path), func(t *testing.T) {
			d, err := store.OpenFile(ctx, path)
			must(t, err)
			ss, err := d.Sessions(ctx)
			must(t, err)
			if diff := cmp.Diff(smp.sessions, ss); diff != "" {
				t.Errorf("Sessions() mismatch (-want +got):\n%s", diff)
			}
			tmp := store.TempDir(d)
			if (tmp != "") != (filepath.Ext(path) == ".jsonl") {
				t.Errorf("TempDir() = %q for %s", tmp, path)
			}
			must(t, d.Close())
			if _, err := os.Stat(tmp); tmp != "" && !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("temporary cassette %s still there after Close: %v", tmp, err)
			}
		})
	}
	tests := []struct {
		name string
		path string
		want error
	}{
		{"Text", text, store.ErrNotCassette},
		{"Missing", filepath.Join(dir, "missing.jsonl"), fs.ErrNotExist},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := store.OpenFile(ctx, tt.path); !errors.Is(err, tt.want) {
				t.Errorf("OpenFile(%q) = %v; want %v", tt.path, err, tt.want)
			}
		})
	}
}

func TestCassettes_RoundTrip(t *testing.T) {
	// The recordings committed in cassettes/ import and export to the
	// same bytes, and are sound.
	files, err := filepath.Glob(filepath.Join("..", "cassettes", "*.jsonl"))
	must(t, err)
	if len(files) == 0 {
		t.Skip("no committed cassettes")
	}
	ctx := context.Background()
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			in, err := os.ReadFile(f)
			must(t, err)
			d := openDB(t)
			_, err = d.Import(ctx, bytes.NewReader(in))
			must(t, err)
			sameLines(t, "export of "+f, in, export(t, d))
			r, err := d.Check(ctx)
			must(t, err)
			if !r.OK() {
				t.Errorf("Check() = %s", r)
			}
		})
	}
}
