package store_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
)

// FuzzImport feeds arbitrary text to Import. It must never panic, and it
// must either reject the input or take it in so that it round-trips: the
// export of what was imported, imported again, exports to the same bytes.
func FuzzImport(f *testing.F) {
	for _, path := range []string{
		filepath.Join("testdata", "jsonl", "sample", "export.golden"),
		filepath.Join("..", "cassettes", "gosdk-stdio-2025-06-18.jsonl"),
		filepath.Join("..", "cassettes", "gosdk-http-2025-03-26.jsonl"),
	} {
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"type":"mcpvcr","version":1}` + "\n"))
	f.Add([]byte(`{"type":"mcpvcr","version":1}
{"type":"session","id":1,"transport":"stdio","exit_code":0}
{"type":"stream","id":1,"session":1,"kind":"stdout","end":"complete"}
{"type":"frame","session":1,"seq":1,"stream":1,"dir":"s2c","raw_b64":"/w==","data":""}
{"type":"frame","session":1,"seq":3,"dir":"c2s","sse":true,"event_id":"","retry":0,"comment":true,"raw":": x\n\n"}
`))
	ctx := context.Background()
	d := openDB(f)
	f.Fuzz(func(t *testing.T, input []byte) {
		ids, err := d.Import(ctx, bytes.NewReader(input))
		if err != nil || len(ids) == 0 {
			return // rejected, or only a header: nothing to round-trip
		}
		var first bytes.Buffer
		if err := d.Export(ctx, &first, ids...); err != nil {
			t.Fatalf("Export() of what Import(%q) took = %v", input, err)
		}
		again, err := d.Import(ctx, bytes.NewReader(first.Bytes()))
		if err != nil {
			t.Fatalf("Import() of its own export = %v\nexport:\n%s", err, first.Bytes())
		}
		if len(again) != len(ids) {
			t.Fatalf("Import() of the export of %d sessions took %d", len(ids), len(again))
		}
		var second bytes.Buffer
		if err := d.Export(ctx, &second, again...); err != nil {
			t.Fatalf("Export() after the second Import() = %v", err)
		}
		if !bytes.Equal(first.Bytes(), second.Bytes()) {
			t.Fatalf("export does not round-trip:\nfirst:\n%s\nsecond:\n%s", first.Bytes(), second.Bytes())
		}
	})
}
