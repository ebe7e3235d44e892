package store

import (
	"bytes"
	"testing"
)

var sseDataCases = []struct{ raw, data string }{
	{"data: {\"a\":1}\n\n", `{"a":1}`},
	{"id: 3\nevent: message\ndata: x\n\n", "x"},
	{"data:x\n\n", "x"},
	{"data:  two spaces\n\n", " two spaces"},
	{"data: a\ndata: b\n\n", "a\nb"},
	{"data\ndata: b\n\n", "\nb"},
	{": comment\ndata: x\n\n", "x"},
	{"data: x\n\n", "y"},
	{"data: x\n\n", "x\n"},
	{"data: a\ndata: b\n\n", "a"},
	{"id: 1\n\n", "x"},
	{"data: x\r\n\r\n", "x"},
	{"\xef\xbb\xbfdata: x\n\n", "x"},
	{"data: x\n\ndata: y\n\n", "x"},
	{"data: x", "x"},
	{"\ndata: x\n\n", "x"},
	{"datax: y\ndata: x\n\n", "x"},
	{"Data: x\n\n", "x"},
	// Events cut short (oversize frames keep only their first bytes).
	{"data: x\n", "x"},
	{"data: {\"a\":1", `{"a":1`},
	{"event: message\ndata: {\"a\":", `{"a":`},
	{"data: a\ndata: b", "a\nb"},
	{"data: a\ndata: b", "a"},
	{"data: a\nda", "a"},
	{"data", "x"},
	{"id: 1\ndata: x\n", "y"},
	{": c\ndata: x\r", "x"},
}

// TestSSEDataIs: the in-place comparison agrees with splitting the event.
func TestSSEDataIs(t *testing.T) {
	for _, c := range sseDataCases {
		want := bytes.Equal(sseData([]byte(c.raw)), []byte(c.data))
		if got := sseDataIs([]byte(c.raw), []byte(c.data)); got != want {
			t.Errorf("sseDataIs(%q, %q) = %v; want %v", c.raw, c.data, got, want)
		}
	}
}

func FuzzSSEDataIs(f *testing.F) {
	for _, c := range sseDataCases {
		f.Add([]byte(c.raw), []byte(c.data))
	}
	f.Fuzz(func(t *testing.T, raw, data []byte) {
		if len(data) == 0 {
			return // storedData only asks about non-empty data
		}
		want := bytes.Equal(sseData(raw), data)
		if got := sseDataIs(raw, data); got != want {
			t.Errorf("sseDataIs(%q, %q) = %v; sseData says %v", raw, data, got, want)
		}
		// The data the event really carries must compare equal.
		if d := sseData(raw); len(d) > 0 && !sseDataIs(raw, d) {
			t.Errorf("sseDataIs(%q, its own data %q) = false", raw, d)
		}
	})
}
