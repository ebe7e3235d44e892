package recorder_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// burst is n SSE events in one string, ending with a partial event when
// partial is set, written by the upstream in one write so that the proxy
// reads many events in one chunk.
func burst(first, n int, partial bool) string {
	var b strings.Builder
	for i := first; i < first+n; i++ {
		fmt.Fprintf(&b, "id: %d\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"n\":%d}}\n\n", i, i)
	}
	if partial {
		b.WriteString(": a comment cut by the end of the stream")
	}
	return b.String()
}

// TestHTTP_SSEBurst: when chunks complete many events, the client still
// gets exactly the upstream's bytes and every event is recorded, in order,
// with its exact bytes, also after an HTTP+SSE endpoint event the proxy
// rewrote.
func TestHTTP_SSEBurst(t *testing.T) {
	for _, tt := range []struct {
		name, method, prefix, wantPrefix string
	}{
		{"POST answer", http.MethodPost, "", ""},
		{"HTTP+SSE stream", http.MethodGet, "event: endpoint\ndata: http://%s/messages?sessionId=1\n\n", "event: endpoint\ndata: http://%s/messages?sessionId=1\n\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var upHost string
			first, second := burst(1, 37, false), burst(38, 25, true)
			up := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				upHost = r.Host
				w.Header().Set("Content-Type", "text/event-stream")
				w.WriteHeader(200)
				if tt.prefix != "" {
					fmt.Fprintf(w, tt.prefix, r.Host)
				}
				io.WriteString(w, first)
				w.(http.Flusher).Flush()
				io.WriteString(w, second)
			})
			u, db, _ := proxy(t, up)
			var body io.Reader
			if tt.method == http.MethodPost {
				body = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
			}
			req, _ := http.NewRequest(tt.method, u, body)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			want := first + second
			if tt.prefix != "" {
				// The endpoint is rewritten to the proxy's address.
				want = fmt.Sprintf(tt.wantPrefix, strings.TrimPrefix(strings.TrimSuffix(u, "/mcp"), "http://")) + want
			}
			if string(got) != want {
				t.Fatalf("client got %d bytes, want %d; first difference at %d (upstream %s)", len(got), len(want), firstDiff(string(got), want), upHost)
			}
			waitClosed(t, db, 1)
			_, fs := framesOf(t, db)
			var events []string
			for _, f := range fs {
				if f.SSE && f.Event != "endpoint" {
					events = append(events, string(f.Raw))
				}
			}
			wantEvents := strings.SplitAfter(first+second, "\n\n")
			if len(events) != len(wantEvents) {
				t.Fatalf("recorded %d events, want %d", len(events), len(wantEvents))
			}
			for i := range events {
				if events[i] != wantEvents[i] {
					t.Fatalf("event %d recorded as %q, want %q", i, events[i], wantEvents[i])
				}
			}
		})
	}
}

func firstDiff(a, b string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
