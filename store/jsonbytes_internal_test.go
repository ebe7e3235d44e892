package store

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzJSONBytes holds decodeJSONString, into new bytes and in place, to
// encoding/json's reading of a string.
func FuzzJSONBytes(f *testing.F) {
	for _, s := range []string{`""`, `"a"`, `"\"q\" \\ \/ \b\f\n\r\t"`, `"\u00e9\ud83d\ude00"`, `"\ud800x"`, `"\udc00"`, `"\u12"`, `"x\"`, `null`, `1`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var want string
		werr := json.Unmarshal(b, &want)
		if werr != nil {
			return // not a JSON string: encoding/json refuses it before import decodes it
		}
		for _, inPlace := range []bool{false, true} {
			text := bytes.Clone(b)
			got, gerr := decodeJSONString(text, inPlace)
			if string(bytes.Trim(b, " \t\r\n")) == "null" {
				if got != nil {
					t.Fatalf("null decoded to %q", got)
				}
				continue
			}
			if gerr != nil || string(got) != want {
				t.Fatalf("%q (in place %t): got %q (%v), encoding/json %q", b, inPlace, got, gerr, want)
			}
			if !inPlace && len(got) > 0 && &got[0] == &text[0] {
				t.Fatalf("%q: decoded into its text, not new bytes", b)
			}
		}
		var kept lineString // encoding/json hands it the value without the whitespace around it
		if err := json.Unmarshal(b, &kept); err != nil || string(bytes.Trim(b, " \t\r\n")) != "null" && string(kept) != string(bytes.Trim(b, " \t\r\n")) {
			t.Fatalf("%q kept as %q (%v)", b, kept, err)
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
