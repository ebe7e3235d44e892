package view_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/mcpvcr/mcpvcr/diff"
	"github.com/mcpvcr/mcpvcr/store"
	"github.com/mcpvcr/mcpvcr/view"
)

// TestBrowser_DiffCountsAsText: the HTML report of a comparison counts
// requests as the text report does (the server's own traffic apart), so
// that the two say the same number for one comparison (sessions 1 and 5
// differ in requests and in the server's own traffic).
func TestBrowser_DiffCountsAsText(t *testing.T) {
	recs, err := store.LoadFile(context.Background(), filepath.Join("..", "cassettes", "multi-gosdk-http-json.jsonl"), 1, 5)
	if err != nil {
		t.Fatal(err)
	}
	r := diff.Compare(recs[0], recs[1], diff.Noise{})
	var text bytes.Buffer
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	want := regexp.MustCompile(`(\d+ of \d+ requests differ|no differences in \d+ requests)`).FindString(text.String())
	if want == "" {
		t.Fatalf("the text report has no count:\n%s", text.String())
	}
	raw, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var page bytes.Buffer
	if err := view.WriteHTML(&page, view.Page{Sessions: recs, Diffs: []json.RawMessage{raw}}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "diff.html")
	if err := os.WriteFile(path, page.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := browse(t)
	do(t, ctx, "load "+path, chromedp.Navigate("file://"+path))
	got := eval[string](t, ctx, `new Promise(done => {
		const check = () => document.body.dataset.ready ? done((document.querySelector('#diffs h2') || {}).textContent || '') : setTimeout(check, 5);
		check();
	})`)
	if !regexp.MustCompile(`: ` + regexp.QuoteMeta(want) + `($|;|,)`).MatchString(got) {
		t.Errorf("the HTML report heads the comparison %q; the text report says %q", got, want)
	}
}

// TestBrowser_DiffFoldsRepeats: the HTML report of several comparisons
// lists once each difference they share, as the text report does, and
// ends with the text report's line across them all.
func TestBrowser_DiffFoldsRepeats(t *testing.T) {
	recs, err := store.LoadFile(context.Background(), filepath.Join("..", "cassettes", "multi-gosdk-http-json.jsonl"), 1, 2, 5)
	if err != nil {
		t.Fatal(err)
	}
	reports := []*diff.Report{diff.Compare(recs[0], recs[2], diff.Noise{}), diff.Compare(recs[1], recs[2], diff.Noise{})}
	var text bytes.Buffer
	if err := diff.Write(&text, "text", reports...); err != nil {
		t.Fatal(err)
	}
	total := regexp.MustCompile(`in all: [^\n]*`).FindString(text.String())
	repeated := regexp.MustCompile(`(\d+ differences?) repeated in several sessions`).FindStringSubmatch(text.String())
	if total == "" || repeated == nil {
		t.Fatalf("the text report folds nothing or adds nothing up:\n%s", text.String())
	}
	diff.Summarize(reports) // as view.WriteReports does
	var raws []json.RawMessage
	for _, r := range reports {
		raw, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		raws = append(raws, raw)
	}
	var page bytes.Buffer
	if err := view.WriteHTML(&page, view.Page{Sessions: recs, Diffs: raws}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "diffs.html")
	if err := os.WriteFile(path, page.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := browse(t)
	do(t, ctx, "load "+path, chromedp.Navigate("file://"+path))
	got := eval[[]string](t, ctx, `new Promise(done => {
		const text = sel => (document.querySelector(sel) || {}).textContent || '';
		const check = () => document.body.dataset.ready ? done([text('#diffs h2.repeated'), text('#diffs h2.total')]) : setTimeout(check, 5);
		check();
	})`)
	if !strings.HasPrefix(got[0], repeated[1]+" repeated in several sessions") {
		t.Errorf("the HTML report heads its repeated differences %q; the text report lists %s", got[0], repeated[1])
	}
	if got[1] != total {
		t.Errorf("the HTML report ends %q; the text report %q", got[1], total)
	}
}
