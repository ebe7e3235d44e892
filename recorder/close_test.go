package recorder_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpvcr/mcpvcr/recorder"
	"github.com/mcpvcr/mcpvcr/store"
)

// TestHTTP_CloseEndsHeldStreams: Close, called while a client holds a GET
// stream that the upstream holds open too, ends that stream (recorded as
// ended by the proxy) and returns without waiting for ctx; the server
// serving the recorder then closes at once. This is the order
// mcpvcrtest.Proxy closes in.
func TestHTTP_CloseEndsHeldStreams(t *testing.T) {
	up := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.Write([]byte(": ok\n\n"))
		http.NewResponseController(w).Flush()
		<-r.Context().Done() // held until the proxy lets go
	})
	ctx := context.Background()
	rec := &recorder.HTTP{}
	ts, db := recording(t, up, rec)

	req, _ := http.NewRequest(http.MethodGet, ts.URL+"/mcp", nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close() // the client never lets go
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET = %d; want 200, a held stream", resp.StatusCode)
	}

	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := rec.Close(cctx); err != nil {
		t.Fatalf("Close = %v", err)
	}
	if cctx.Err() != nil {
		t.Fatalf("Close waited for its ctx to end: the held stream kept it waiting")
	}
	ts.Close() // nothing left to wait for
	if err := db.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	recs, err := db.Recordings(ctx)
	if err != nil || len(recs) != 1 {
		t.Fatalf("Recordings() = %d, %v; want one session", len(recs), err)
	}
	var ends []store.End
	for _, st := range recs[0].Streams {
		ends = append(ends, st.End)
	}
	if len(ends) != 1 || ends[0] != store.EndProxyShutdown {
		t.Errorf("stream ends = %v; want one GET ended by the proxy (%v)", ends, store.EndProxyShutdown)
	}
}

// TestHTTP_CloseWhileRequestsArrive: a client that never stops sending
// (as a test's client left running does) while Close waits for the
// requests under way. Close must not race with the requests that arrive
// once it has begun (go test -race saw sync.WaitGroup's Add at zero
// beside its Wait), and must still return.
func TestHTTP_CloseWhileRequestsArrive(t *testing.T) {
	up := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
	})
	ctx := context.Background()
	rec := &recorder.HTTP{}
	ts, _ := recording(t, up, rec)

	stop := make(chan struct{})
	sent := make(chan int)
	done := make(chan struct{})
	for range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				req, _ := http.NewRequest(http.MethodPost, ts.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				resp, err := ts.Client().Do(req)
				if err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				if n == 20 {
					sent <- n
				}
			}
		}()
	}
	for range 4 {
		<-sent // every client is under way
	}
	for range 50 {
		cctx, cancel := context.WithTimeout(ctx, time.Minute)
		if err := rec.Close(cctx); err != nil {
			t.Errorf("Close = %v", err)
		}
		if cctx.Err() != nil {
			t.Errorf("Close waited for its ctx to end")
		}
		cancel()
	}
	close(stop)
	for range 4 {
		<-done
	}
}

// recording sets rec in front of upstream, recording into a new cassette,
// and returns the server serving rec and the cassette. The servers and the
// cassette close when the test ends; rec is the test's to close.
func recording(t *testing.T, upstream http.Handler, rec *recorder.HTTP) (*httptest.Server, *store.DB) {
	t.Helper()
	up := httptest.NewServer(upstream)
	t.Cleanup(up.Close)
	u, _ := url.Parse(up.URL + "/mcp")
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	rec.Upstream, rec.Sink = u, db
	ts := httptest.NewServer(rec)
	t.Cleanup(ts.Close)
	return ts, db
}

// wrappedTransport is a RoundTripper of another type than *http.Transport,
// as an instrumented program sets as http.DefaultTransport.
type wrappedTransport struct{ rt http.RoundTripper }

func (w wrappedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return w.rt.RoundTrip(r)
}

// TestHTTP_DefaultTransportReplaced: a recorder without a Transport of its
// own forwards and records when the program has replaced
// http.DefaultTransport with a RoundTripper of its own type.
func TestHTTP_DefaultTransportReplaced(t *testing.T) {
	was := http.DefaultTransport
	http.DefaultTransport = wrappedTransport{was}
	t.Cleanup(func() { http.DefaultTransport = was })
	up := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, answer)
	})
	rec := &recorder.HTTP{}
	ts, db := recording(t, up, rec)
	req, _ := http.NewRequest(http.MethodPost, ts.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(got) != answer {
		t.Fatalf("POST through the recorder = %d %q; want 200 %q", resp.StatusCode, got, answer)
	}
	if err := rec.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := db.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	recs, err := db.Recordings(context.Background())
	if err != nil || len(recs) != 1 {
		t.Fatalf("Recordings() = %d, %v; want the session", len(recs), err)
	}
}
