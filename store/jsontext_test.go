package store

import (
	"encoding/json"
	"net/http"
	"testing"
)

// TestJSONText_MatchesEncodingJSON: header maps are stored as
// encoding/json would write them, escapes and key order included, so that
// cassettes written before and after agree byte for byte.
func TestJSONText_MatchesEncodingJSON(t *testing.T) {
	for _, h := range []http.Header{
		{"Content-Type": {"text/event-stream"}, "Mcp-Session-Id": {"abc"}, "A": {"1", "2"}},
		{"X-Html": {"<script>&amp;</script>"}, "X-Ctl": {"\x00\x1f\"\\\t\n"}, "X-Uni": {"é\u2028\u2029😀"}, "X-Bad": {"\xff\xfe"}},
		{"Empty": {""}, "Nil": nil, "Zero": {}},
		{"B": {"\b\f\r"}, "a": {"lower-case key sorts after upper"}, "Z\u00e9": {"x"}},
	} {
		want, err := json.Marshal(h)
		if err != nil {
			t.Fatal(err)
		}
		got, err := jsonText(h, len(h))
		if err != nil {
			t.Fatal(err)
		}
		if got != string(want) {
			t.Errorf("jsonText(%q)\n = %s\nwant %s", h, got, want)
		}
	}
}

// FuzzJSONString holds the header encoder's strings to encoding/json.
func FuzzJSONString(f *testing.F) {
	for _, s := range []string{"", "plain", "<script>&amp;</script>", "\x00\x1f\"\\\t\n\b\f\r", "é\u2028\u2029😀", "\xff\xfe", "a\xe2\x80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendJSONString(nil, s); string(got) != string(want) {
			t.Fatalf("appendJSONString(%q) = %s; want %s", s, got, want)
		}
	})
}
