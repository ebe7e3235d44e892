package jsonrpc

import (
	"strings"
	"testing"
)

func TestMembers(t *testing.T) {
	var got []string
	err := Members([]byte(` { "a" : [1, {"b":"}"}] , "c\"d":"x\\", "e":null } `), func(name, value []byte) error {
		got = append(got, string(name)+"="+string(value))
		return nil
	})
	want := []string{`"a"=[1, {"b":"}"}]`, `"c\"d"="x\\"`, `"e"=null`}
	if err != nil || strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("Members = %q, %v; want %q", got, err, want)
	}
	if err := Members([]byte(`[1]`), func(_, _ []byte) error { return nil }); err == nil {
		t.Error("Members of an array: no error")
	}
}
