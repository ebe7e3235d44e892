package chaos

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
	"github.com/mcpvcr/mcpvcr/internal/sse"
	"github.com/mcpvcr/mcpvcr/store"
)

// TestChaos_SlicePieces: a sliced event is the event with CRLF line
// ends, cut inside its first line, between a CR and its LF, and inside a
// UTF-8 character of its data; an SSE parser reads the same event back.
func TestChaos_SlicePieces(t *testing.T) {
	raw := []byte("event: message\nid: e1\ndata: {\"text\":\"h\u00e9llo\"}\n\n")
	pieces := slice(raw)
	whole := bytes.Join(pieces, nil)
	if want := strings.ReplaceAll(string(raw), "\n", "\r\n"); string(whole) != want {
		t.Errorf("pieces join to %q; want %q", whole, want)
	}
	if len(pieces) != 4 {
		t.Fatalf("%d pieces %q; want 4", len(pieces), pieces)
	}
	if !bytes.HasSuffix(pieces[1], []byte("\r")) || !bytes.HasPrefix(pieces[2], []byte("\n")) {
		t.Errorf("no cut between a CR and its LF: %q", pieces)
	}
	if utf8.Valid(pieces[2]) || utf8.Valid(pieces[3]) {
		t.Errorf("no cut inside a UTF-8 character: %q", pieces)
	}
	e, err := sse.NewReader(bytes.NewReader(whole)).Next()
	if err != nil || e.ID != "e1" || string(e.Data) != "{\"text\":\"h\u00e9llo\"}" {
		t.Errorf("read back: %+v, %v", e, err)
	}
}

// TestChaos_Slicer: the echo call's answer (post#5, its event 2) sliced.
// A raw client with a WHATWG SSE parser takes it and carries on: pass;
// one that ends events only at "\n\n" never sees the answer and sends the
// request again: fail. The Go SDK client, the slicer named alone, is
// judged too.
func TestChaos_Slicer(t *testing.T) {
	recs := loadCassette(t, "gosdk-http-2025-11-25.jsonl")
	plan := []Fault{{Kind: FaultSlicer, Stream: 5, StreamKind: store.PostStream, Event: 1, Seq: 11}}
	for _, naive := range []bool{false, true} {
		h, logs := rawReplay(t, recs, Config{Seed: 1}, plan, func(url string) {
			c := newRawClient(t, url, recs[0])
			c.upTo(3)
			if naive {
				if got := naivePost(t, c, c.posts[3]); got {
					t.Errorf("the naive client read the sliced answer")
				}
				c.again(4, true) // it asks again
				return
			}
			if a := c.post(); a.err != nil || len(a.events) != 2 || !bytes.Contains(a.events[1].Data, []byte(`"result"`)) {
				t.Fatalf("POST 4: %d events, %v; want the priming event and the answer", len(a.events), a.err)
			}
			c.post()
		})
		r := oneResult(t, h, logs)
		want, says := VerdictPass, "took the sliced event and carried on"
		if naive {
			want, says = VerdictFail, "sent the request again"
		}
		if r.Verdict != want || !strings.Contains(r.Did, says) {
			t.Errorf("naive=%t: the client %s: %s; want %s saying %q", naive, r.Did, r.Verdict, want, says)
		}
	}
	srv, h := serve(recs, Config{Seed: 1, Kinds: []FaultKind{FaultSlicer}, Rate: 1}, nil)
	ts := httptest.NewServer(srv)
	saw := mcptest.ChaosRun(t.Context(), &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp", MaxRetries: 2}, &mcp.Implementation{Name: mcptest.ClientName, Version: mcptest.ClientVersion}, "script")
	ts.Close()
	srv.Close()
	res := h.Results()
	if len(res) != 1 {
		t.Fatalf("Go SDK: results %v (not reached %v); want one slicer", res, h.NotReached())
	}
	t.Logf("Go SDK client saw %q\n%s: the client %s: %s", saw, res[0].Fault, res[0].Did, res[0].Verdict)
	if res[0].Verdict != VerdictPass || !slices.Contains(saw, "close: ok") {
		t.Errorf("Go SDK: %s; want pass and the client to end its script", res[0].Verdict)
	}
}

// naivePost sends body as a POST of c's session and reads the answer as
// a broken client would: events end only at "\n\n" (a CR LF CR LF is not
// seen as an end), and what is left at the end is dropped. It reports
// whether it found a response.
func naivePost(t *testing.T, c *rawClient, body []byte) bool {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Mcp-Session-Id", c.sid)
	resp, err := c.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	blocks := strings.Split(string(b), "\n\n")
	for _, block := range blocks[:len(blocks)-1] {
		for _, line := range strings.Split(block, "\n") {
			if strings.HasPrefix(line, "data:") && strings.Contains(line, `"result"`) {
				return true
			}
		}
	}
	return false
}

// TestChaos_Reframe: a reframed event has no LF at all, and an SSE reader
// reads it back as the recorded event: its id and name, and its data,
// split over two data lines, the recorded JSON with a line feed as
// whitespace.
func TestChaos_Reframe(t *testing.T) {
	raw := []byte("id: s1_4\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"text\":\"héllo\"}}\n\n")
	b := reframe(raw)
	if bytes.IndexByte(b, '\n') >= 0 || bytes.Count(b, []byte("data: ")) != 2 {
		t.Fatalf("reframed: %q; want lone CR line ends and two data lines", b)
	}
	e, err := sse.NewReader(bytes.NewReader(b)).Next()
	if err != nil || e.ID != "s1_4" || e.Type != "message" {
		t.Fatalf("read back: %+v, %v", e, err)
	}
	var got, want bytes.Buffer
	if err := json.Compact(&got, e.Data); err != nil {
		t.Fatalf("data %q: %v", e.Data, err)
	}
	_ = json.Compact(&want, raw[bytes.Index(raw, []byte("{")):bytes.LastIndex(raw, []byte("}"))+1])
	if !bytes.Contains(e.Data, []byte("{\n")) || got.String() != want.String() {
		t.Errorf("data %q; want the recorded message, split after its {", e.Data)
	}
}
