package view_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mcpvcr/mcpvcr/internal/termtext"
	"github.com/mcpvcr/mcpvcr/store"
	"github.com/mcpvcr/mcpvcr/view"
)

// trick fools a reader (issue #48): a right-to-left override, a
// zero-width space and a C1 control (CSI).
const trick = "evil\u202etxt.exe\u200b\u009b2J"

// hostileStdio is a stdio session named trick with a request whose method
// and tool are trick, and a stderr line of 100,000 characters.
func hostileStdio() *store.Recording {
	start := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	r := &store.Recording{
		Session: store.Session{ID: 1, Name: trick, Transport: store.Stdio, Upstream: trick, StartedAt: start, EndedAt: start.Add(time.Second),
			Labels: map[string]string{trick: trick}},
		Streams: []store.Stream{{ID: 1, Kind: store.StdinStream}, {ID: 2, Kind: store.StdoutStream}, {ID: 3, Kind: store.StderrStream}},
	}
	add := func(stream int64, dir store.Direction, raw string) {
		seq := int64(len(r.Frames) + 1)
		f := store.Frame{SessionID: 1, StreamID: stream, Seq: seq, Direction: dir, Offset: time.Duration(seq) * time.Millisecond, Raw: []byte(raw)}
		f.Derive(r.Streams[stream-1].Kind)
		r.Frames = append(r.Frames, f)
	}
	call, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/" + trick, "params": map[string]any{"name": trick}})
	add(1, store.ClientToServer, string(call)+"\n")
	add(3, store.ServerToClient, trick+strings.Repeat("E", 100000)+"\n")
	return r
}

func hasBadRune(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return (r >= 0x80 && r <= 0x9f) || termtext.Invisible(r) })
}

// TestWriteText_Hostile: show's text escapes bidi, zero-width and C1
// characters in the header, the columns and the payload, and cuts FLAGS
// (here a 100,000-character stderr line) at 60 characters.
func TestWriteText_Hostile(t *testing.T) {
	r := hostileStdio()
	for _, o := range []view.Options{{}, {Payload: true}} {
		out := text(t, r, o)
		if hasBadRune(out) {
			t.Errorf("payload %v: the text holds a bidi, zero-width or C1 character raw:\n%s", o.Payload, out[:min(len(out), 2000)])
		}
		if !strings.Contains(out, `session 1 evil\u202etxt.exe\u200b\u009b2J`) {
			t.Errorf("payload %v: the header does not show the name escaped:\n%.500s", o.Payload, out)
		}
		for _, l := range strings.Split(out, "\n") {
			if !strings.Contains(l, " stderr ") {
				continue
			}
			fl := l[strings.LastIndex(l, "  ")+2:]
			if n := utf8.RuneCountInString(fl); n != 60 || !strings.HasSuffix(fl, "…") || !strings.HasPrefix(fl, `evil\u202e`) {
				t.Errorf("payload %v: FLAGS of the stderr line = %q (%d characters); want its first 59 escaped and …", o.Payload, fl, n)
			}
		}
	}
}

// TestWriteJSON_Hostile: show --format json and ls --format json write
// C1, bidi and zero-width characters as \u escapes, the same values.
func TestWriteJSON_Hostile(t *testing.T) {
	r := hostileStdio()
	var show, ls bytes.Buffer
	if err := view.WriteJSON(&show, r, view.Options{Payload: true}); err != nil {
		t.Fatal(err)
	}
	if err := view.WriteSessionsJSON(&ls, []store.Session{r.Session}); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string][]byte{"WriteJSON": show.Bytes(), "WriteSessionsJSON": ls.Bytes()} {
		if hasBadRune(string(out)) {
			t.Errorf("%s holds a bidi, zero-width or C1 character raw", name)
		}
		if !bytes.Contains(out, []byte(`"evil\u202etxt.exe\u200b\u009b2J"`)) {
			t.Errorf("%s does not write the name with \\u escapes:\n%.600s", name, out)
		}
	}
	var tl view.TimelineJSON
	if err := json.Unmarshal(show.Bytes(), &tl); err != nil {
		t.Fatal(err)
	}
	if tl.Session.Name != trick || tl.Session.Labels[trick] != trick || tl.Frames[0].Method != "tools/"+trick {
		t.Errorf("read back: name %q, labels %q, method %q; want the stored values", tl.Session.Name, tl.Session.Labels, tl.Frames[0].Method)
	}
}

// TestWriteSessions_Hostile: ls escapes bidi, zero-width and C1
// characters in the name and upstream.
func TestWriteSessions_Hostile(t *testing.T) {
	var out bytes.Buffer
	if err := view.WriteSessions(&out, []store.Session{hostileStdio().Session}); err != nil {
		t.Fatal(err)
	}
	if hasBadRune(out.String()) || strings.Count(out.String(), `evil\u202etxt.exe\u200b\u009b2J`) != 2 {
		t.Errorf("ls:\n%s", out.String())
	}
}
