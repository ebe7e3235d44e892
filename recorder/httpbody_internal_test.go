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

// countingSink counts the bytes of the SSE frames appended to it.
type countingSink struct {
	mu       sync.Mutex
	recorded int // bytes of the events appended so far
	events   int
}

func (s *countingSink) CreateSession(context.Context, *store.Session) error { return nil }
func (s *countingSink) UpdateSession(context.Context, *store.Session) error { return nil }
func (s *countingSink) OpenStream(context.Context, *store.Stream) error     { return nil }
func (s *countingSink) CloseStream(context.Context, *store.Stream) error    { return nil }
func (s *countingSink) Append(_ context.Context, f *store.Frame) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recorded += len(f.Raw)
	s.events++
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

// TestRecordingBody_RecordsBeforeForwarding: however the upstream's bytes
// are cut, a complete event is recorded before its end is handed to the
// proxy, and the bytes handed out are the upstream's.
func TestRecordingBody_RecordsBeforeForwarding(t *testing.T) {
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
			hs := &httpSession{session: rs, eventTo: map[string]*store.Stream{}, pending: map[int64]map[string]bool{}}
			x := &exchange{hs: hs, st: &store.Stream{Kind: store.PostStream}, reqIDs: map[string]bool{}}
			b := &recordingBody{h: &HTTP{}, x: x, ctx: ctx, rc: &chunks{cs: append([]string(nil), tt.chunks...)}, sse: true}
			b.h.init()
			var got bytes.Buffer
			p := make([]byte, tt.bufLen)
			reads := 0
			for {
				n, err := b.Read(p)
				got.Write(p[:n])
				reads++
				// Every event whose end has been handed out is recorded.
				sink.mu.Lock()
				recorded := sink.recorded
				sink.mu.Unlock()
				if ends := strings.LastIndex(got.String(), "\n\n"); ends >= 0 && recorded < ends+2 && !strings.Contains(tt.name, "CR") {
					t.Fatalf("read %d: handed out %d bytes with events ending at %d, but only %d bytes of events recorded", reads, got.Len(), ends+2, recorded)
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
		})
	}
}
