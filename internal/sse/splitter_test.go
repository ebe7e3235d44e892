package sse

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// split feeds stream to a new Splitter in chunks cut at the given offsets,
// which must be ascending, and returns every event, the final one included.
func split(stream []byte, cuts ...int) []Event { return splitWith(false, stream, cuts...) }

// splitWith is split, with FeedOwned if owned (each chunk a copy of its
// own, handed over).
func splitWith(owned bool, stream []byte, cuts ...int) []Event {
	var (
		s      Splitter
		events []Event
		prev   int
	)
	for _, c := range append(cuts, len(stream)) {
		if owned {
			events = s.FeedOwned(events, bytes.Clone(stream[prev:c]))
		} else {
			events = s.Feed(events, stream[prev:c])
		}
		prev = c
	}
	if e, ok := s.End(); ok {
		events = append(events, e)
	}
	return events
}

// randomCuts returns ascending random offsets into a stream of length n.
func randomCuts(r *rand.Rand, n int) []int {
	var cuts []int
	for c := 0; c < n; {
		c += 1 + r.IntN(8)
		if r.IntN(4) == 0 {
			c += r.IntN(64)
		}
		if c < n {
			cuts = append(cuts, c)
		}
	}
	return cuts
}

// checkRaw checks that the Raw of events, concatenated, is stream, and that
// only the last event may be partial.
func checkRaw(t testing.TB, stream []byte, events []Event) {
	t.Helper()
	var all []byte
	for i, e := range events {
		all = append(all, e.Raw...)
		if e.Partial && i != len(events)-1 {
			t.Errorf("event %d of %d is partial", i, len(events))
		}
	}
	if !bytes.Equal(all, stream) {
		t.Errorf("concatenated Raw = %q; want %q", all, stream)
	}
}

// sameEvents reports whether a and b are equal as cmp.Diff with eventOpts
// would find them, only faster.
func sameEvents(a, b []Event) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if !bytes.Equal(x.Raw, y.Raw) || x.ID != y.ID || x.HasID != y.HasID || x.Type != y.Type ||
			!bytes.Equal(x.Data, y.Data) || x.HasData != y.HasData || x.Retry != y.Retry ||
			len(x.Comments) != len(y.Comments) || x.Comment != y.Comment || x.Partial != y.Partial || x.BOM != y.BOM || x.Size != y.Size {
			return false
		}
		for j := range x.Comments {
			if !bytes.Equal(x.Comments[j], y.Comments[j]) {
				return false
			}
		}
	}
	return true
}

func TestSameEvents(t *testing.T) {
	// sameEvents must compare every field of Event.
	if got, want := reflect.TypeFor[Event]().NumField(), 12; got != want {
		t.Errorf("Event has %d fields; sameEvents compares %d", got, want)
	}
}

// crlfStreams are streams with line endings split every way, beyond those
// of grammarTests, for chunk-boundary tests.
var crlfStreams = []string{
	"data: a\r\n\r\ndata: b\r\n\r\n",
	"data: a\r\r\n\r\r\n\n\r",
	"\r\n\r\n\r\r\n\n",
	"\uFEFF\r\r\n",
	"\uFEFF: c\r\r\n",
	"id: 1\rdata: x\r\rid: 2\r\ndata: y\r\n\r\n: z\n\n",
}

func chunkStreams() []string {
	streams := append([]string(nil), crlfStreams...)
	for _, tt := range grammarTests {
		streams = append(streams, tt.stream)
	}
	return streams
}

