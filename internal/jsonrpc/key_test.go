package jsonrpc

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// keyStrings are strings whose JSON encoding has every kind of escape:
// HTML characters, controls, U+2028, invalid and cut UTF-8, runes of
// every length.
var keyStrings = []string{
	"", "plain", `<a href="x">&amp;</a>`, "tab\tnew\nline\r\b\f\x00\x1f", "\u2028\u2029",
	"é€𝄞", "\xff\xfe", "\xe2\x82", "a\xe2\x82\xacb", "\x80\x80\x80\x80\x80", "\xf0\x9d\x84\x9e\xf0\x9d",
	`back\slash "quote"`, "\u007f\u0080\u009b\u202e",
}

// TestWriteKeyIsKey checks that WriteKey writes Key's bytes, with long
// strings cut at every chunk size (so at every place in every rune).
func TestWriteKeyIsKey(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	long := func() string {
		var b strings.Builder
		for range 20 + r.IntN(40) {
			b.WriteString(keyStrings[r.IntN(len(keyStrings))])
		}
		return b.String()
	}
	values := []any{nil, true, false, json.Number("1.5e3"), json.Number(""), json.Number("-0"), 2.5, "plain ascii ~\x7f", "", long(), json.RawMessage(`{"b":1, "a":2}`),
		map[string]any{}, []any{}, map[string]any(nil), []any(nil)}
	for range 50 {
		values = append(values, map[string]any{
			long(): long(), "<k>": []any{long(), json.Number("7"), nil, map[string]any{"z": long(), "a": false}},
			"\xff": map[string]any{}, "n": json.Number("-0.25"),
		})
	}
	for _, v := range values {
		want := Key(v)
		for chunk := 1; chunk <= 9; chunk++ {
			var got bytes.Buffer
			if err := writeKey(&got, v, chunk); err != nil {
				t.Fatalf("chunk %d: %v", chunk, err)
			}
			if got.String() != want {
				t.Fatalf("chunk %d:\n got %q\nwant %q", chunk, got.String(), want)
			}
		}
	}
}

// TestWriteKeyError checks that a value json.Marshal refuses is an error,
// where Key is "".
func TestWriteKeyError(t *testing.T) {
	v := map[string]any{"a": json.Number("not a number")}
	if Key(v) != "" {
		t.Fatalf("Key(%v) = %q, want \"\"", v, Key(v))
	}
	if err := WriteKey(new(bytes.Buffer), v); err == nil {
		t.Fatal("WriteKey of an invalid number: no error")
	}
}

// FuzzWriteKey checks WriteKey against Key on decoded JSON.
func FuzzWriteKey(f *testing.F) {
	for _, s := range keyStrings {
		b, _ := json.Marshal(map[string]any{s: []any{s, 1}})
		f.Add(b, 3)
	}
	f.Fuzz(func(t *testing.T, data []byte, chunk int) {
		d := json.NewDecoder(bytes.NewReader(data))
		d.UseNumber()
		var v any
		if d.Decode(&v) != nil {
			return
		}
		chunk = 1 + abs(chunk)%64
		var got bytes.Buffer
		if err := writeKey(&got, v, chunk); err != nil || got.String() != Key(v) {
			t.Fatalf("chunk %d: got %q (%v), want %q", chunk, got.String(), err, Key(v))
		}
	})
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// maxWriter records the longest write it was given.
type maxWriter struct{ n, most int }

func (w *maxWriter) Write(b []byte) (int, error) {
	w.n += len(b)
	w.most = max(w.most, len(b))
	return len(b), nil
}

// TestWriteKeyBounded checks that WriteKey holds no more than a few
// chunks of a huge value at once, plain text or escaped (a chunk of
// "<" is six times as long escaped).
func TestWriteKeyBounded(t *testing.T) {
	for _, s := range []string{strings.Repeat("plain text ", 100_000), strings.Repeat("<é>\n", 100_000)} {
		v := map[string]any{"text": s, "list": []any{s}}
		var w maxWriter
		if err := writeKey(&w, v, 1024); err != nil {
			t.Fatal(err)
		}
		if w.n != len(Key(v)) || w.most > 8*1024 {
			t.Errorf("%.10q...: wrote %d bytes (want %d), at most %d at once (want under 8 KiB)", s, w.n, len(Key(v)), w.most)
		}
	}
}
