package jsonrpc

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name   string
		raw    string
		kind   Kind
		id     string
		method string
	}{
		{"Request", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, KindRequest, "1", "tools/list"},
		{"StringID", `{"jsonrpc":"2.0","id":"1","method":"ping"}` + "\r\n", KindRequest, `"1"`, "ping"},
		{"Notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, KindNotification, "", "notifications/initialized"},
		{"Result", `{"jsonrpc":"2.0","id":7,"result":{}}`, KindResult, "7", ""},
		{"Error", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}`, KindError, "null", ""},
		{"NotJSON", `hello`, KindInvalid, "", ""},
		{"NoVersion", `{"id":1,"method":"x"}`, KindInvalid, "", ""},
		{"MemberNamesAreCaseSensitive", `{"JSONRPC":"2.0","id":1,"Method":"x"}`, KindInvalid, "", ""},
		{"EscapedMethod", `{"jsonrpc":"2.0","id":1,"method":"tools\/list"}`, KindRequest, "1", "tools/list"},
		// Bytes that are not UTF-8 read as encoding/json reads them, with
		// or without an escape in the name.
		{"MethodNotUTF8", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\xff\xfe\"}", KindRequest, "1", "x\ufffd\ufffd"},
		{"EscapedMethodNotUTF8", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\\/x\xff\"}", KindRequest, "1", "/x\ufffd"},
		{"NullMethod", `{"jsonrpc":"2.0","id":1,"method":null,"result":{}}`, KindResult, "1", ""},
		{"Empty", "", KindEmpty, "", ""},
		{"Batch", `[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"b"}]`, KindBatch, "", ""},
		{"EmptyArray", `[]`, KindInvalid, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := Parse([]byte(tt.raw))
			if m.Kind != tt.kind || string(m.ID) != tt.id || m.Method != tt.method {
				t.Errorf("Parse(%q) = {%v %s %q}; want {%v %s %q}", tt.raw, m.Kind, m.ID, m.Method, tt.kind, tt.id, tt.method)
			}
			if string(m.Raw) != tt.raw {
				t.Errorf("Parse(%q).Raw = %q; want the input", tt.raw, m.Raw)
			}
		})
	}
	b := Parse([]byte(`[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"b"}]`))
	if got, want := len(b.Members), 2; got != want {
		t.Fatalf("batch members = %d; want %d", got, want)
	}
	if b.Members[0].Method != "a" || string(b.Members[0].ID) != "1" || b.Members[1].Kind != KindNotification {
		t.Errorf("batch members = %+v", b.Members)
	}
}

func TestSplice(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		path []string
		val  string
		want string
	}{
		{"TopID", `{"jsonrpc":"2.0", "id" : 12,"result":{"id":3}}`, []string{"id"}, `"x"`, `{"jsonrpc":"2.0", "id" : "x","result":{"id":3}}`},
		{"Nested", `{"method":"notifications/cancelled","params":{"reason":"a\"}","requestId":5}}`, []string{"params", "requestId"}, `9`, `{"method":"notifications/cancelled","params":{"reason":"a\"}","requestId":9}}`},
		{"SkipsArrays", `{"a":[{"id":1},"]"],"id":2}`, []string{"id"}, `3`, `{"a":[{"id":1},"]"],"id":3}`},
		{"LastMember", `{"x":true,"id":-1.5e3}`, []string{"id"}, `0`, `{"x":true,"id":0}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Splice([]byte(tt.raw), []byte(tt.val), tt.path...)
			if err != nil {
				t.Fatalf("Splice: %v", err)
			}
			if string(got) != tt.want {
				t.Errorf("Splice(%s) = %s; want %s", tt.raw, got, tt.want)
			}
		})
	}
	if _, err := Splice([]byte(`{"a":1}`), []byte(`1`), "id"); err == nil {
		t.Error("Splice on a missing key succeeded; want ErrNoPath")
	}
}

func FuzzSplice(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":[1,{"b":"}"}]}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		m := Parse(raw)
		if m.Kind == KindRequest || m.Kind.IsResponse() {
			out, err := Splice(raw, []byte(`"z"`), "id")
			if err != nil {
				return // duplicate keys or escaped key names; Parse saw the last one
			}
			if n := Parse(out); n.Kind != m.Kind {
				t.Fatalf("kind changed after id splice: %v -> %v (%s)", m.Kind, n.Kind, out)
			}
		}
	})
}

// TestParse_MethodAllocs: the method of a common notification costs no
// allocation; any other method is still read.
func TestParse_MethodAllocs(t *testing.T) {
	known := []byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info"}}`)
	if n := testing.AllocsPerRun(100, func() { _ = Parse(known) }); n != 0 {
		t.Errorf("Parse of a notifications/message allocates %v times; want 0", n)
	}
	if m := Parse([]byte(`{"jsonrpc":"2.0","method":"x/custom"}`)); m.Method != "x/custom" {
		t.Errorf("Method = %q; want x/custom", m.Method)
	}
}

// TestSkipString_Escapes: skipString ends a string at its closing quote
// whatever escapes come before it, escaped quotes and backslashes among
// them, and refuses a string whose last quote is escaped.
func TestSkipString_Escapes(t *testing.T) {
	for _, s := range []string{
		"", `"`, `\`, `\"`, `a\"b\\`, `""""`, strings.Repeat(`\`, 7), strings.Repeat(`\"`, 5),
		strings.Repeat("line\n", 1000) + `end"`, strings.Repeat(`\\`, 300) + `"` + strings.Repeat("\t", 300),
	} {
		tok, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		sc := &scanner{b: append(bytes.Clone(tok), `,"next"`...)}
		if err := sc.skipString(); err != nil || sc.i != len(tok) {
			t.Errorf("skipString(%.40s…) stopped at %d (%v); want %d", tok, sc.i, err, len(tok))
		}
	}
	for _, tok := range []string{`"abc\"`, `"\\\"`, `"\"\"\"`} {
		sc := &scanner{b: []byte(tok)}
		if err := sc.skipString(); err == nil {
			t.Errorf("skipString(%s) = nil; want an error for a string with no end", tok)
		}
	}
}
