package view_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
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
			if err := view.WriteHTML(&buf, view.Page{Sessions: []*store.Recording{r}}); err != nil {
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
	if err := view.WriteHTML(&buf, view.Page{Sessions: []*store.Recording{r}}); err != nil {
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
	if err := view.WriteHTML(&buf, view.Page{Sessions: []*store.Recording{r}}); err != nil {
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

func TestExportDiffHTML(t *testing.T) {
	// The sessions a diff names are read from the cassette, each once.
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, name := range []string{"gosdk-stdio-2025-06-18.jsonl", "gosdk-stdio-2025-11-25.jsonl"} {
		in, err := os.ReadFile(filepath.Join("..", "cassettes", name))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Import(ctx, bytes.NewReader(in)); err != nil {
			t.Fatal(err)
		}
	}
	d := json.RawMessage(`{"old":{"id":2},"new":{"id":1},"requests":[{"seq":4,"method":"tools/list","status":"changed"}]}`)
	var buf bytes.Buffer
	if err := view.ExportDiffHTML(ctx, db, &buf, d, d); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	if got := strings.Count(page, `"transport":"stdio"`); got != 2 {
		t.Errorf("page holds %d sessions; want 2", got)
	}
	if !strings.Contains(page, `"diffs":[{"old":{"id":2}`) || strings.Index(page, `"name":"gosdk-stdio-2025-11-25"`) > strings.Index(page, `"name":"gosdk-stdio-2025-06-18"`) {
		t.Error("the diff is not in the page, or the old session does not come first")
	}
	if err := view.ExportDiffHTML(ctx, db, &buf, json.RawMessage(`{"old":{"id":9},"new":{"id":1}}`)); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("ExportDiffHTML(missing session) = %v; want ErrNotFound", err)
	}
}
