package view_test

import (
	"bytes"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpvcr/mcpvcr/store"
	"github.com/mcpvcr/mcpvcr/view"
)

// maxSmallPage is the size budget of the report of a session of about 64
// frames.
const maxSmallPage = 200 << 10

func TestWriteHTML_Size(t *testing.T) {
	// The report of each committed cassette (18 to 81 frames) stays under
	// 200 KB, and fetches nothing: no src, href or url() outside the page.
	files, err := filepath.Glob(filepath.Join("..", "cassettes", "*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no cassettes: %v", err)
	}
	external := regexp.MustCompile(`(?i)<(script|link|img|iframe)[^>]+(src|href)=|url\(`)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			r := cassette(t, filepath.Base(f))
			var buf bytes.Buffer
			if err := view.WriteHTML(&buf, view.Page{Sessions: []*store.Recorded{r}}); err != nil {
				t.Fatal(err)
			}
			t.Logf("%d frames: %d bytes", len(r.Frames), buf.Len())
			if buf.Len() > maxSmallPage {
				t.Errorf("report of %d frames is %d bytes; want at most %d", len(r.Frames), buf.Len(), maxSmallPage)
			}
			if m := external.FindString(buf.String()); m != "" {
				t.Errorf("the page refers to something outside it: %q", m)
			}
		})
	}
}

func TestWriteHTML_Size64(t *testing.T) {
	// A 64-frame session: well under the budget.
	r := synthetic(64)
	var buf bytes.Buffer
	if err := view.WriteHTML(&buf, view.Page{Sessions: []*store.Recorded{r}}); err != nil {
		t.Fatal(err)
	}
	t.Logf("64 frames: %d bytes", buf.Len())
	if buf.Len() > maxSmallPage {
		t.Errorf("report of 64 frames is %d bytes; want at most %d", buf.Len(), maxSmallPage)
	}
}

func TestWriteHTML_Escapes(t *testing.T) {
	// Frame bytes that look like markup stay data: the page has exactly
	// its own two closing script tags.
	r := synthetic(4)
	r.Frames[0].Raw = []byte(`{"jsonrpc":"2.0","id":1,"method":"x</script><script>alert(1)</script>"}` + "\n")
	r.Frames[1].Raw = []byte{0xff, 0xfe, '\n'} // not UTF-8
	var buf bytes.Buffer
	if err := view.WriteHTML(&buf, view.Page{Sessions: []*store.Recorded{r}}); err != nil {
		t.Fatal(err)
	}
	if got, want := closingScripts(buf.String()), 2; got != want {
		t.Errorf("page has %d closing script tags; want %d", got, want)
	}
	if !strings.Contains(buf.String(), `"b64":true`) {
		t.Error("bytes that are not UTF-8 are not marked base64")
	}
}

func TestWriteHTML_NoSession(t *testing.T) {
	if err := view.WriteHTML(&bytes.Buffer{}, view.Page{}); err == nil {
		t.Error("WriteHTML(no session) = nil; want an error")
	}
}
