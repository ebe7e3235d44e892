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

// rootsHTTPRecording is a Streamable HTTP session whose client opened its
// GET stream after the POST of notifications/initialized had ended,
// called a tool, and stayed connected: 300 ms after initialized the server
// asked for the roots on the GET stream, the client answered, and it
// dropped the GET stream at 400 ms.
func rootsHTTPRecording(t *testing.T) *store.Recording {
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
	json202 := func(id, opened, closed int64) map[string]any {
		return map[string]any{"type": "stream", "id": id, "session": 1, "kind": "post", "method": "POST", "url": "/mcp", "status": 202,
			"opened_ns": opened * ms, "closed_ns": closed * ms, "end": "complete", "request_header": post, "response_header": hdr()}
	}
	roots := `{"jsonrpc":"2.0","id":0,"method":"roots/list"}`
	recs := []any{
		map[string]any{"type": "mcpvcr", "version": 1},
		map[string]any{"type": "session", "id": 1, "name": "roots", "transport": "http", "revision": "2025-06-18", "era": "legacy",
			"external_id": "S1", "started_at": "2026-12-03T12:00:00Z", "exit_code": -1},
		map[string]any{"type": "stream", "id": 1, "session": 1, "kind": "post", "method": "POST", "url": "/mcp", "status": 200,
			"opened_ns": 1 * ms, "closed_ns": 3 * ms, "end": "complete",
			"request_header":  hdr("Accept", "application/json, text/event-stream", "Content-Type", "application/json"),
			"response_header": hdr("Content-Type", "application/json", "Mcp-Session-Id", "S1")},
		json202(2, 4, 5),
		map[string]any{"type": "stream", "id": 3, "session": 1, "kind": "get", "method": "GET", "url": "/mcp", "status": 200,
			"opened_ns": 6 * ms, "closed_ns": 400 * ms, "end": "client-aborted",
			"request_header":  hdr("Accept", "text/event-stream", "Mcp-Session-Id", "S1"),
			"response_header": hdr("Content-Type", "text/event-stream")},
		map[string]any{"type": "stream", "id": 4, "session": 1, "kind": "post", "method": "POST", "url": "/mcp", "status": 200,
			"opened_ns": 8 * ms, "closed_ns": 12 * ms, "end": "complete", "request_header": post,
			"response_header": hdr("Content-Type", "application/json")},
		json202(5, 305, 306),
		map[string]any{"type": "frame", "session": 1, "seq": 1, "stream": 1, "dir": "c2s", "offset_ns": 1 * ms, "raw": lateInit},
		map[string]any{"type": "frame", "session": 1, "seq": 2, "stream": 1, "dir": "s2c", "offset_ns": 2 * ms, "raw": result("1", liveInit)},
		map[string]any{"type": "frame", "session": 1, "seq": 3, "stream": 2, "dir": "c2s", "offset_ns": 4 * ms, "raw": `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
		map[string]any{"type": "frame", "session": 1, "seq": 4, "stream": 4, "dir": "c2s", "offset_ns": 8 * ms, "raw": `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"work"}}`},
		map[string]any{"type": "frame", "session": 1, "seq": 5, "stream": 4, "dir": "s2c", "offset_ns": 11 * ms, "raw": result("2", `{"content":[]}`)},
		map[string]any{"type": "frame", "session": 1, "seq": 6, "stream": 3, "dir": "s2c", "offset_ns": 300 * ms,
			"sse": true, "raw": "data: " + roots + "\n\n", "data": roots},
		map[string]any{"type": "frame", "session": 1, "seq": 7, "stream": 5, "dir": "c2s", "offset_ns": 305 * ms, "raw": result("0", `{"roots":[]}`)},
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

// rootsServer is a Streamable HTTP server that takes a while to handle
// notifications/initialized, during which it notifies that its tools
// changed (on the GET stream, if one is open, as the TypeScript SDK's
// server does), and asks for the roots on the GET stream once it is
// done. It notes the order of what it did.
type rootsServer struct {
	askAfter time.Duration // how long after initialized it asks for the roots

	mu     sync.Mutex // guards events and get
	events []string
	get    chan []byte // the GET stream's events; nil while none is open
}

func (s *rootsServer) note(e string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = append(s.events, e)
}

// push sends msg on the GET stream, if one is open, and notes what it did.
func (s *rootsServer) push(msg string, what string) {
	s.mu.Lock()
	get := s.get
	s.mu.Unlock()
	if get == nil {
		s.note(what + " dropped")
		return
	}
	s.note(what + " sent") // before the send: the client may answer before this goroutine runs again
	get <- []byte(msg)
}

func (s *rootsServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		ch := make(chan []byte, 8)
		s.mu.Lock()
		s.get = ch
		s.mu.Unlock()
		s.note("get")
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		for {
			select {
			case m := <-ch:
				fmt.Fprintf(w, "data: %s\n\n", m)
				w.(http.Flusher).Flush()
			case <-r.Context().Done():
				return
			}
		}
	case http.MethodPost:
		body, _ := io.ReadAll(r.Body)
		m := jsonrpc.Parse(body)
		switch {
		case m.Method == "initialize":
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Mcp-Session-Id", "L1")
			io.WriteString(w, result(string(m.ID), liveInit))
		case m.Method == "notifications/initialized":
			time.Sleep(30 * time.Millisecond) // a delay under test, not a synchronisation: the server takes a while to handle it
			s.push(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`, "list_changed")
			w.WriteHeader(http.StatusAccepted)
			time.AfterFunc(s.askAfter, func() { s.push(`{"jsonrpc":"2.0","id":0,"method":"roots/list"}`, "roots/list") })
		case m.Method == "tools/call":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, result(string(m.ID), `{"content":[]}`))
		case m.Kind.IsResponse():
			s.note("roots answered")
			w.WriteHeader(http.StatusAccepted)
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	}
}

