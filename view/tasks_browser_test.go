package view_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestHTML_BrowserTasks: the HTML report of a session with a task of the
// server's (see taskSessions) in headless Chromium. A row where the task
// begins, before the request that created it, says what created it,
// which side runs it and the states it went through; a row where it
// ends follows its last frame; the task's frames are marked and
// indented. A click on the first row folds the task's frames away (the
// other frames between stay) and shows the task in the detail pane, with
// links to its frames by role; a second click unfolds them. Selecting a
// frame of a folded task (its link from the detail pane) unfolds it.
func TestHTML_BrowserTasks(t *testing.T) {
	server, _ := taskSessions(t)
	ctx := browse(t)
	open(t, ctx, server)
	frames := len(server.Frames)
	rows := func() int { return eval[int](t, ctx, `document.querySelectorAll('#rows .row.f').length`) }
	if got := rows(); got != frames {
		t.Fatalf("frame rows = %d; want %d", got, frames)
	}
	if got := eval[int](t, ctx, `document.querySelectorAll('#rows .row.f.tk').length`); got != 25 {
		t.Errorf("rows marked as the task's = %d; want its 25 frames", got)
	}
	head := eval[string](t, ctx, `(document.querySelector('#rows .row.tkh')||{}).textContent||''`)
	for _, want := range []string{"task#1", "tools/call simulate-research-query", "server runs it", "working → completed", "8 polls", "5 status", "result #30"} {
		if !strings.Contains(head, want) {
			t.Errorf("the task's row %q lacks %q", head, want)
		}
	}
	// The begin row sits right before the creating request (#5), the end
	// row right after the task's last frame (#30).
	order := eval[string](t, ctx, `Array.from(document.querySelectorAll('#rows .row')).map(r => r.classList.contains('tkh') ? 'B' : r.classList.contains('tke') ? 'E' : (r.dataset.seq||'')).filter(Boolean).join(' ')`)
	if !strings.Contains(order, "4 B 5 ") || !strings.Contains(order, " 30 E") {
		t.Errorf("rows in order: %s; want B before #5 and E after #30", order)
	}
	screenshot(t, ctx, "report-tasks.png")

	do(t, ctx, "fold the task", chromedp.Click(chromedp.CSS(`#rows .row.tkh`)))
	if got := rows(); got != frames-25 {
		t.Errorf("frame rows with the task folded = %d; want %d", got, frames-25)
	}
	if got := eval[int](t, ctx, `document.querySelectorAll('#rows .row.tke').length`); got != 0 {
		t.Errorf("the folded task's end row is shown")
	}
	detail := eval[string](t, ctx, `document.getElementById('detail').textContent`)
	for _, want := range []string{"task#1", "server", "working → completed", "poll", "status", "result"} {
		if !strings.Contains(detail, want) {
			t.Errorf("the task's detail %q lacks %q", detail, want)
		}
	}
	screenshot(t, ctx, "report-tasks-folded.png")
	do(t, ctx, "unfold the task", chromedp.Click(chromedp.CSS(`#rows .row.tkh`)))
	if got := rows(); got != frames {
		t.Errorf("frame rows with the task unfolded = %d; want %d", got, frames)
	}
	do(t, ctx, "fold the task again", chromedp.Click(chromedp.CSS(`#rows .row.tkh`)))
	do(t, ctx, "follow the link to its result", chromedp.Click(chromedp.CSS(`#detail a[data-go="30"]`)))
	if got := eval[int](t, ctx, `document.querySelectorAll('#rows .row.f.sel[data-seq="30"]').length`); got != 1 || rows() != frames {
		t.Errorf("selecting a frame of the folded task: %d selected, %d frame rows; want it shown, the task unfolded", got, rows())
	}
}
