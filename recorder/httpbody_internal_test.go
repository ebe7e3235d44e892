package recorder

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/mcpvcr/mcpvcr/store"
)

// countingSink counts the bytes of the SSE frames appended to it, and
// notes their seqs in the order they came.
type countingSink struct {
	mu       sync.Mutex
	recorded int // bytes of the events appended so far
	events   int
	seqs     []int64
	sse      []bool // whether each frame appended was an SSE event
}

func (s *countingSink) CreateSession(context.Context, *store.Session) error { return nil }
func (s *countingSink) UpdateSession(context.Context, *store.Session) error { return nil }
func (s *countingSink) OpenStream(context.Context, *store.Stream) error     { return nil }
func (s *countingSink) CloseStream(context.Context, *store.Stream) error    { return nil }
func (s *countingSink) Append(_ context.Context, f *store.Frame) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f.SSE {
		s.recorded += len(f.Raw)
	}
	s.events++
	s.seqs = append(s.seqs, f.Seq)
	s.sse = append(s.sse, f.SSE)
	return nil
}

// chunks is an io.ReadCloser that returns one chunk per Read.
type chunks struct{ cs []string }

func (c *chunks) Read(p []byte) (int, error) {
	if len(c.cs) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.cs[0])
	c.cs[0] = c.cs[0][n:]
	if c.cs[0] == "" {
		c.cs = c.cs[1:]
	}
	return n, nil
}
func (c *chunks) Close() error { return nil }

// TestRecordingBody_ForwardsBeforeRecording: however the upstream's bytes
// are cut, a complete event takes its place in the session's order
// before its end is handed to the proxy, and is recorded by the next Read
// (the proxy's, after it has forwarded the bytes); the bytes handed out
// are the upstream's. A frame of the client's that follows an event it
// received (its effect) comes after it in the session, and reaches the
// sink after it; one that follows a Read comes before the events that
// Read did not hand out.
func TestRecordingBody_ForwardsBeforeRecording(t *testing.T) {
	var stream strings.Builder
	for i := range 40 {
		fmt.Fprintf(&stream, "id: %d\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":{\"i\":%d}}\n\n", i, i)
	}
	all := stream.String()
	for _, tt := range []struct {
		name   string
		chunks []string
		bufLen int
	}{
		{"one chunk", []string{all}, 64 << 10},
		{"one chunk, small reads", []string{all}, 50},
		{"cut mid-event", []string{all[:1000], all[1000:1001], all[1001:]}, 64 << 10},
		{"CR-terminated held event", []string{"data: a\r\r", "\ndata: b\r\rdata: c\r\r" + all}, 64 << 10},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			sink := &countingSink{}
			rs, err := newSession(ctx, sink, nil, nil, store.Session{})
			if err != nil {
				t.Fatal(err)
			}
			hs := &httpSession{session: rs, eventTo: map[string]*eventRef{}, pending: map[int64]map[string]bool{}}
			x := &exchange{hs: hs, st: &store.Stream{Kind: store.PostStream}, reqIDs: map[string]bool{}}
			b := &recordingBody{h: &HTTP{}, x: x, ctx: ctx, rc: &chunks{cs: append([]string(nil), tt.chunks...)}, sse: true}
			b.h.init()
			var got bytes.Buffer
			p := make([]byte, tt.bufLen)
			reads, before, reactions := 0, 0, 0
			var after []int // the events handed out before each reaction
			for {
				n, err := b.Read(p)
				got.Write(p[:n])
				reads++
				sink.mu.Lock()
				recorded := sink.recorded
				sink.mu.Unlock()
				if !strings.Contains(tt.name, "CR") {
					// Events handed out before this Read are recorded.
					if recorded < before {
						t.Fatalf("read %d: events ending at %d were handed out by the reads before, but only %d bytes of events recorded", reads, before, recorded)
					}
					if ends := strings.LastIndex(got.String(), "\n\n"); ends >= 0 {
						before = ends + 2
					}
				}
				if n > 0 && reads%3 == 0 {
					// The client reacts to what it got.
					after = append(after, strings.Count(got.String(), "\n\n"))
					hs.append(ctx, &store.Stream{Kind: store.PostStream}, store.ClientToServer,
						&store.Frame{Raw: []byte(`{"jsonrpc":"2.0","method":"notifications/progress"}`)})
					reactions++
				}
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			want := strings.Join(tt.chunks, "")
			if got.String() != want {
				t.Fatalf("handed out %q\nwant %q", got.String(), want)
			}
			if sink.recorded != len(want) {
				t.Errorf("recorded %d bytes of events, want all %d", sink.recorded, len(want))
			}
			for i, seq := range sink.seqs {
				if seq != int64(i+1) {
					t.Fatalf("the sink got seqs %v; want 1, 2, 3, ... in order", sink.seqs)
				}
			}
			if strings.Contains(tt.name, "CR") {
				return // a held event is handed out before it is complete
			}
			// Each reaction has, before it in the session, exactly the
			// events handed out before it was made.
			events, k := 0, 0
			for _, sse := range sink.sse {
				if sse {
					events++
					continue
				}
				if events != after[k] {
					t.Errorf("reaction %d comes after %d events in the session; %d were handed out before it", k+1, events, after[k])
				}
				k++
			}
			if k != reactions {
				t.Errorf("the sink got %d reactions; want %d", k, reactions)
			}
		})
	}
}

