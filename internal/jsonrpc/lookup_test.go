package jsonrpc

import "testing"

func TestLookup(t *testing.T) {
	raw := []byte(`{"a":{"b":[1,2],"s":"x\"y"},"c":null}`)
	for _, tt := range []struct {
		path []string
		want string
		ok   bool
	}{
		{[]string{"a", "b"}, `[1,2]`, true},
		{[]string{"a", "s"}, `"x\"y"`, true},
		{[]string{"c"}, `null`, true},
		{[]string{"a", "z"}, ``, false},
		{[]string{"c", "d"}, ``, false},
		{[]string{"a", "b", "x"}, ``, false},
	} {
		got, ok := Lookup(raw, tt.path...)
		if ok != tt.ok || string(got) != tt.want {
			t.Errorf("Lookup(%v) = %q, %v; want %q, %v", tt.path, got, ok, tt.want, tt.ok)
		}
	}
	if _, ok := Lookup([]byte(`{"a":`), "a"); ok {
		t.Error("Lookup in truncated JSON found a value")
	}
	if n := testing.AllocsPerRun(100, func() { Lookup(raw, "_meta", "x") }); n != 0 {
		t.Errorf("Lookup of a missing key allocates %v times; want 0", n)
	}
}
