package jsonrpc

import (
	"encoding/json"
	"testing"
)

// TestErrorResponse: the id goes in byte for byte (a string id is not
// re-escaped), none is null, and data is there only when given.
func TestErrorResponse(t *testing.T) {
	tests := []struct {
		id   string
		data any
		want string
	}{
		{`"<a>"`, nil, `{"jsonrpc":"2.0","id":"<a>","error":{"code":-32019,"message":"m"}}`},
		{`7`, map[string]int{"seq": 3}, `{"jsonrpc":"2.0","id":7,"error":{"code":-32019,"message":"m","data":{"seq":3}}}`},
		{``, nil, `{"jsonrpc":"2.0","id":null,"error":{"code":-32019,"message":"m"}}`},
	}
	for _, tt := range tests {
		if got := string(ErrorResponse(json.RawMessage(tt.id), -32019, "m", tt.data)); got != tt.want {
			t.Errorf("ErrorResponse(%s) = %s; want %s", tt.id, got, tt.want)
		}
	}
}

// TestReplyEach: a request gets its answer, a batch an array of its
// requests' answers, anything else nothing.
func TestReplyEach(t *testing.T) {
	answer := func(id json.RawMessage) []byte { return append([]byte("A"), id...) }
	for in, want := range map[string]string{
		`{"jsonrpc":"2.0","id":1,"method":"x"}`: `A1`,
		`[{"jsonrpc":"2.0","id":1,"method":"x"},{"jsonrpc":"2.0","method":"n"},{"jsonrpc":"2.0","id":"b","method":"y"}]`: `[A1,A"b"]`,
		`[{"jsonrpc":"2.0","method":"n"}]`:     ``,
		`{"jsonrpc":"2.0","method":"n"}`:       ``,
		`{"jsonrpc":"2.0","id":1,"result":{}}`: ``,
	} {
		if got := string(ReplyEach(Parse([]byte(in)), answer)); got != want {
			t.Errorf("ReplyEach(%s) = %q; want %q", in, got, want)
		}
	}
}
