package jsonrpc

import (
	"context"
	"io"
	"slices"
	"strings"
	"testing"
)

func TestReadLines(t *testing.T) {
	lines, errc := make(chan []byte, 10), make(chan error, 1)
	ReadLines(context.Background(), strings.NewReader("a\n\n  \nb\r\nc"), lines, errc)
	close(lines)
	var got []string
	for l := range lines {
		got = append(got, string(l))
	}
	if want := []string{"a\n", "b\r\n", "c"}; !slices.Equal(got, want) {
		t.Errorf("lines = %q, want %q", got, want)
	}
	if err := <-errc; err != io.EOF {
		t.Errorf("err = %v, want EOF", err)
	}
	if got := string(Line([]byte("x"))); got != "x\n" {
		t.Errorf("Line(x) = %q", got)
	}
	if got := string(Line([]byte("x\n"))); got != "x\n" {
		t.Errorf("Line(x\\n) = %q", got)
	}
}

func TestIDs(t *testing.T) {
	for _, tt := range []struct {
		in       string
		req, res []string
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"a"}`, []string{"1"}, nil},
		{`{"jsonrpc":"2.0","method":"n"}`, nil, nil},
		{`{"jsonrpc":"2.0","id":"x","result":{}}`, nil, []string{`"x"`}},
		{`{"jsonrpc":"2.0","id":2,"error":{"code":1,"message":"m"}}`, nil, []string{"2"}},
		{`[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"n"},{"jsonrpc":"2.0","id":3,"method":"b"}]`, []string{"1", "3"}, nil},
		{`[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":4,"method":"b"}]`, []string{"4"}, []string{"1"}},
	} {
		m := Parse([]byte(tt.in))
		if got := m.RequestIDs(); !slices.Equal(got, tt.req) {
			t.Errorf("%s: RequestIDs = %q, want %q", tt.in, got, tt.req)
		}
		if got := m.ResponseIDs(); !slices.Equal(got, tt.res) {
			t.Errorf("%s: ResponseIDs = %q, want %q", tt.in, got, tt.res)
		}
	}
}
