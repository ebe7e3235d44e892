package verify

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpvcr/mcpvcr/diff"
	"github.com/mcpvcr/mcpvcr/internal/causal"
	"github.com/mcpvcr/mcpvcr/store"
)

// TestDisorder finds where a run left the recorded causal order: a run
// that sent the frame after notifications/initialized before the
// notification's 202 had come back.
func TestDisorder(t *testing.T) {
	recs, err := store.LoadFile(context.Background(), filepath.Join("..", "cassettes", "multi-gosdk-http-json.jsonl"), 1)
	if err != nil {
		t.Fatal(err)
	}
	expected := recs[0]
	if seq, why := disorder(causal.New(expected), expected); seq != 0 {
		t.Fatalf("disorder(recording, itself) = %d, %q; want 0", seq, why)
	}
	// The run: the same, but the initialized POST answered only after the
	// next POST went out.
	run := *expected
	run.Streams = append([]store.Stream(nil), expected.Streams...)
	var next int64
	for i, f := range run.Frames {
		if f.Method != "notifications/initialized" {
			continue
		}
		for j := i + 1; j < len(run.Frames); j++ {
			if g := run.Frames[j]; g.Direction == store.ClientToServer {
				next = g.Seq
				for k := range run.Streams {
					if run.Streams[k].ID == f.StreamID {
						run.Streams[k].Closed = g.Offset + 1
					}
				}
				break
			}
		}
		break
	}
	if next == 0 {
		t.Fatal("no frame after notifications/initialized")
	}
	if seq, why := disorder(causal.New(expected), &run); seq != next {
		t.Errorf("disorder = %d (%s); want %d", seq, why, next)
	}
}

func TestUntainted(t *testing.T) {
	learned, err := diff.ParseNoise("#3:result.a\n#9:result.b\nserver:notifications\ntools/list:result.c")
	if err != nil {
		t.Fatal(err)
	}
	keep, dropped := untainted(learned, 9)
	if diff := cmp.Diff("#3:result.a\ntools/list:result.c", keep.String()); diff != "" {
		t.Errorf("kept (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff("#9:result.b\nserver:notifications", dropped.String()); diff != "" {
		t.Errorf("dropped (-want +got):\n%s", diff)
	}
	if keep, _ := untainted(learned, 0); keep.String() != learned.String() {
		t.Errorf("untainted(learned, 0) dropped paths: %s", keep)
	}
}
