package termtext_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/mcpvcr/mcpvcr/internal/termtext"
)

// hostile holds, in a JSON string, each character JSON output must write
// as an escape (issue #48): a C1 control (U+009B, the CSI that starts a
// terminal command), a right-to-left override, a zero-width space and
// the other bidi and zero-width characters.
const hostile = "evil\u202etxt.exe\u200b\u009b2J \u0080\u009f \u061c\u200e\u200f\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069 \u200c\u200d\u2060\ufeff é ✓ \u2028"

func TestJSON(t *testing.T) {
	in, err := json.Marshal(map[string]string{"name": hostile})
	if err != nil {
		t.Fatal(err)
	}
	got := termtext.JSON(in)
	want := `{"name":"evil\u202etxt.exe\u200b\u009b2J \u0080\u009f \u061c\u200e\u200f\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069 \u200c\u200d\u2060\ufeff é ✓ \u2028"}`
	if string(got) != want {
		t.Errorf("JSON(%s)\n = %s\nwant %s", in, got, want)
	}
	var back map[string]string
	if err := json.Unmarshal(got, &back); err != nil || back["name"] != hostile {
		t.Errorf("JSON's output reads back as %q, %v; want the same value %q", back["name"], err, hostile)
	}
	plain := []byte(`{"a":"héllo ✓"}`)
	if got := termtext.JSON(plain); &got[0] != &plain[0] {
		t.Errorf("JSON(%s) copied text with nothing to escape", plain)
	}
}

// TestJSONWriter: whichever way the text is cut into writes, even inside
// a character, the output is JSON's.
func TestJSONWriter(t *testing.T) {
	in, _ := json.Marshal([]string{hostile, hostile})
	want := termtext.JSON(in)
	for cut := 0; cut <= len(in); cut++ {
		var out bytes.Buffer
		w := termtext.NewJSONWriter(&out)
		for _, part := range [][]byte{in[:cut], in[cut:]} {
			for _, b := range [][]byte{part[:len(part)/2], part[len(part)/2:]} {
				if n, err := w.Write(b); n != len(b) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out.Bytes(), want) {
			t.Fatalf("cut at %d: %s\nwant %s", cut, out.Bytes(), want)
		}
	}
	// A character cut at the very end is written as it is.
	var out bytes.Buffer
	w := termtext.NewJSONWriter(&out)
	w.Write([]byte("\"a\xe2\x80"))
	w.Flush()
	if out.String() != "\"a\xe2\x80" {
		t.Errorf("an incomplete character at the end: %q", out.String())
	}
}
