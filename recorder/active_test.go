package recorder_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpvcr/mcpvcr/recorder"
)

// TestHTTP_ActiveCountsExchanges: Active is told the exchanges under way
// as they start and end, and a GET stream, which may stay open idle, is
// not one of them.
func TestHTTP_ActiveCountsExchanges(t *testing.T) {
	both := make(chan struct{})
	var arrived sync.WaitGroup
	arrived.Add(2)
	go func() { arrived.Wait(); close(both) }()
	up := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			http.NewResponseController(w).Flush()
			<-r.Context().Done()
			return
		}
		io.Copy(io.Discard, r.Body)
		arrived.Done()
		<-both // answer once both POSTs are under way
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, answer)
	})
	told := make(chan int, 16)
	rec := &recorder.HTTP{Active: func(n int) { told <- n }}
	srv, _ := recording(t, up, rec)
	defer rec.Close(context.Background())

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/mcp", nil)
	req.Header.Set("Accept", "text/event-stream")
	get, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer get.Body.Close()

	var posts sync.WaitGroup
	for range 2 {
		posts.Add(1)
		go func() {
			defer posts.Done()
			resp, err := http.Post(srv.URL+"/mcp", "application/json", strings.NewReader(initBody))
			if err != nil {
				t.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}()
	}
	posts.Wait()
	var seen []int
	for len(seen) < 4 {
		select {
		case n := <-told:
			seen = append(seen, n)
		case <-time.After(10 * time.Second):
			t.Fatalf("Active was told %v, and nothing more in 10 s; want [1 2 1 0]", seen)
		}
	}
	select {
	case n := <-told:
		seen = append(seen, n)
	default:
	}
	if len(seen) != 4 || seen[0] != 1 || max(seen[1], seen[2]) != 2 || seen[3] != 0 {
		t.Errorf("Active was told %v, with a GET stream open and two POSTs answered together; want [1 2 1 0]", seen)
	}
}
