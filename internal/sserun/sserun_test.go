package sserun

import (
	"testing"

	"github.com/mcpvcr/mcpvcr/internal/sse"
)

func TestBytes(t *testing.T) {
	for _, c := range []struct {
		b    string
		want int // UpTo; -1 for len(b)
	}{
		{`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"a result: an error"}}`, -1},
		{`{"jsonrpc":"2.0","id":1,"result":{}}`, 24},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":1}}`, 24},
		{`{"params":{"result" : 1}}`, 11},
		{"{\"params\":{\"error\"\n:1}}", 11},
		{`{"params":{"results":1,"errors":2,"result2":3}}`, -1},
		{`{"text":"a \"quoted\" word"}`, 11},
		{"data: {}\r\n\r\n", 8},
		{`data: {"x":"result"}`, -1},
		{`"result"`, -1},
		{``, -1},
	} {
		want := c.want
		if want < 0 {
			want = len(c.b)
		}
		if got := UpTo([]byte(c.b)); got != want {
			t.Errorf("UpTo(%q) = %d; want %d", c.b, got, want)
		}
		if got := Bytes([]byte(c.b)); got != (want == len(c.b)) {
			t.Errorf("Bytes(%q) = %v", c.b, got)
		}
	}
}

func TestFields(t *testing.T) {
	for _, c := range []struct {
		block string
		want  bool
	}{
		{"event: message\ndata: {\"method\":\"m\"}\n\n", true},
		{"data:{\"method\":\"m\"}\n\n", true},
		{"event: other\ndata: {}\n\n", true},
		{"id: 1\ndata: {}\n\n", false},
		{"retry: 10\ndata: {}\n\n", false},
		{": ping\n\n", false},
		{"event: endpoint\ndata: {}\n\n", false},
		{"data: {\ndata: }\n\n", false},
		{"data: [{}]\n\n", false},
		{"data: text\n\n", false},
		{"event: message\n\n", false},
		{"data: {}\r\n\r\n", false},
	} {
		var sp sse.Splitter
		evs := sp.Feed(nil, []byte(c.block))
		if len(evs) != 1 {
			t.Fatalf("%q: %d events", c.block, len(evs))
		}
		if got := Fields(evs[0]); got != c.want {
			t.Errorf("Fields(%q) = %v; want %v", c.block, got, c.want)
		}
	}
}

func TestBlocks(t *testing.T) {
	note := "event: message\ndata: {\"method\":\"m\"}\n\n"
	for _, c := range []struct {
		b      string
		max    int
		end, n int
	}{
		{note + note, 0, 2 * len(note), 2},
		{note + "data: {}\n\n" + note, 0, 2*len(note) + 10, 3},
		{note + "id: 1\ndata: {}\n\n" + note, 0, len(note), 1},
		{note + note[:10], 0, len(note), 1},
		{note + "event: endpoint\ndata: {}\n\n", 0, len(note), 1},
		{"data:{}\n\n", 0, 0, 0},
		{"data: {\r\n\r\n", 0, 0, 0},
		{"event: a\rb\ndata: {}\n\n", 0, 0, 0},
		{"data: {}\ndata: {}\n\n", 0, 0, 0},
		{"data: [1]\n\n", 0, 0, 0},
		{": ping\n\n" + note, 0, 0, 0},
		{note + note, len(note), 2 * len(note), 2},
		{note + note, len(note) - 1, 0, 0},
		{note, 0, len(note), 1},
	} {
		end, n := Blocks([]byte(c.b), c.max)
		if end != c.end || n != c.n {
			t.Errorf("Blocks(%q, %d) = %d, %d; want %d, %d", c.b, c.max, end, n, c.end, c.n)
			continue
		}
		// What Blocks accepts, the splitter returns as that many events
		// that Fields accepts, ending where Blocks says.
		var sp sse.Splitter
		evs := sp.Feed(nil, []byte(c.b[:end]))
		if _, rest := sp.End(); rest || len(evs) != n {
			t.Errorf("%q: the splitter found %d events in the %d bytes Blocks accepted", c.b, len(evs), end)
		}
		for _, ev := range evs {
			if !Fields(ev) {
				t.Errorf("%q: Blocks accepted %q, which Fields refuses", c.b, ev.Raw)
			}
		}
	}
}
