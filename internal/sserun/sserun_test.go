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
