package recorder

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcpvcr/mcpvcr/store"
)

// BenchmarkSSERead: how long the Read that hands out a read of n events
// takes before it returns them (the time its first event waits), and the
// Read after it, which records them (into a sink that keeps nothing), a
// frame per event or (runs/) as one run of events (RunSink):
// go test -bench SSERead ./recorder.
func BenchmarkSSERead(b *testing.B) {
	for _, n := range []int{1, 10, 100} {
		var s strings.Builder
		for i := range n {
			fmt.Fprintf(&s, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"%0120d\"}}\n\n", i)
		}
		data := s.String()
		for _, runs := range []bool{false, true} {
			name := fmt.Sprint(n)
			var sink Sink = &countingSink{}
			if runs {
				name, sink = "runs/"+name, &runSink{}
			}
			b.Run(name, func(b *testing.B) {
				ctx := context.Background()
				rs, _ := newSession(ctx, sink, nil, nil, store.Session{})
				hs := &httpSession{session: rs, eventTo: map[string]*eventRef{}, pending: map[int64]map[string]bool{}}
				p := make([]byte, 32<<10)
				var first, second time.Duration
				for range b.N {
					x := &exchange{hs: hs, st: &store.Stream{Kind: store.PostStream}, reqIDs: map[string]bool{}}
					body := &recordingBody{h: &HTTP{}, x: x, ctx: ctx, rc: &chunks{cs: []string{data}}, sse: true}
					body.h.init()
					t0 := time.Now()
					body.Read(p)
					t1 := time.Now()
					body.Read(p)
					t2 := time.Now()
					first += t1.Sub(t0)
					second += t2.Sub(t1)
				}
				b.ReportMetric(float64(first.Nanoseconds())/float64(b.N), "first-ns/op")
				b.ReportMetric(float64(second.Nanoseconds())/float64(b.N), "next-ns/op")
			})
		}
	}
}

// runSink is a countingSink that takes runs of events (RunSink).
type runSink struct{ countingSink }

func (*runSink) TakesEventRuns() bool { return true }
