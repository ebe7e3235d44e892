package store

import (
	"encoding/json"
	"testing"
)

// FuzzJSONBytes holds jsonBytes to encoding/json's reading of a string.
func FuzzJSONBytes(f *testing.F) {
	for _, s := range []string{`""`, `"a"`, `"\"q\" \\ \/ \b\f\n\r\t"`, `"\u00e9\ud83d\ude00"`, `"\ud800x"`, `"\udc00"`, `"\u12"`, `"x\"`, `null`, `1`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var want string
		werr := json.Unmarshal(b, &want)
		var got jsonBytes
		gerr := json.Unmarshal(b, &got)
		if werr != nil {
			return // not a JSON string: encoding/json refuses it before jsonBytes sees it, or jsonBytes refuses a non-string
		}
		if string(b) == "null" {
			if got != nil {
				t.Fatalf("null decoded to %q", got)
			}
			return
		}
		if gerr != nil || string(got) != want {
			t.Fatalf("%q: got %q (%v), encoding/json %q", b, got, gerr, want)
		}
	})
}

func TestKnownKeys(t *testing.T) {
	for _, tc := range []struct {
		line string
		ok   bool
	}{
		{`{"type":"frame","seq":1,"raw":"{\"a\":[1,{\"colour\":2}]}\n"}`, true},
		{` { "type" : "frame" , "data" : null , "retry" : 3 } `, true},
		{`{"type":"frame","colour":"red"}`, false},
		{`{"type":"frame","raw":"x\\\"","r\u0061w":"y"}`, true},
		{`{"type":"frame","seq":{"colour":1},"cοlour":1}`, false},
	} {
		err := knownKeys([]byte(tc.line), frameKeys)
		if (err == nil) != tc.ok {
			t.Errorf("knownKeys(%s) = %v, want ok=%v", tc.line, err, tc.ok)
		}
	}
}
