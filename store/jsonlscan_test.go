package store_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mcpvcr/mcpvcr/store"
)

// TestCountSessions: an export's session records are counted and its
// header, streams and frames are not; a line whose type cannot be told
// counts, so that 0 means none for sure.
func TestCountSessions(t *testing.T) {
	d := openDB(t)
	recordSample(t, d) // two sessions
	for _, tt := range []struct {
		name string
		in   string
		want int
	}{
		{"two sessions", string(export(t, d)), 2},
		{"header only", `{"type":"mcpvcr","version":1}` + "\n", 0},
		{"empty", "", 0},
		{"not json", "hello\n", 1},
		{"type not first", `{"id":1,"type":"frame"}` + "\n", 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := store.CountSessions(strings.NewReader(tt.in))
			if err != nil || got != tt.want {
				t.Errorf("CountSessions = %d, %v; want %d", got, err, tt.want)
			}
		})
	}
}

// TestFrameLines: each frame's line is found, and a frame with none
// falls back to its session's line.
func TestFrameLines(t *testing.T) {
	d := openDB(t)
	recordSample(t, d)
	out := export(t, d)
	lines := store.FrameLines(bytes.NewReader(out))
	text := strings.Split(string(out), "\n")
	if got := lines.Line(1, 0); got < 2 || !strings.Contains(text[got-1], `"type":"session"`) {
		t.Fatalf("Line(1, 0) = %d; want the session's line", got)
	}
	if got := lines.Line(1, 1); got == 0 || !strings.Contains(text[got-1], `"type":"frame"`) || !strings.Contains(text[got-1], `"seq":1,`) {
		t.Errorf("Line(1, 1) = %d; want frame 1's line", got)
	}
	if got, want := lines.Line(1, 1<<40), lines.Line(1, 0); got != want {
		t.Errorf("Line(1, unknown seq) = %d; want the session's line %d", got, want)
	}
	if got := store.LineOf(nil).Line(1, 1); got != 0 {
		t.Errorf("LineOf(nil).Line = %d; want 0", got)
	}
}
