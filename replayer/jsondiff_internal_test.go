package replayer

import (
	"encoding/json"
	"testing"
)

// TestJSONDiff: a mismatch's diff names each differing path in the
// --ignore syntax with both sides as JSON, an absent side said as such.
func TestJSONDiff(t *testing.T) {
	var a, b any
	_ = json.Unmarshal([]byte(`{"name":"add","arguments":{"a":40,"b":2,"x y":[1,{"z":"old"}]}}`), &a)
	_ = json.Unmarshal([]byte(`{"name":"add","arguments":{"a":40,"b":3,"x y":[1,{"z":"new"}],"extra":true}}`), &b)
	got := jsonDiff(a, b, "params", 12)
	want := "params.arguments.b\n  - 2\n  + 3\n" +
		"params.arguments.extra\n  - (absent)\n  + true\n" +
		"params.arguments[\"x y\"][1].z\n  - \"old\"\n  + \"new\"\n"
	if got != want {
		t.Errorf("jsonDiff =\n%s\nwant\n%s", got, want)
	}
	if got := jsonDiff(a, a, "params", 12); got != "" {
		t.Errorf("jsonDiff of equal values = %q; want none", got)
	}
}
