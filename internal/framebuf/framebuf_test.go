package framebuf

import (
	"bytes"
	"testing"
)

func TestAppend(t *testing.T) {
	for _, c := range []struct {
		name            string
		chunks, limit   int
		size            int64
		wantLen, maxCap int
		wantCapAtLeast  int
	}{
		{"small", 10, 0, 0, 10 * 1000, 16 << 10, 0},
		{"over the limit", 100, 50_000, 0, 50_000, 50_000, 50_000},
		{"announced", 100, 0, 100_000, 100_000, 100_000, 100_000},
		{"announced over the limit", 100, 60_000, 100_000, 60_000, 60_000, 60_000},
	} {
		t.Run(c.name, func(t *testing.T) {
			chunk := bytes.Repeat([]byte("x"), 1000)
			var b []byte
			for range c.chunks {
				b, _ = Append(b, chunk, c.limit, c.size)
			}
			if len(b) != c.wantLen || cap(b) > c.maxCap || cap(b) < c.wantCapAtLeast {
				t.Errorf("len %d cap %d; want len %d, cap in [%d, %d]", len(b), cap(b), c.wantLen, c.wantCapAtLeast, c.maxCap)
			}
		})
	}
}

// TestAppend_BigFrameOneBuffer: past Step a frame under a limit is made
// once with room for the limit, not copied into ever larger buffers.
func TestAppend_BigFrameOneBuffer(t *testing.T) {
	const limit = 3 * Step
	chunk := make([]byte, 64<<10)
	var b []byte
	grows := 0
	for len(b) < 2*Step {
		before := cap(b)
		var kept int
		b, kept = Append(b, chunk, limit, 0)
		if kept != len(chunk) {
			t.Fatalf("kept %d of %d", kept, len(chunk))
		}
		if cap(b) != before {
			grows++
		}
	}
	if cap(b) != limit {
		t.Errorf("cap %d; want the limit %d", cap(b), limit)
	}
	if grows > 20 {
		t.Errorf("%d buffers made; want about log2(Step) of them and one more", grows)
	}
}
