package view_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcpvcr/mcpvcr/store"
	"github.com/mcpvcr/mcpvcr/view"
)

func text(t *testing.T, r *store.Recording, o view.Options) string {
	t.Helper()
	var b bytes.Buffer
	if err := view.WriteText(&b, r, o); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestWriteText_Columns(t *testing.T) {
	// Columns stay put: every line of a Streamable HTTP session's timeline
	// has its direction marker in the same column, whatever the URL, and
	// no line outgrows the flags column's start by much.
	r := cassette(t, "gosdk-http-2025-11-25.jsonl")
	r.Streams[0].URL = "/mcp?sessionId=" + strings.Repeat("x", 120) // a long URL is cut
	out := text(t, r, view.Options{})
	lines := strings.Split(strings.TrimSpace(out), "\n")[2:]
	col := -1
	for _, l := range lines {
		rs := []rune(l)
		at := 5 + 1 + 10 + 1 // seq, offset
		if col < 0 {
			col = at
		}
		if len(rs) <= col || !strings.ContainsRune("<>=■", rs[col]) {
			t.Errorf("direction not in column %d: %q", col, l)
		}
	}
	if strings.Contains(out, strings.Repeat("x", 40)) || !strings.Contains(out, "/mcp?sessionId=xxx") || !strings.Contains(out, "…") {
		t.Errorf("a long URL is not cut to its column:\n%s", out)
	}
	for _, want := range []string{"POST 200", "priming", "server-closed", "client-aborted", "resumes=", "Last-Event-ID=", "← #1 ", "text/event-stream"} {
		if !strings.Contains(out, want) {
			t.Errorf("timeline lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "invalid") || strings.Contains(out, "malformed") {
		t.Errorf("a valid recording shows invalid or malformed frames:\n%s", out)
	}
}

func TestWriteText_Kinds(t *testing.T) {
	// stderr lines are stderr, results show the method they answer.
	r := cassette(t, "everything-stdio.jsonl")
	out := text(t, r, view.Options{})
	var initResult, stderr bool
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, " result ") && strings.Contains(l, " initialize ") {
			initResult = true
		}
		if strings.Contains(l, " stderr ") && strings.Contains(l, "Starting default (STDIO) server") {
			stderr = true
		}
	}
	if !initResult || !stderr {
		t.Errorf("initialize result row: %v, stderr row: %v\n%s", initResult, stderr, out)
	}
}

func TestWriteText_Filters(t *testing.T) {
	r := cassette(t, "gosdk-http-2025-11-25.jsonl")
	frameLines := func(out string) []string {
		var fl []string
		for _, l := range strings.Split(strings.TrimSpace(out), "\n")[2:] {
			if rs := []rune(l); len(rs) > 17 && (rs[17] == '<' || rs[17] == '>') {
				fl = append(fl, l)
			}
		}
		return fl
	}
	tests := []struct {
		name string
		o    view.Options
		want int
		each string
	}{
		{"Method", view.Options{Method: "tools/call"}, countMethod(r, "tools/call"), "tools/call"},
		{"DirClient", view.Options{Dir: store.ClientToServer}, count(r, func(f store.Frame) bool { return f.Direction == store.ClientToServer }), " > "},
		{"Stream", view.Options{Stream: "post#1"}, count(r, func(f store.Frame) bool { return f.StreamID == r.Streams[0].ID }), "post#1"},
		{"StreamKind", view.Options{Stream: "get"}, count(r, func(f store.Frame) bool { return f.StreamID == r.Streams[1].ID }), "get#2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fl := frameLines(text(t, r, tt.o))
			if len(fl) != tt.want || tt.want == 0 {
				t.Errorf("%d frame lines; want %d", len(fl), tt.want)
			}
			for _, l := range fl {
				if !strings.Contains(l, tt.each) {
					t.Errorf("line without %q: %q", tt.each, l)
				}
			}
		})
	}
}

func TestWriteText_PayloadAndColor(t *testing.T) {
	r := cassette(t, "gosdk-stdio-2025-06-18.jsonl")
	plain := text(t, r, view.Options{Method: "initialize", Payload: true})
	if !strings.Contains(plain, "\n      {\n        \"jsonrpc\": \"2.0\",") {
		t.Errorf("payload not pretty-printed below the row:\n%s", plain)
	}
	if strings.Contains(plain, "\x1b[") {
		t.Error("colour without Color")
	}
	colored := text(t, r, view.Options{Color: true})
	if !strings.Contains(colored, "\x1b[34m>\x1b[0m") {
		t.Errorf("no colour with Color:\n%s", colored)
	}
	if !utf8.ValidString(colored) {
		t.Error("output is not UTF-8")
	}
}

func count(r *store.Recording, keep func(store.Frame) bool) int {
	n := 0
	for _, f := range r.Frames {
		if keep(f) {
			n++
		}
	}
	return n
}

func TestWriteJSON(t *testing.T) {
	// show --format json: every frame the filters keep, answers with the
	// method and seq of their request, payloads on request.
	r := cassette(t, "gosdk-stdio-2025-06-18.jsonl")
	var b bytes.Buffer
	if err := view.WriteJSON(&b, r, view.Options{Method: "tools/list", Payload: true}); err != nil {
		t.Fatal(err)
	}
	var got view.TimelineJSON
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b.String())
	}
	if len(got.Frames) != countMethod(r, "tools/list") || len(got.Frames) == 0 {
		t.Fatalf("%d frames; want %d", len(got.Frames), countMethod(r, "tools/list"))
	}
	for _, f := range got.Frames {
		if f.Method != "tools/list" || len(f.Payload) == 0 {
			t.Errorf("frame %+v: want method tools/list and a payload", f)
		}
		if f.Kind == "result" && f.RequestSeq == 0 {
			t.Errorf("result %d does not name its request", f.Seq)
		}
	}
	if got.Session.ID != r.Session.ID || len(got.Streams) != len(r.Streams) {
		t.Errorf("session %+v, %d streams", got.Session, len(got.Streams))
	}
}

func TestWriteText_UnknownStreamKind(t *testing.T) {
	// A stream kind this build does not know (a newer cassette) is shown
	// as what it is, not dropped: its frames keep their rows.
	r := cassette(t, "gosdk-http-2025-11-25.jsonl")
	r.Streams[0].Kind = store.StreamKind(99)
	out := text(t, r, view.Options{})
	if !strings.Contains(out, "unknown#1") || !strings.Contains(out, "initialize") {
		t.Errorf("stream of unknown kind not shown:\n%s", out)
	}
	var b bytes.Buffer
	if err := view.WriteHTML(&b, view.Page{Sessions: []*store.Recording{r}}); err != nil {
		t.Fatal(err)
	}
}
