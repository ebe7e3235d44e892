package verify

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/internal/storetest"
	"github.com/mcpvcr/mcpvcr/store"
)

// lateHTTPRecording is a Streamable HTTP session whose tools/call got a
// progress notification on the GET stream and then its answer as the
// POST's JSON body; the client deleted the session after both.
func lateHTTPRecording(t *testing.T) *store.Recording {
	t.Helper()
	const ms = int64(time.Millisecond)
	hdr := func(kv ...string) http.Header {
		h := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return h
	}
	post := hdr("Accept", "application/json, text/event-stream", "Content-Type", "application/json", "Mcp-Session-Id", "S1")
	progress := `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1,"message":"before"}}`
	recs := []any{
		map[string]any{"type": "mcpvcr", "version": 1},
		map[string]any{"type": "session", "id": 1, "name": "late", "transport": "http", "revision": "2025-06-18", "era": "legacy",
			"external_id": "S1", "started_at": "2026-12-03T12:00:00Z", "exit_code": -1},
		map[string]any{"type": "stream", "id": 1, "session": 1, "kind": "post", "method": "POST", "url": "/mcp", "status": 200,
			"opened_ns": 1 * ms, "closed_ns": 3 * ms, "end": "complete",
			"request_header":  hdr("Accept", "application/json, text/event-stream", "Content-Type", "application/json"),
			"response_header": hdr("Content-Type", "application/json", "Mcp-Session-Id", "S1")},
		map[string]any{"type": "stream", "id": 2, "session": 1, "kind": "post", "method": "POST", "url": "/mcp", "status": 202,
			"opened_ns": 4 * ms, "closed_ns": 5 * ms, "end": "complete", "request_header": post, "response_header": hdr()},
		map[string]any{"type": "stream", "id": 3, "session": 1, "kind": "get", "method": "GET", "url": "/mcp", "status": 200,
			"opened_ns": 6 * ms, "closed_ns": 20 * ms, "end": "complete",
			"request_header":  hdr("Accept", "text/event-stream", "Mcp-Session-Id", "S1"),
			"response_header": hdr("Content-Type", "text/event-stream")},
		map[string]any{"type": "stream", "id": 4, "session": 1, "kind": "post", "method": "POST", "url": "/mcp", "status": 200,
			"opened_ns": 8 * ms, "closed_ns": 12 * ms, "end": "complete", "request_header": post,
			"response_header": hdr("Content-Type", "application/json")},
		map[string]any{"type": "stream", "id": 5, "session": 1, "kind": "delete", "method": "DELETE", "url": "/mcp", "status": 200,
			"opened_ns": 14 * ms, "closed_ns": 15 * ms, "end": "complete", "request_header": hdr("Mcp-Session-Id", "S1"), "response_header": hdr()},
		map[string]any{"type": "frame", "session": 1, "seq": 1, "stream": 1, "dir": "c2s", "offset_ns": 1 * ms, "raw": lateInit},
		map[string]any{"type": "frame", "session": 1, "seq": 2, "stream": 1, "dir": "s2c", "offset_ns": 2 * ms, "raw": result("1", liveInit)},
		map[string]any{"type": "frame", "session": 1, "seq": 3, "stream": 2, "dir": "c2s", "offset_ns": 4 * ms, "raw": `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
		map[string]any{"type": "frame", "session": 1, "seq": 4, "stream": 4, "dir": "c2s", "offset_ns": 8 * ms, "raw": lateCall},
		map[string]any{"type": "frame", "session": 1, "seq": 5, "stream": 3, "dir": "s2c", "offset_ns": 9 * ms,
			"sse": true, "raw": "data: " + progress + "\n\n", "data": progress},
		map[string]any{"type": "frame", "session": 1, "seq": 6, "stream": 4, "dir": "s2c", "offset_ns": 11 * ms, "raw": result("2", `{"content":[]}`)},
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	for _, r := range recs {
		if err := enc.Encode(r); err != nil {
			t.Fatal(err)
		}
	}
	db, ids := storetest.Import(t, b.String())
	got, err := db.Recordings(context.Background(), ids[0])
	if err != nil {
		t.Fatal(err)
	}
	return got[0]
}

const (
	lateInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`
	lateCall = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"work","_meta":{"progressToken":"p"}}}`
)

// lateServer is a Streamable HTTP server that answers tools/call at once
// and sends the call's progress on the GET stream only after, as a server
// whose streams are written by goroutines of their own may. It notes the
// order of what it did.
type lateServer struct {
	mu       sync.Mutex
	events   []string
	progress chan struct{} // closed when the GET stream is to send the progress
}

func (s *lateServer) note(e string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = append(s.events, e)
}

func (s *lateServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		select {
		case <-s.progress:
			fmt.Fprintf(w, "data: %s\n\n", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1,"message":"before"}}`)
			w.(http.Flusher).Flush()
		case <-r.Context().Done():
		}
		<-r.Context().Done()
	case http.MethodDelete:
		s.note("delete")
	case http.MethodPost:
		body, _ := io.ReadAll(r.Body)
		m := jsonrpc.Parse(body)
		switch m.Method {
		case "initialize":
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Mcp-Session-Id", "L1")
			io.WriteString(w, result(string(m.ID), liveInit))
		case "tools/call":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, result(string(m.ID), `{"content":[]}`))
			w.(http.Flusher).Flush()
			s.note("answer")
			go func() {
				// The delay is the fault under test, not a synchronisation:
				// the progress must reach the client after the answer, with
				// nothing in between that a client could wait on.
				time.Sleep(100 * time.Millisecond)
				s.note("progress") // before it is sent: the DELETE can only follow
				close(s.progress)
			}()
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	}
}

// TestVerifier_HTTPProgressAfterAnswer: over Streamable HTTP a server may
// send a request's progress on the GET stream and its answer in the
// POST's body, and the progress can then arrive after the answer. The
// verifier waits for it, as the recorded client had, before it sends
// what the recorded client sent next (here the DELETE), rather than
// giving up on it at the answer and reporting it missing.
func TestVerifier_HTTPProgressAfterAnswer(t *testing.T) {
	rec := lateHTTPRecording(t)
	srv := &lateServer{progress: make(chan struct{})}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	if _, err := (&Verifier{Recording: rec, Timeout: 10 * time.Second}).RunHTTP(verifyCtx(t), hs.URL+"/mcp", nil, nil); err != nil {
		t.Fatalf("RunHTTP = %v", err)
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if want := []string{"answer", "progress", "delete"}; strings.Join(srv.events, " ") != strings.Join(want, " ") {
		t.Errorf("the server saw %q; want %q: the DELETE must wait for the progress the recorded client had before it", srv.events, want)
	}
}
