package store

import (
	"context"
	"fmt"
	"testing"
)

// TestFrameRun: a run of small frames is cut into the largest chunk that
// fits it; a stream write, a big frame or a frame of a deleted session
// ends the run.
func TestFrameRun(t *testing.T) {
	small := func() op { return op{kind: opFrame, sessionID: 1, frame: &Frame{Raw: []byte("{}")}} }
	big := op{kind: opFrame, sessionID: 1, frame: &Frame{Raw: make([]byte, maxChunked+1)}}
	stream := op{kind: opStream, sessionID: 1}
	gone := op{kind: opFrame, sessionID: 2, frame: &Frame{Raw: []byte("{}")}}
	run := func(n int, then ...op) []op {
		var ops []op
		for range n {
			ops = append(ops, small())
		}
		return append(ops, then...)
	}
	w := &writer{deleted: map[int64]bool{2: true}}
	for _, c := range []struct {
		ops  []op
		want int
	}{
		{run(0), 1}, {run(1), 1}, {run(2), 2}, {run(3, stream), 2}, {run(7), 4}, {run(8, big), 8},
		{run(15, gone), 8}, {run(16), 16}, {run(31, stream), 16}, {run(32), 32}, {run(40), 32},
		{[]op{stream, small(), small()}, 1}, {[]op{big, small(), small()}, 1},
	} {
		if got := w.frameRun(c.ops); got != c.want {
			t.Errorf("frameRun(%d ops) = %d; want %d", len(c.ops), got, c.want)
		}
	}
}

// TestDB_ShortRuns: frames queued in runs of every length from 1 to 40,
// each run ended by a stream write, are all stored, whole and in order,
// whatever chunks the writer cuts them into.
func TestDB_ShortRuns(t *testing.T) {
	ctx := context.Background()
	d, s := httpSession(t)
	var want []string
	seq := int64(0)
	for n := 1; n <= 40; n++ {
		st := &Stream{SessionID: s.ID, Kind: PostStream}
		if err := d.OpenStream(ctx, st); err != nil {
			t.Fatal(err)
		}
		for i := range n {
			seq++
			raw := fmt.Sprintf(`{"jsonrpc":"2.0","method":"run%d","params":{"i":%d}}`, n, i)
			if i%5 == 4 { // a batch now and then, whose members go in a table of their own
				raw = fmt.Sprintf(`[{"jsonrpc":"2.0","id":%d,"method":"run%d"},{"jsonrpc":"2.0","method":"n"}]`, i, n)
			}
			f := &Frame{SessionID: s.ID, StreamID: st.ID, Seq: seq, Direction: ServerToClient, Raw: []byte(raw)}
			f.Derive(st.Kind)
			if err := d.Append(ctx, f); err != nil {
				t.Fatal(err)
			}
			want = append(want, raw)
		}
		st.End = EndComplete
		if err := d.CloseStream(ctx, st); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	fs, err := d.Frames(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != len(want) {
		t.Fatalf("got %d frames; want %d", len(fs), len(want))
	}
	for i, f := range fs {
		if f.Seq != int64(i+1) || string(f.Raw) != want[i] {
			t.Fatalf("frame %d = seq %d %q; want seq %d %q", i, f.Seq, f.Raw, i+1, want[i])
		}
		if f.Batch && (len(f.Members) != 2 || f.Members[0].Method == "" || f.Members[1].Method != "n") {
			t.Fatalf("frame %d: members %+v", i, f.Members)
		}
	}
	r, err := d.Check(ctx)
	if err != nil || !r.OK() {
		t.Errorf("Check() = %s, %v", r, err)
	}
}
