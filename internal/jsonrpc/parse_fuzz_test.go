package jsonrpc

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// FuzzParse checks the framing view over any bytes: Parse never panics,
// keeps the input as Raw, gives a kind consistent with the fields it
// found, only calls valid JSON a message, and splits a batch into exactly
// the elements Elements finds, byte for byte.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}` + "\r\n",
		`{"jsonrpc":"2.0","id":"a","result":{}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"x"}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}, {"jsonrpc":"2.0","method":"n"} ]`,
		`[]`, `[1]`, `{}`, ``, "  \n", `{"jsonrpc":"1.0","id":1,"method":"x"}`,
		`{"jsonrpc":"2.0","id":1,"id":2,"method":"x"}`,
		`{"jsonrpc":"2.0","id":1,"result":1,"error":{}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		m := Parse(raw)
		if !bytes.Equal(m.Raw, raw) {
			t.Fatalf("Parse(%q).Raw = %q; want the input", raw, m.Raw)
		}
		if m.Kind < KindInvalid || m.Kind > KindEmpty {
			t.Fatalf("Parse(%q).Kind = %d, out of range", raw, m.Kind)
		}
		trimmed := bytes.TrimSpace(raw)
		if (m.Kind == KindEmpty) != (len(trimmed) == 0) {
			t.Fatalf("Parse(%q).Kind = %v; empty input must be KindEmpty and only it", raw, m.Kind)
		}
		if m.Kind != KindInvalid && m.Kind != KindEmpty && !json.Valid(trimmed) {
			t.Fatalf("Parse(%q).Kind = %v for bytes that are not JSON", raw, m.Kind)
		}
		if m.Kind == KindBatch {
			checkBatch(t, trimmed, m)
			return
		}
		checkOne(t, m)
	})
}

// checkOne checks that a single message's fields agree with its kind.
func checkOne(t *testing.T, m Message) {
	t.Helper()
	switch m.Kind {
	case KindRequest:
		if m.ID == nil {
			t.Fatalf("request without id: %q", m.Raw)
		}
	case KindNotification:
		if m.ID != nil {
			t.Fatalf("notification with id %q: %q", m.ID, m.Raw)
		}
	case KindResult, KindError:
		if m.Method != "" {
			t.Fatalf("response with method %q: %q", m.Method, m.Raw)
		}
		if (m.Kind == KindResult) == (m.Result == nil) {
			t.Fatalf("kind %v with result %q: %q", m.Kind, m.Result, m.Raw)
		}
	case KindInvalid, KindEmpty:
		if m.Method != "" || len(m.Members) > 0 {
			t.Fatalf("kind %v with method %q and %d members: %q", m.Kind, m.Method, len(m.Members), m.Raw)
		}
	}
	if len(m.ID) > 0 && !json.Valid(m.ID) {
		t.Fatalf("id %q is not a JSON value: %q", m.ID, m.Raw)
	}
}

// checkBatch checks a batch's members against the element spans of the
// array.
func checkBatch(t *testing.T, trimmed []byte, m Message) {
	t.Helper()
	if len(m.Members) == 0 {
		t.Fatalf("batch without members: %q", m.Raw)
	}
	spans, err := Elements(trimmed)
	if err != nil {
		t.Fatalf("Elements(%q) = %v for a batch Parse accepted", trimmed, err)
	}
	if len(spans) != len(m.Members) {
		t.Fatalf("Elements(%q) found %d elements; Parse %d members", trimmed, len(spans), len(m.Members))
	}
	for i, sp := range spans {
		mem := m.Members[i]
		if !bytes.Equal(trimmed[sp[0]:sp[1]], mem.Raw) {
			t.Fatalf("member %d is %q; Elements span is %q", i, mem.Raw, trimmed[sp[0]:sp[1]])
		}
		if mem.Kind == KindBatch {
			t.Fatalf("member %d is a batch: %q", i, mem.Raw)
		}
		checkOne(t, mem)
	}
}

// FuzzValid checks the one-pass validator against encoding/json.Valid,
// and parseOne, which uses it, against parseDeep, the two-pass parse
// every frame went through before (segmentio's validator, then a scan).
func FuzzValid(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","a":[1,-2.5e+3,true,false,null,{}]}}`,
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"step 001 yyyyyyyyyyyyyyyyyyyyyyyy"}}`,
		`{"a":"\u00e9\n\"\\\/\b\f\r\t","b":"é","c":"\xff"}`, `{"a":"\u00g0"}`, `{"a":"` + "\x1f" + `"}`,
		` {"a" : 1 } `, `{"a":1,}`, `{,}`, `{"a"}`, `{"a":}`, `[1,2]`, `[1,]`, `"x"`, `01`, `-`, `1.`, `1e`, `-0.0e-0`,
		`{"a":tru}`, `{"a":nul}`, `{"a":[}`, `{"a":{"b":[[[]]]}}`, `{"id":1,"id":2}`, "{\"a\":\"x\"}\x00",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		ok, deep := valid(b)
		if !deep && ok != json.Valid(b) {
			t.Fatalf("valid(%q) = %v; encoding/json.Valid says %v", b, ok, !ok)
		}
		if got, want := parseOne(b), parseDeep(b); !reflect.DeepEqual(got, want) {
			t.Fatalf("parseOne(%q) = %+v; the two-pass parse gives %+v", b, got, want)
		}
	})
}

// TestValid_Deep checks that nesting beyond the validator's depth is
// still told apart: JSON or not, as segmentio's validator says.
func TestValid_Deep(t *testing.T) {
	deep := func(n int, tail string) []byte {
		return []byte(`{"jsonrpc":"2.0","id":1,"result":` + strings.Repeat("[", n) + strings.Repeat("]", n) + tail + `}`)
	}
	if m := Parse(deep(maxValidDepth+10, "")); m.Kind != KindResult {
		t.Errorf("a result nested %d deep parsed as %v; want a result", maxValidDepth+10, m.Kind)
	}
	if m := Parse(deep(maxValidDepth+10, ",")); m.Kind != KindInvalid {
		t.Errorf("bad JSON nested %d deep parsed as %v; want invalid", maxValidDepth+10, m.Kind)
	}
	if _, deep := valid(deep(maxValidDepth-5, "")); deep {
		t.Errorf("nesting of %d counted as too deep", maxValidDepth-5)
	}
}

// valid reports whether b is one JSON value between optional white
// space, as encoding/json.Valid does; deep reports nesting beyond
// maxValidDepth, for which ok is false and the answer unknown.
func valid(b []byte) (ok, deep bool) {
	v := validator{scanner: scanner{b: b}}
	v.ws()
	ok = v.value(0)
	v.ws()
	return ok && v.i == len(b), v.deep
}
