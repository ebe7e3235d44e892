package jsonval

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// TestJSONDiff: a mismatch's diff names each differing path in the
// --ignore syntax with both sides as JSON, an absent side said as such.
func TestText(t *testing.T) {
	var a, b any
	_ = json.Unmarshal([]byte(`{"name":"add","arguments":{"a":40,"b":2,"x y":[1,{"z":"old"}]}}`), &a)
	_ = json.Unmarshal([]byte(`{"name":"add","arguments":{"a":40,"b":3,"x y":[1,{"z":"new"}],"extra":true}}`), &b)
	got := Text(a, b, "params", 12)
	want := "params.arguments.b\n  - 2\n  + 3\n" +
		"params.arguments.extra\n  - (absent)\n  + true\n" +
		"params.arguments[\"x y\"][1].z\n  - \"old\"\n  + \"new\"\n"
	if got != want {
		t.Errorf("Text =\n%s\nwant\n%s", got, want)
	}
	if got := Text(a, a, "params", 12); got != "" {
		t.Errorf("Text of equal values = %q; want none", got)
	}
}

// TestDiffs_RootPaths: under no prefix, a path starts with its root key,
// without a dot, as an --ignore rule names it after "METHOD:".
func TestDiffs_RootPaths(t *testing.T) {
	a := map[string]any{"result": map[string]any{"n": 1, "": 2}}
	b := map[string]any{"result": map[string]any{"n": 2}, "x y": true}
	got := Paths(a, b, "", 10)
	want := []string{`result[""]`, "result.n", `["x y"]`}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Paths = %q; want %q", got, want)
	}
}

// TestDecode checks that decoding in place gives what a json.Decoder
// reads: volatile _meta gone, numbers as written, bad JSON and trailing
// bytes as a Decoder has them.
func TestDecode(t *testing.T) {
	huge, _ := json.Marshal(strings.Repeat("a long argument <&> é ", 10000))
	raws := []string{``, ` `, `null`, `{}`, `{"_meta":{"traceparent":"x"}}`, `{"_meta":{"traceparent":"x","k":1}}`,
		`{"a":1.50,"b":[1e2,"\u00e9\ud800"]}`, "\"\xff\"", `{"a":1} trailing`, `{"a":`, `not json`,
		strings.Repeat("[", 1000) + strings.Repeat("]", 1000), `{"text":` + string(huge) + `,"_meta":{"progressToken":1}}`}
	for _, raw := range raws {
		want := decodeFirst([]byte(raw))
		if obj, ok := want.(map[string]any); ok {
			DropVolatileMeta(obj)
		}
		if got := Decode([]byte(raw)); !reflect.DeepEqual(got, want) {
			t.Errorf("Decode(%.80q) = %.200v, want %.200v", raw, got, want)
		}
	}
}
