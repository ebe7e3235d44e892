package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpvcr/mcpvcr/store"
)

// BenchmarkAppend measures ingest into one session: Append for every
// frame, then Flush, so that every frame is committed in the time.
func BenchmarkAppend(b *testing.B) {
	for _, size := range []int{200, 2 << 10, 64 << 10} {
		b.Run(fmt.Sprintf("size=%d", size), func(b *testing.B) {
			ctx := context.Background()
			d := openDB(b)
			s := &store.Session{Transport: store.Stdio}
			must(b, d.CreateSession(ctx, s))
			st := newStdioStream(b, d, s.ID, store.StdoutStream)
			tmpl := store.Frame{SessionID: s.ID, StreamID: st.ID, Direction: store.ServerToClient, Raw: payload(size), Retry: -1}
			tmpl.Derive(st.Kind)
			b.SetBytes(int64(size))
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				f := new(store.Frame)
				*f = tmpl
				f.Seq = int64(i + 1)
				if err := d.Append(ctx, f); err != nil {
					b.Fatal(err)
				}
			}
			must(b, d.Flush(ctx))
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "frames/s")
		})
	}
}

// payload returns a JSON-RPC notification of size bytes with its newline.
func payload(size int) []byte {
	const head, tail = `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"`, `"}}` + "\n"
	return []byte(head + strings.Repeat("x", max(0, size-len(head)-len(tail))) + tail)
}
