package jsonrpc

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// stdDecode is what Decode stands for: encoding/json's Decoder with
// UseNumber, on one value and nothing after it but white space.
func stdDecode(raw []byte) (any, bool) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil || d.InputOffset() != int64(len(bytes.TrimRight(raw, " \t\r\n"))) {
		return nil, false
	}
	return v, true
}

var decodeCases = []string{
	`{}`, `[]`, ` {"a":1, "b":[true,false,null,-0.5e+3,"x"]} `, `"é\u00e9\ud834\udd1e\"\\\/\b\f\n\r\t"`,
	`"\ud800"`, "\"\xff\xfe ok \xe2\x82\"", `{"a":1,"a":2}`, `{"<k>":{"":[{}]}}`, `0`, `-0`, `1E2`,
	`{"a":1} x`, `{"a":}`, `[1,]`, `"` + strings.Repeat("long text ", 100) + `"`, `nul`, ``, `  `,
	strings.Repeat("[", 600) + strings.Repeat("]", 600),
}

// TestDecodeIsDecoder checks Decode against encoding/json on values with
// every kind of escape, invalid UTF-8, equal keys and bad JSON.
func TestDecodeIsDecoder(t *testing.T) {
	for _, c := range decodeCases {
		checkDecode(t, []byte(c))
	}
}

// checkDecode checks that Decode decodes raw as encoding/json does, or
// fails where encoding/json does (or where raw nests too deep for it).
func checkDecode(t *testing.T, raw []byte) {
	t.Helper()
	got, ok := Decode(raw)
	want, wantOK := stdDecode(raw)
	if ok != wantOK && !(wantOK && isDeep(raw)) {
		t.Fatalf("Decode(%q) ok %v, encoding/json ok %v", raw, ok, wantOK)
	}
	if ok && !reflect.DeepEqual(got, want) {
		t.Fatalf("Decode(%q) = %#v, want %#v", raw, got, want)
	}
}

// FuzzDecode checks Decode against encoding/json.
func FuzzDecode(f *testing.F) {
	for _, c := range decodeCases {
		f.Add([]byte(c))
	}
	f.Fuzz(checkDecode)
}

// isDeep reports whether raw nests deeper than Decode goes.
func isDeep(raw []byte) bool {
	depth, most := 0, 0
	for _, c := range raw {
		switch c {
		case '[', '{':
			depth++
			most = max(most, depth)
		case ']', '}':
			depth--
		}
	}
	return most > maxValidDepth
}
