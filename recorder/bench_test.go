package recorder_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

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

// BenchmarkHTTPRequestPath measures how long a request takes to reach
// the server through recorder.HTTP, against a standard-library
// passthrough in the same process: the time from the client's send to
// the upstream handler's entry, one request at a time, reported as the
// median (req-path-ns) and as the median of the proxy's part, that less
// the same time direct (proxy-ns). It isolates the work a proxy does
// before a request leaves, which make bench sees only through the noise
// of a whole round trip.
func BenchmarkHTTPRequestPath(b *testing.B) {
	var entered atomic.Int64 // the upstream handler's entry, in ns since start
	start := time.Now()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered.Store(int64(time.Since(start)))
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	}))
	defer up.Close()
	u, _ := url.Parse(up.URL)
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"bench","arguments":{}}}`)
	measure := func(b *testing.B, target string) time.Duration {
		return pathMedian(b, target, body, start, func(sent time.Duration, _ *http.Response) time.Duration {
			return time.Duration(entered.Load()) - sent
		})
	}
	runPathBench(b, up.URL, u, "req-path-ns", measure)
}

// BenchmarkHTTPFirstEvent measures how long the first event of an SSE
// answer takes to reach the client through recorder.HTTP, against a
// standard-library passthrough in the same process: the time from the
// upstream handler's flush of its first event to the client's read of
// its first bytes, one answer at a time, as the median (event-ns) and
// that less the same time direct (proxy-ns). It isolates what a proxy
// does for an answer before its first event is on its way, which make
// bench sees only through the noise of the whole round trip.
func BenchmarkHTTPFirstEvent(b *testing.B) {
	var flushed atomic.Int64 // the upstream's flush of its first event, in ns since start
	start := time.Now()
	note := "event: message\ndata: " + `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"step 1"}}` + "\n\n"
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		_, _ = io.WriteString(w, note)
		flushed.Store(int64(time.Since(start)))
		_ = rc.Flush()
		for range 9 {
			_, _ = io.WriteString(w, note)
			_ = rc.Flush()
		}
		_, _ = io.WriteString(w, "event: message\ndata: "+`{"jsonrpc":"2.0","id":1,"result":{}}`+"\n\n")
	}))
	defer up.Close()
	u, _ := url.Parse(up.URL)
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"bench","arguments":{}}}`)
	measure := func(b *testing.B, target string) time.Duration {
		buf := make([]byte, 1)
		return pathMedian(b, target, body, start, func(_ time.Duration, resp *http.Response) time.Duration {
			if _, err := io.ReadFull(resp.Body, buf); err != nil {
				b.Fatal(err)
			}
			return time.Since(start) - time.Duration(flushed.Load())
		})
	}
	runPathBench(b, up.URL, u, "event-ns", measure)
}

// benchProxy is a proxy the path benchmarks measure: new makes its
// handler for upstream u and a func that closes it.
type benchProxy struct {
	name string
	new  func(b *testing.B) (http.Handler, func())
}

// benchProxies are the standard-library passthrough and recorder.HTTP
// into a real cassette, both to upstream u.
func benchProxies(u *url.URL) []benchProxy {
	return []benchProxy{
		{"passthrough", func(*testing.B) (http.Handler, func()) {
			return &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) { pr.SetURL(u) }, FlushInterval: -1}, func() {}
		}},
		{"record", func(b *testing.B) (http.Handler, func()) {
			db, err := store.Open(context.Background(), filepath.Join(b.TempDir(), "c.db"))
			if err != nil {
				b.Fatal(err)
			}
			rec := &recorder.HTTP{Upstream: u, Sink: db}
			return rec, func() {
				_ = rec.Close(context.Background())
				_ = db.Close()
			}
		}},
	}
}

// runPathBench runs measure direct (to up) and through each of
// benchProxies(u), reporting the median it returns as metric and,
// through a proxy, that less the direct one as proxy-ns.
func runPathBench(b *testing.B, up string, u *url.URL, metric string, measure func(b *testing.B, target string) time.Duration) {
	var direct time.Duration
	b.Run("direct", func(b *testing.B) {
		direct = measure(b, up)
		b.ReportMetric(float64(direct), metric)
	})
	for _, p := range benchProxies(u) {
		b.Run(p.name, func(b *testing.B) {
			h, done := p.new(b)
			px := httptest.NewServer(h)
			defer px.Close()
			defer done()
			took := measure(b, px.URL)
			b.ReportMetric(float64(took), metric)
			if direct > 0 {
				b.ReportMetric(float64(took-direct), "proxy-ns")
			}
		})
	}
}

// pathMedian POSTs body to target once per iteration of b and returns the
// median of what took gives for each answer, told when (since start) its
// request was sent; the answer is then read to its end and closed.
func pathMedian(b *testing.B, target string, body []byte, start time.Time, took func(sent time.Duration, resp *http.Response) time.Duration) time.Duration {
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
	var ds []time.Duration
	for b.Loop() {
		sent := time.Since(start)
		resp, err := c.Post(target, "application/json", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		ds = append(ds, took(sent, resp))
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	slices.Sort(ds)
	return ds[len(ds)/2]
}
