package recorder_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpvcr/mcpvcr/recorder"
	"github.com/mcpvcr/mcpvcr/store"
)

// BenchmarkHTTP measures one answer through recorder.HTTP into a real
// cassette, per answer: a 2 KB JSON result, and an SSE stream of 99
// notifications of about 200 B and the result. Client, server and proxy
// share this process, so the time is only a rough guide (make bench
// measures them apart); it is for the allocations, which
// go test -bench HTTP -benchmem ./recorder reports, and for
// -memprofile.
func BenchmarkHTTP(b *testing.B) {
	note := `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","logger":"bench","data":"` +
		strings.Repeat("y", 120) + `"}}`
	result := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` + strings.Repeat("x", 1950) + `"}]}}`
	for _, sse := range []bool{false, true} {
		name := "json"
		if sse {
			name = "sse"
		}
		b.Run(name, func(b *testing.B) {
			peer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.ReadAll(r.Body)
				if !sse {
					w.Header().Set("Content-Type", "application/json")
					_, _ = io.WriteString(w, result)
					return
				}
				w.Header().Set("Content-Type", "text/event-stream")
				rc := http.NewResponseController(w)
				for range 99 {
					_, _ = io.WriteString(w, "event: message\ndata: "+note+"\n\n")
					_ = rc.Flush()
				}
				_, _ = io.WriteString(w, "event: message\ndata: "+`{"jsonrpc":"2.0","id":1,"result":{}}`+"\n\n")
			}))
			defer peer.Close()
			u, _ := url.Parse(peer.URL)
			db, err := store.Open(context.Background(), filepath.Join(b.TempDir(), "c.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			rec := &recorder.HTTP{Upstream: u, Sink: db}
			px := httptest.NewServer(rec)
			defer px.Close()
			c := px.Client()
			body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"bench"}}`)
			b.ReportAllocs()
			for b.Loop() {
				resp, err := c.Post(px.URL, "application/json", bytes.NewReader(body))
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			b.StopTimer()
			px.Close()
			if err := rec.Close(context.Background()); err != nil {
				b.Fatal(err)
			}
		})
	}
}