// TestRecordingBody_ConcurrentStreams: streams of one session read at once
// each record all their events, in their order, while the other's writes
// split and record them (go test -race watches the splitter handed over).
func TestRecordingBody_ConcurrentStreams(t *testing.T) {
	ctx := context.Background()
	sink := &orderSink{}
	rs, err := newSession(ctx, sink, nil, nil, store.Session{})
	if err != nil {
		t.Fatal(err)
	}
	hs := &httpSession{session: rs, eventTo: map[string]*eventRef{}, pending: map[int64]map[string]bool{}}
	const streams, events = 4, 300
	var wg sync.WaitGroup
	for s := range streams {
		var stream strings.Builder
		for i := range events {
			fmt.Fprintf(&stream, "data: {\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":{\"s\":%d,\"i\":%d}}\n\n", s, i)
		}
		all := stream.String()
		var cs []string
		for len(all) > 0 {
			n := min(len(all), 97+s*13) // cut mid-event, differently per stream
			cs, all = append(cs, all[:n]), all[n:]
		}
		st := &store.Stream{Kind: store.PostStream, ID: int64(s + 1)}
		b := &recordingBody{h: &HTTP{}, x: &exchange{hs: hs, st: st, reqIDs: map[string]bool{}}, ctx: ctx, rc: &chunks{cs: cs}, sse: true}
		b.h.init()
		wg.Go(func() {
			_, err := io.Copy(io.Discard, struct{ io.Reader }{b})
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if len(sink.frames) != streams*events {
		t.Fatalf("the sink got %d frames; want %d", len(sink.frames), streams*events)
	}
	next := make([]int, streams)
	for i, f := range sink.frames {
		if f.Seq != int64(i+1) {
			t.Fatalf("frame %d of the sink has seq %d; want %d", i, f.Seq, i+1)
		}
		s := int(f.StreamID - 1)
		want := fmt.Sprintf("\"params\":{\"s\":%d,\"i\":%d}", s, next[s])
		if !strings.Contains(string(f.Raw), want) {
			t.Fatalf("frame %d of stream %d is %q; want the event with %s", next[s], s, f.Raw, want)
		}
		next[s]++
	}
}

// orderSink keeps the frames appended to it, in order.
type orderSink struct {
	countingSink
	frames []*store.Frame
}

func (s *orderSink) Append(ctx context.Context, f *store.Frame) error {
	s.mu.Lock()
	s.frames = append(s.frames, f)
	s.mu.Unlock()
	return nil
}
