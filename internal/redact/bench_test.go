package redact

import (
	"strings"
	"testing"
)

// BenchmarkNamesJSON measures the cost the recorder adds to every frame:
// a frame with no secret-looking name (scanned only), one with a
// progressToken (walked, nothing replaced), and one with a password.
func BenchmarkNamesJSON(b *testing.B) {
	text := strings.Repeat("lorem ipsum dolor sit amet ", 40)
	frames := map[string]string{
		"Plain":    `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"` + text + `"}]}}`,
		"Progress": `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"_meta":{"progressToken":3},"name":"echo","arguments":{"text":"` + text + `"}}}`,
		"Password": `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"login","arguments":{"password":"hunter2","text":"` + text + `"}}}`,
	}
	n := New(true)
	replace := func(string) (string, bool) { return "REDACTED-0123456789ab", true }
	for _, name := range []string{"Plain", "Progress", "Password"} {
		raw := []byte(frames[name])
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			b.ReportAllocs()
			for b.Loop() {
				n.JSON(raw, replace)
			}
		})
	}
}
