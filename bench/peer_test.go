package main

import (
	"testing"

	"github.com/klauspost/compress/s2"
)

// TestPadding: -text repeat pads with one letter; -text words pads with
// words, each variant its own, which compress far less.
func TestPadding(t *testing.T) {
	if got := padding(5, 'y', 3); got != "yyyyy" {
		t.Errorf("padding(5, 'y', 3) = %q; want yyyyy", got)
	}
	textWords = true
	t.Cleanup(func() { textWords = false })
	a, b := padding(150, 'y', 1), padding(150, 'y', 2)
	if len(a) != 150 || len(b) != 150 || a == b {
		t.Fatalf("padding(150, ...) = %q and %q; want two different strings of 150 bytes", a, b)
	}
	var run []byte
	for i := range 100 {
		run = append(run, note(i)...)
	}
	if z := len(s2.Encode(nil, run)); z < len(run)/4 {
		t.Errorf("100 notes padded with words compress from %d to %d bytes; want no better than 4x", len(run), z)
	} else {
		t.Logf("100 notes padded with words: %d bytes, %d with S2 (%.1fx)", len(run), z, float64(len(run))/float64(z))
	}
}
