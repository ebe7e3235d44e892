package store_test

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpvcr/mcpvcr/store"
)

// BenchmarkAppend measures ingest into one session: Append for every
// frame, then Flush, so that every frame is committed in the time. Lines
// of 200 B, 2 KB and 64 KB on a stdio stream, and SSE events of about
// 200 B as an HTTP answer streams them. Besides the wall time it reports
// the CPU time of the whole process per frame (cpu-ns/op), which the other
// processes of a shared machine disturb far less.
func BenchmarkAppend(b *testing.B) {
	for _, size := range []int{200, 2 << 10, 64 << 10, -200} {
		name := fmt.Sprintf("size=%d", size)
		if size < 0 {
			name = fmt.Sprintf("sse=%d", -size)
		}
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			d := openDB(b)
			s := &store.Session{Transport: store.Stdio}
			must(b, d.CreateSession(ctx, s))
			st := newStdioStream(b, d, s.ID, store.StdoutStream)
			tmpl := store.Frame{SessionID: s.ID, StreamID: st.ID, Direction: store.ServerToClient, Raw: payload(size), Retry: -1}
			isSSE := size < 0
			if isSSE {
				data := payload(-size - len("event: message\ndata: \n\n") + 1)
				data = data[:len(data)-1]
				tmpl.Raw = []byte("event: message\ndata: " + string(data) + "\n\n")
				tmpl.Data, tmpl.SSE, tmpl.Event = data, true, "message"
				size = len(tmpl.Raw)
			}
			tmpl.Derive(st.Kind)
			b.SetBytes(int64(size))
			b.ReportAllocs()
			cpu0 := cpuTime(b)
			b.ResetTimer()
			for i := range b.N {
				f := new(store.Frame)
				*f = tmpl
				f.Seq = int64(i + 1)
				if isSSE {
					f.Data = append([]byte(nil), tmpl.Data...) // as the recorder copies it
				}
				if err := d.Append(ctx, f); err != nil {
					b.Fatal(err)
				}
			}
			must(b, d.Flush(ctx))
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "frames/s")
			b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// cpuTime returns the CPU time the process has used, user and system.
func cpuTime(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// payload returns a JSON-RPC notification of size bytes with its newline.
func payload(size int) []byte {
	const head, tail = `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"`, `"}}` + "\n"
	return []byte(head + strings.Repeat("x", max(0, size-len(head)-len(tail))) + tail)
}

// BenchmarkExchanges measures what the store costs an HTTP recording of
// one POST at a time: each exchange opens a stream, appends the request
// and a 2 KB answer, and closes the stream, which asks for a commit.
// paced sends them as a client at c=1 does (one every 500 µs), unpaced
// as fast as the store takes them, as many clients at once do. It reports
// the CPU time of the process per exchange (cpu-ns/op), the writer's and
// the checkpointer's included.
func BenchmarkExchanges(b *testing.B) {
	for _, pace := range []time.Duration{500 * time.Microsecond, 0} {
		name := "paced"
		if pace == 0 {
			name = "unpaced"
		}
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			d := openDB(b)
			s := &store.Session{Transport: store.StreamableHTTP}
			must(b, d.CreateSession(ctx, s))
			req := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`)
			answer := payload(2 << 10)
			var seq int64
			var tick <-chan time.Time
			if pace > 0 {
				t := time.NewTicker(pace)
				defer t.Stop()
				tick = t.C
			}
			cpu0 := cpuTime(b)
			b.ResetTimer()
			for range b.N {
				if tick != nil {
					<-tick
				}
				st := &store.Stream{SessionID: s.ID, Kind: store.PostStream, Method: "POST"}
				must(b, d.OpenStream(ctx, st))
				for i, raw := range [][]byte{req, answer} {
					seq++
					f := &store.Frame{SessionID: s.ID, StreamID: st.ID, Seq: seq, Direction: store.Direction(i + 1), Raw: raw, Retry: -1}
					f.Derive(st.Kind)
					must(b, d.Append(ctx, f))
				}
				st.End = store.EndComplete
				must(b, d.CloseStream(ctx, st))
			}
			must(b, d.Flush(ctx))
			b.StopTimer()
			b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}