// TestVerifier_HTTPSessionAsRecorded: the GET stream opens after the POST
// of notifications/initialized has ended, as the recorded one did, so the
// tools/list_changed the server sends while handling it is dropped live
// as it was when recorded; and the run lasts until the recorded session
// ended, so the server's own roots/list, which came 300 ms after
// initialized and long after the last answer, is received and answered.
// A server that asks later than the recording had it (within the grace)
// is still waited for.
func TestVerifier_HTTPSessionAsRecorded(t *testing.T) {
	for _, after := range []time.Duration{200 * time.Millisecond, 600 * time.Millisecond} {
		t.Run(after.String(), func(t *testing.T) {
			t.Parallel()
			rec := rootsHTTPRecording(t)
			srv := &rootsServer{askAfter: after}
			hs := httptest.NewServer(srv)
			defer hs.Close()
			if _, err := (&Verifier{Recording: rec, Timeout: 10 * time.Second}).RunHTTP(verifyCtx(t), hs.URL+"/mcp", nil, nil); err != nil {
				t.Fatalf("RunHTTP = %v", err)
			}
			srv.mu.Lock()
			defer srv.mu.Unlock()
			if want := "list_changed dropped,get,roots/list sent,roots answered"; strings.Join(srv.events, ",") != want {
				t.Errorf("the server saw %q; want %q", strings.Join(srv.events, ","), want)
			}
		})
	}
}

// TestVerifier_HTTPServerSilent: a server that no longer asks for the
// roots costs the run the recorded time plus lateGrace, not the timeout.
func TestVerifier_HTTPServerSilent(t *testing.T) {
	rec := rootsHTTPRecording(t)
	srv := &rootsServer{askAfter: time.Hour}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	start := time.Now()
	if _, err := (&Verifier{Recording: rec, Timeout: 20 * time.Second}).RunHTTP(verifyCtx(t), hs.URL+"/mcp", nil, nil); err != nil {
		t.Fatalf("RunHTTP = %v", err)
	}
	if took := time.Since(start); took < lateGrace || took > lateGrace+5*time.Second {
		t.Errorf("the run took %v; want about the recorded 300 ms plus lateGrace (%v)", took, lateGrace)
	}
}
