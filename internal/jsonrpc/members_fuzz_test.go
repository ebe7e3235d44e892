package jsonrpc

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzStrings: Strings never panics; on valid JSON it succeeds and every
// span it visits is a JSON string, and replacing every span with another
// string keeps the JSON valid. It visits exactly the strings that
// encoding/json finds as values.
func FuzzStrings(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"login","arguments":{"password":"hunter2","user":"a"}}}`,
		`[{"a":"b"},{"c":["d",{"e":"f"}]},"g",1,true,null]`,
		`{"k\"ey":"v\\"}`, `"top"`, `{}`, `[]`, `{"a":{}}`, `{"a":[]}`, `{"a":1 ,"b" : "c" }`,
		`{"a":`, `{"a" "b"}`, `[1,]`, `{,}`, `]`, `{"a":"b"}}`, "\ufeff{}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var spans [][2]int
		err := Strings(raw, func(key []byte, start, end int) {
			if start < 0 || end > len(raw) || start >= end {
				t.Fatalf("span [%d,%d) out of %d bytes", start, end, len(raw))
			}
			spans = append(spans, [2]int{start, end})
		})
		if !json.Valid(raw) {
			return
		}
		if err != nil {
			t.Fatalf("Strings(%q) = %v on valid JSON", raw, err)
		}
		var out bytes.Buffer
		last := 0
		for _, sp := range spans {
			var s string
			if e := json.Unmarshal(raw[sp[0]:sp[1]], &s); e != nil {
				t.Fatalf("span %q of %q is not a JSON string: %v", raw[sp[0]:sp[1]], raw, e)
			}
			out.Write(raw[last:sp[0]])
			out.WriteString(`"X"`)
			last = sp[1]
		}
		out.Write(raw[last:])
		if !json.Valid(out.Bytes()) {
			t.Fatalf("replacing the strings of %q gave invalid JSON %q", raw, out.Bytes())
		}
		if n := countStrings(raw); n != len(spans) {
			t.Fatalf("Strings(%q) visited %d strings; encoding/json finds %d", raw, len(spans), n)
		}
	})
}

// countStrings counts the string values (not member names) of raw, a
// valid JSON text, with encoding/json's tokenizer.
func countStrings(raw []byte) int {
	type level struct{ obj, wantKey bool }
	var st []level
	done := func() { // a value ended
		if len(st) > 0 && st[len(st)-1].obj {
			st[len(st)-1].wantKey = true
		}
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	n := 0
	for {
		tok, err := d.Token()
		if err != nil {
			return n
		}
		if len(st) > 0 && st[len(st)-1].wantKey {
			if tok == json.Delim('}') {
				st = st[:len(st)-1]
				done()
			} else {
				st[len(st)-1].wantKey = false
			}
			continue
		}
		switch tok {
		case json.Delim('{'):
			st = append(st, level{obj: true, wantKey: true})
			continue
		case json.Delim('['):
			st = append(st, level{})
			continue
		case json.Delim(']'):
			st = st[:len(st)-1]
			done()
			continue
		}
		if _, ok := tok.(string); ok {
			n++
		}
		done()
	}
}