func TestSplitter_Feed(t *testing.T) {
	for _, tt := range grammarTests {
		t.Run(tt.name, func(t *testing.T) {
			got := split([]byte(tt.stream))
			if diff := cmp.Diff(tt.want, got, eventOpts); diff != "" {
				t.Errorf("events mismatch (-want +got):\n%s", diff)
			}
			checkRaw(t, []byte(tt.stream), got)
			// The reference parser must agree, or fuzzing against it proves nothing.
			if diff := cmp.Diff(tt.want, whatwg([]byte(tt.stream)), eventOpts); diff != "" {
				t.Errorf("whatwg() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSplitter_Feed_ChunkBoundaries cuts each stream at every offset, at
// every pair of offsets, and at random, and expects the events of the whole.
func TestSplitter_Feed_ChunkBoundaries(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i, stream := range chunkStreams() {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			in := []byte(stream)
			want := whatwg(in)
			check := func(cuts ...int) {
				t.Helper()
				for _, owned := range []bool{false, true} {
					got := splitWith(owned, in, cuts...)
					if sameEvents(want, got) {
						continue
					}
					if diff := cmp.Diff(want, got, eventOpts); diff != "" {
						t.Fatalf("split(%q, %v), owned %v: mismatch (-want +got):\n%s", stream, cuts, owned, diff)
					}
				}
			}
			for c := range len(in) + 1 {
				check(c)
			}
			if len(in) <= 80 {
				for c1 := range len(in) + 1 {
					for c2 := c1; c2 <= len(in); c2++ {
						check(c1, c2)
					}
				}
			}
			var every []int
			for c := 1; c < len(in); c++ {
				every = append(every, c)
			}
			check(every...)
			for range 50 {
				check(randomCuts(r, len(in))...)
			}
		})
	}
}

// TestSplitter_Feed_Streaming checks that Feed returns an event as soon as
// its bytes show it is complete.
func TestSplitter_Feed_Streaming(t *testing.T) {
	tests := []struct {
		name   string
		chunks []string
		want   [][]string // Raw of the events each Feed returns
		end    string     // Raw of the event End returns, if any
	}{
		{
			name:   "LF",
			chunks: []string{"data: a\n", "\n", "data: b\n\ndata: c\n\n: x", "\n\n"},
			want:   [][]string{nil, {"data: a\n\n"}, {"data: b\n\n", "data: c\n\n"}, {": x\n\n"}},
		},
		{
			name:   "CRLF",
			chunks: []string{"data: a\r\n\r\n", "data: b\r\n\r", "\n"},
			want:   [][]string{{"data: a\r\n\r\n"}, nil, {"data: b\r\n\r\n"}},
		},
		{
			name:   "CRHeldUntilNextChunk",
			chunks: []string{"data: a\r\r", "data: b\r\r"},
			want:   [][]string{nil, {"data: a\r\r"}},
			end:    "data: b\r\r",
		},
		{
			name:   "CRInsideChunk",
			chunks: []string{"data: a\r\rdata: b\r\r"},
			want:   [][]string{{"data: a\r\r"}},
			end:    "data: b\r\r",
		},
		{
			name:   "CRLFSplitMidLine",
			chunks: []string{"data: a\r", "\ndata: b\r", "\n\r", "\n"},
			want:   [][]string{nil, nil, nil, {"data: a\r\ndata: b\r\n\r\n"}},
		},
		{
			name:   "EmptyChunk",
			chunks: []string{"data: a\r\r", "", "\n"},
			want:   [][]string{nil, nil, {"data: a\r\r\n"}},
		},
		{
			name:   "Partial",
			chunks: []string{"data: a\n\ndata: b"},
			want:   [][]string{{"data: a\n\n"}},
			end:    "data: b",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s Splitter
			var evs []Event
			for i, c := range tt.chunks {
				evs = s.Feed(evs[:0], []byte(c))
				var got []string
				for _, e := range evs {
					got = append(got, string(e.Raw))
				}
				if diff := cmp.Diff(tt.want[i], got); diff != "" {
					t.Errorf("Feed(%q) mismatch (-want +got):\n%s", c, diff)
				}
			}
			e, ok := s.End()
			if got, want := ok, tt.end != ""; got != want {
				t.Fatalf("End() ok = %v; want %v", got, want)
			}
			if got, want := string(e.Raw), tt.end; got != want {
				t.Errorf("End() Raw = %q; want %q", got, want)
			}
			if got, want := e.Partial, !strings.HasSuffix(tt.end, "\r\r"); ok && got != want {
				t.Errorf("End() Partial = %v; want %v", got, want)
			}
		})
	}
}

func TestSplitter_End(t *testing.T) {
	var s Splitter
	s.Feed(nil, []byte("\uFEFFdata: a\n\ndata: b"))
	if e, ok := s.End(); !ok || !e.Partial || string(e.Raw) != "data: b" {
		t.Fatalf("End() = %+v, %v; want the partial event data: b", e, ok)
	}
	if e, ok := s.End(); ok {
		t.Fatalf("second End() = %+v, true; want nothing", e)
	}
	// After End the Splitter starts a new stream, which may open with a BOM.
	got := s.Feed(nil, []byte("\uFEFFdata: c\n\n"))
	want := []Event{{Raw: b("\uFEFFdata: c\n\n"), Data: b("c"), HasData: true, Retry: -1, BOM: true}}
	if diff := cmp.Diff(want, got, eventOpts); diff != "" {
		t.Errorf("events after End mismatch (-want +got):\n%s", diff)
	}
}

// TestSplitter_Feed_Ownership checks that events do not share memory with
// the chunks fed or with each other.
func TestSplitter_Feed_Ownership(t *testing.T) {
	var s Splitter
	chunk := []byte("data: a\n\ndata: b")
	evs := s.Feed(nil, chunk)
	evs = s.Feed(evs, []byte("\n\n"))
	for i := range chunk {
		chunk[i] = 'X'
	}
	if got, want := string(evs[0].Raw), "data: a\n\n"; got != want {
		t.Errorf("Raw after the chunk changed = %q; want %q", got, want)
	}
	data := append(evs[0].Data, "XXXXXXXXXXXXXXXX"...)
	if got, want := string(evs[0].Raw), "data: a\n\n"; got != want {
		t.Errorf("Raw after appending to Data = %q; want %q", got, want)
	}
	_ = data
	if got, want := string(evs[1].Raw), "data: b\n\n"; got != want {
		t.Errorf("second Raw = %q; want %q", got, want)
	}
}

// TestSplitter_FeedOwned: an event a chunk holds whole is in the chunk,
// with no room to grow into the bytes after it; one that began in an
// earlier chunk is a copy.
func TestSplitter_FeedOwned(t *testing.T) {
	var s Splitter
	chunk := []byte("data: a\n\ndata: b")
	evs := s.FeedOwned(nil, chunk)
	evs = s.FeedOwned(evs, []byte("\n\ndata: c\n\n"))
	if len(evs) != 3 {
		t.Fatalf("%d events; want 3", len(evs))
	}
	if &evs[0].Raw[0] != &chunk[0] || cap(evs[0].Raw) != len("data: a\n\n") {
		t.Errorf("the first event is not the chunk's first bytes, clipped: cap %d", cap(evs[0].Raw))
	}
	_ = append(evs[0].Raw, 'X')
	_ = append(evs[0].Data, 'X')
	if string(chunk) != "data: a\n\ndata: b" {
		t.Errorf("appending to an event's Raw and Data changed the chunk to %q", chunk)
	}
	chunk[len(chunk)-1] = 'X'
	if got, want := string(evs[1].Raw), "data: b\n\n"; got != want {
		t.Errorf("the event begun in the first chunk = %q after it changed; want %q", got, want)
	}
}

// TestSplitter_Feed_Large feeds events of 16 MB. A quadratic scan would not
// finish within the test timeout.
func TestSplitter_Feed_Large(t *testing.T) {
	const size = 16 << 20
	oneLine := bytes.Repeat([]byte("x"), size)
	manyLines := bytes.Repeat([]byte("0123456789abcde\n"), size/16)
	crLines := bytes.Repeat([]byte("data: 0123456\r"), size/14)
	tests := []struct {
		name     string
		stream   []byte
		wantData []byte
		chunk    int
	}{
		{
			name:     "OneDataLine",
			stream:   append(append([]byte("data: "), oneLine...), "\n\n"...),
			wantData: oneLine,
			chunk:    32 << 10,
		},
		{
			name:     "ManyDataLines",
			stream:   append(bytes.ReplaceAll(append([]byte("\n"), manyLines...), []byte("\n"), []byte("\ndata:"))[1:], "\n\n"...),
			wantData: manyLines,
			chunk:    4 << 10,
		},
		{
			name:     "CROnlyOneChunk",
			stream:   append(crLines, '\r'),
			wantData: bytes.TrimSuffix(bytes.ReplaceAll(crLines, []byte("data: 0123456\r"), []byte("0123456\n")), []byte("\n")),
			chunk:    len(crLines) + 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var cuts []int
			for c := tt.chunk; c < len(tt.stream); c += tt.chunk {
				cuts = append(cuts, c)
			}
			got := split(tt.stream, cuts...)
			if len(got) != 1 {
				t.Fatalf("got %d events; want 1", len(got))
			}
			if !bytes.Equal(got[0].Raw, tt.stream) {
				t.Errorf("Raw differs from the stream")
			}
			if !bytes.Equal(got[0].Data, tt.wantData) {
				t.Errorf("Data differs: len %d; want len %d", len(got[0].Data), len(tt.wantData))
			}
		})
	}
}

// TestSplitter_Feed_ReleasesLargeBuffer checks that a Splitter does not keep
// the buffer it grew for a large event.
func TestSplitter_Feed_ReleasesLargeBuffer(t *testing.T) {
	var s Splitter
	big := bytes.Repeat([]byte("x"), 1<<20)
	s.Feed(nil, []byte("data: "))
	for range 4 {
		s.Feed(nil, big)
	}
	if got := s.Feed(nil, []byte("\n\n")); len(got) != 1 {
		t.Fatalf("got %d events; want 1", len(got))
	}
	if got := cap(s.buf); got > keepBuf {
		t.Errorf("cap(buf) after a large event = %d; want at most %d", got, keepBuf)
	}
}

func TestSplitter_Feed_Allocs(t *testing.T) {
	stream := benchStream(100, 200)
	var s Splitter
	evs := make([]Event, 0, 128)
	allocs := testing.AllocsPerRun(10, func() {
		evs = s.Feed(evs[:0], stream)
	})
	// Raw and ID for each event; Type "message" is interned and Data is
	// shared with Raw.
	if max := float64(2*100 + 1); allocs > max {
		t.Errorf("Feed allocates %v times for 100 events; want at most %v", allocs, max)
	}
}

// benchStream returns an event stream of n MCP-like events, each with about
// size bytes of JSON data on one line.
func benchStream(n, size int) []byte {
	var out []byte
	for i := range n {
		head := fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%d,"progress":%d,"message":"`, i, i)
		pad := strings.Repeat("p", max(0, size-len(head)-4))
		out = fmt.Appendf(out, "event: message\nid: stream-1-%d\ndata: %s%s\"}}\n\n", i, head, pad)
	}
	return out
}

func BenchmarkSplitter(b *testing.B) {
	benchmarks := []struct {
		name   string
		events int
		stream []byte
		chunk  int
	}{
		{"Events100x200B/Chunk32K", 100, benchStream(100, 200), 32 << 10},
		{"Events100x200B/Chunk1K", 100, benchStream(100, 200), 1 << 10},
		{"Events16x64KB/Chunk32K", 16, benchStream(16, 64<<10), 32 << 10},
		{"Events16x64KB/Chunk4K", 16, benchStream(16, 64<<10), 4 << 10},
	}
	for _, bm := range benchmarks {
		b.Run(bm.name, func(b *testing.B) {
			var s Splitter
			evs := make([]Event, 0, 128)
			b.SetBytes(int64(len(bm.stream)))
			b.ReportAllocs()
			for b.Loop() {
				for p := bm.stream; len(p) > 0; {
					n := min(len(p), bm.chunk)
					evs = s.Feed(evs[:0], p[:n])
					p = p[n:]
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*bm.events), "ns/event")
		})
	}
}

// TestSplitter_Max feeds events longer than Max, whole and a byte at a
// time: each comes out where it ends, with its first Max bytes and its
// true length, and the events around it are whole.
func TestSplitter_Max(t *testing.T) {
	big := "data: " + strings.Repeat("x", 100) + "\n\n"
	stream := "id: 1\ndata: a\n\n" + big + "id: 3\ndata: c\n\n" + big[:50]
	for _, chunk := range []int{len(stream), 1, 7} {
		sp := Splitter{Max: 20}
		var evs []Event
		for i := 0; i < len(stream); i += chunk {
			evs = sp.Feed(evs, []byte(stream[i:min(i+chunk, len(stream))]))
		}
		if ev, ok := sp.End(); ok {
			evs = append(evs, ev)
		}
		var got []string
		for _, ev := range evs {
			got = append(got, fmt.Sprintf("%q/%d", ev.Raw, ev.Size))
		}
		want := []string{`"id: 1\ndata: a\n\n"/0`, fmt.Sprintf("%q/%d", big[:20], len(big)), `"id: 3\ndata: c\n\n"/0`, fmt.Sprintf("%q/%d", big[:20], 50)}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("chunks of %d: events mismatch (-want +got):\n%s", chunk, diff)
		}
	}
}

// FuzzSplitterMax checks, for any stream, limit and cuts, that a Splitter
// with Max finds the same events as one without, each with at most Max
// bytes of its Raw, those being the start of the whole Raw, and Size its
// whole length when it was cut.
func FuzzSplitterMax(f *testing.F) {
	for _, tt := range grammarTests {
		f.Add([]byte(tt.stream), uint64(len(tt.name)), uint8(4))
	}
	f.Add(benchStream(3, 100), uint64(0), uint8(50))
	f.Fuzz(func(t *testing.T, stream []byte, seed uint64, max uint8) {
		if max == 0 {
			return
		}
		r := rand.New(rand.NewPCG(seed, seed>>32))
		whole := split(stream)
		s := Splitter{Max: int(max)}
		var got []Event
		prev := 0
		for _, c := range append(randomCuts(r, len(stream)), len(stream)) {
			if seed%2 == 1 {
				got = s.FeedOwned(got, bytes.Clone(stream[prev:c]))
			} else {
				got = s.Feed(got, stream[prev:c])
			}
			prev = c
		}
		if e, ok := s.End(); ok {
			got = append(got, e)
		}
		if len(got) != len(whole) {
			t.Fatalf("%d events with Max %d; want %d", len(got), max, len(whole))
		}
		for i, e := range got {
			w := whole[i]
			switch {
			case len(w.Raw) <= int(max):
				if !sameEvents([]Event{w}, []Event{e}) {
					t.Fatalf("event %d (%d bytes, Max %d) differs:\n%s", i, len(w.Raw), max, cmp.Diff(w, e, eventOpts))
				}
			case len(e.Raw) != int(max) || !bytes.Equal(e.Raw, w.Raw[:max]) || e.Size != int64(len(w.Raw)):
				t.Fatalf("event %d of %d bytes cut to %q, size %d; want its first %d bytes and size %d", i, len(w.Raw), e.Raw, e.Size, max, len(w.Raw))
			}
		}
	})
}

// TestSplitter_AtBlockStart: only between whole blocks of a stream under
// way, with nothing carried over, may a caller skip whole blocks.
func TestSplitter_AtBlockStart(t *testing.T) {
	for _, c := range []struct {
		fed  []string
		want bool
	}{
		{nil, false},
		{[]string{"data: 1\n\n"}, true},
		{[]string{"data: 1\n\ndata: 2"}, false},
		{[]string{"data: 1\n\ndata: 2\n"}, false},
		{[]string{"data: 1\r\r"}, false},
		{[]string{"data: 1\r\n\r"}, false},
		{[]string{"data: 1\r\n\r", "\n"}, true},
		{[]string{"data: 1\n", "\n"}, true},
		{[]string{"\ufeffdata: 1\n\n"}, true},
	} {
		var s Splitter
		for _, p := range c.fed {
			s.Feed(nil, []byte(p))
		}
		if got := s.AtBlockStart(); got != c.want {
			t.Errorf("after %q: AtBlockStart() = %v; want %v", c.fed, got, c.want)
		}
	}
}

func TestSplitter_BlockEnd(t *testing.T) {
	for _, c := range []struct {
		fed, next string
		want      int
		atStart   bool // AtBlockStart after feeding next[:want]
	}{
		{"", "data: 1\n\ndata: 2\n\n", 9, true},                // the stream's first block
		{"data: 1\n\n", "data: 2\n\n", 0, true},                // no block under way
		{"data: 1\n\ndata: 2", "\n\ndata: 3\n\n", 2, true},     // the rest of a line
		{"data: 1\n\ndata: 2\n", "\ndata: 3\n\n", 1, true},     // the blank line alone
		{"data: 1\n\ndata: 2\n", "data: 3\n\n", 9, true},       // another line first
		{"data: 1\n\ndata: 2", "\ndata: 3", 0, false},          // no end in next
		{"data: 1\n\ndata: 2\r", "\n\ndata: 3\n\n", 2, true},   // the LF of a CRLF, then a blank line
		{"data: 1\n\ndata: 2\r\n\r", "\ndata: 3\n\n", 0, true}, // a CRLF blank line held
		{"data: 1\n\ndata: 2", "\r\rdata: 3\n\n", 11, true},    // a CR block ends first
		{"data: 1\n\ndata: 2", "\r\rdata: 3\r\n\n", 12, true},  // a CR block, then a CRLF line and a blank line
		{"data: 1\n\ndata: 22222", "\n\ndata: 3\n\n", 2, true}, // over Max
	} {
		s := Splitter{Max: 12}
		whole := s.Feed(nil, []byte(c.fed+c.next))
		s = Splitter{Max: 12}
		evs := s.Feed(nil, []byte(c.fed))
		got := s.BlockEnd([]byte(c.next))
		if got != c.want {
			t.Errorf("after %q: BlockEnd(%q) = %d; want %d", c.fed, c.next, got, c.want)
			continue
		}
		evs = s.Feed(evs, []byte(c.next[:got]))
		if got > 0 && s.AtBlockStart() != c.atStart {
			t.Errorf("after %q then %q: AtBlockStart() = %v; want %v", c.fed, c.next[:got], !c.atStart, c.atStart)
		}
		evs = s.Feed(evs, []byte(c.next[got:]))
		if diff := cmp.Diff(whole, evs); diff != "" {
			t.Errorf("%q cut at BlockEnd: events differ from a whole feed (-whole +cut):\n%s", c.fed+c.next, diff)
		}
	}
}

// TestSplitter_BlockEndAny cuts streams of every line ending at random
// places, then at BlockEnd, and requires AtBlockStart there and the
// events of a whole feed.
func TestSplitter_BlockEndAny(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	parts := []string{"data: x", "event: m", ": c", "\n", "\r", "\r\n", "\ufeff", "id: 1"}
	for range 2000 {
		var b strings.Builder
		for range rng.IntN(20) {
			b.WriteString(parts[rng.IntN(len(parts))])
		}
		stream := b.String()
		cut := rng.IntN(len(stream) + 1)
		whole := (&Splitter{Max: 8}).Feed(nil, []byte(stream))
		s := Splitter{Max: 8}
		evs := s.Feed(nil, []byte(stream[:cut]))
		rest := []byte(stream[cut:])
		if k := s.BlockEnd(rest); k > 0 {
			evs = s.Feed(evs, rest[:k])
			if !s.AtBlockStart() {
				t.Fatalf("%q cut at %d, then BlockEnd %d: not at a block's start", stream, cut, k)
			}
			rest = rest[k:]
		}
		evs = s.Feed(evs, rest)
		if diff := cmp.Diff(whole, evs, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("%q cut at %d and at BlockEnd: events differ (-whole +cut):\n%s", stream, cut, diff)
		}
	}
}

func TestSplit(t *testing.T) {
	for raw, want := range map[string][]string{
		"":                                  {},
		"data: a\n\n":                       {"a"},
		"data: a\n\ndata: b":                {"a", "b"}, // the last without its blank line
		"id: 1\ndata: a\r\n\r\ndata: b\n\n": {"a", "b"},
	} {
		evs := Split([]byte(raw))
		var got []string
		for _, e := range evs {
			got = append(got, string(e.Data))
		}
		if len(got) != len(want) || (len(got) > 0 && strings.Join(got, "|") != strings.Join(want, "|")) {
			t.Errorf("Split(%q) = %q, want %q", raw, got, want)
		}
	}
}
