package view_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/mcpvcr/mcpvcr/store"
	"github.com/mcpvcr/mcpvcr/view"
)

// TestHTML_BrowserChaos: the report of a chaos run in headless Chromium.
// The summary (its seed exact) and every fault are listed on top, the failed one in red;
// each fault placed in the session is marked on the timeline, on its row
// and on the lanes beside it, the failed one in red; a fault's text that
// looks like markup is shown as text; a click on a fault shows its frame
// or stream with the fault in the detail.
func TestHTML_BrowserChaos(t *testing.T) {
	r := cassette(t, "gosdk-http-2025-11-25.jsonl")
	ch := chaosFixture()
	ch.Seed = 1<<64 - 1 // more than a JavaScript number holds exactly
	var buf bytes.Buffer
	must(t, view.WriteHTML(&buf, view.Page{Sessions: []*store.Recording{r}, Chaos: &ch}))
	path := filepath.Join(t.TempDir(), "chaos.html")
	must(t, os.WriteFile(path, buf.Bytes(), 0o600))
	ctx := browse(t)
	do(t, ctx, "load", chromedp.Navigate("file://"+path))
	if got := eval[string](t, ctx, `new Promise(done => {
		window.addEventListener('error', e => done('error: ' + e.message));
		const c = () => document.body.dataset.ready ? done('') : setTimeout(c, 5); c() })`); got != "" {
		t.Fatalf("page: %s", got)
	}

	// The summary and the list.
	if got := eval[bool](t, ctx, `document.getElementById('chaos').hidden`); got {
		t.Fatal("the chaos summary is hidden")
	}
	sum := eval[string](t, ctx, `document.querySelector('#chaos h2').textContent`)
	for _, want := range []string{"seed 18446744073709551615 ", "cut-resumable, refuse-get, 503", "3 per session", "4 injected", "2 pass", "1 fail", "1 not observed", "1 not reached"} {
		if !strings.Contains(sum, want) {
			t.Errorf("summary %q lacks %q", sum, want)
		}
	}
	if got := eval[string](t, ctx, `document.getElementById('chaos-cmd').textContent`); got != ch.Command {
		t.Errorf("command shown = %q; want %q", got, ch.Command)
	}
	if got := eval[int](t, ctx, `document.querySelectorAll('#chaos tr.cfr').length`); got != len(ch.Faults) {
		t.Errorf("faults listed = %d; want %d", got, len(ch.Faults))
	}
	if got := eval[string](t, ctx, `[...document.querySelectorAll('#chaos tr.cfr')].map(r => r.cells[1].textContent).join()`); got != "fail,pass,pass,not observed,not reached" {
		t.Errorf("verdicts listed = %q", got)
	}
	// The failed verdict stands out: its row is red, its verdict white on red.
	red, pale := "rgb(220, 38, 38)", "rgb(254, 226, 226)"
	if got := eval[string](t, ctx, `getComputedStyle(document.querySelector('#chaos tr.cfr.v-fail')).backgroundColor`); got != pale {
		t.Errorf("the failed fault's row is %s; want %s", got, pale)
	}
	if got := eval[string](t, ctx, `getComputedStyle(document.querySelector('#chaos tr.cfr.v-fail .verdict')).backgroundColor`); got != red {
		t.Errorf("the failed verdict's background is %s; want %s", got, red)
	}
	if got := eval[string](t, ctx, `getComputedStyle(document.querySelector('#chaos tr.cfr.v-pass .verdict')).backgroundColor`); got == red {
		t.Error("a passing verdict looks like a failed one")
	}
	// Markup in a fault's text is text.
	if got := eval[string](t, ctx, `document.querySelector('#chaos tr.cfr.v-fail').cells[6].textContent`); got != ch.Faults[0].Did {
		t.Errorf("what the client did shown as %q; want %q", got, ch.Faults[0].Did)
	}
	if got := eval[int](t, ctx, `document.querySelectorAll('img').length`); got != 0 || eval[string](t, ctx, `document.title`) == "owned" {
		t.Error("a fault's text was run as markup")
	}

	// The marks on the timeline: the frame a fault hit, or its stream's
	// opening row.
	for _, m := range []struct{ sel, flag string }{
		{`#rows .row.f.chaos.v-fail[data-seq="21"]`, "cut-resumable: fail"},
		{`#rows .row.f.chaos.v-pass[data-seq="18"]`, "503: pass"},
		{`#rows .row.o.chaos.v-pass[data-st="1"]`, "refuse-get: pass"},
		{`#rows .row.o.chaos.v-unreached[data-st="9"]`, "delay: not reached"},
	} {
		if got := eval[string](t, ctx, `(el => el ? el.querySelector('.fl.ch').textContent : '')(document.querySelector('`+m.sel+`'))`); !strings.Contains(got, m.flag) {
			t.Errorf("%s: mark %q; want %q", m.sel, got, m.flag)
		}
	}
	if got := eval[int](t, ctx, `document.querySelectorAll('#rows .row.chaos').length`); got != 4 {
		t.Errorf("rows marked = %d; want 4 (the fault of another session is not marked here)", got)
	}
	if got := eval[string](t, ctx, `getComputedStyle(document.querySelector('#rows .row.chaos.v-fail')).boxShadow`); !strings.Contains(got, red) {
		t.Errorf("the failed fault's row edge is %q; want it %s", got, red)
	}
	// On the lanes: red pixels beside the failed fault's row (a square
	// around its mark), none beside the unmarked row above it.
	redIn := func(seq string) int {
		return eval[int](t, ctx, `(() => {
			const row = document.querySelector('#rows .row.f[data-seq="`+seq+`"]'), cv = document.getElementById('lanes');
			const k = cv.width / parseFloat(cv.style.width), y = (parseFloat(row.style.top) - parseFloat(cv.style.top)) * k;
			const px = cv.getContext('2d').getImageData(0, y, cv.width, 22 * k).data;
			let n = 0;
			for (let i = 0; i < px.length; i += 4) if (px[i] > 200 && px[i+1] < 80 && px[i+2] < 80 && px[i+3] > 200) n++;
			return n;
		})()`)
	}
	if n := redIn("21"); n < 10 {
		t.Errorf("red pixels on the lanes beside the failed fault's frame = %d; want its mark", n)
	}
	if n := redIn("20"); n != 0 {
		t.Errorf("red pixels on the lanes beside an unmarked frame = %d; want none", n)
	}
	screenshot(t, ctx, "report-chaos.png")

	// A click on a fault shows where it is.
	eval[bool](t, ctx, `(() => { document.querySelector('#chaos tr.cfr.v-fail').click(); return true })()`)
	if got := eval[string](t, ctx, `(document.querySelector('#rows .row.sel')||{dataset:{}}).dataset.seq||''`); got != "21" {
		t.Errorf("a click on the failed fault selected frame %q; want 21", got)
	}
	detail := eval[string](t, ctx, `document.getElementById('detail').textContent`)
	for _, want := range []string{"chaos fault 1: cut-resumable", "fail", ch.Faults[0].What, "the client " + ch.Faults[0].Did} {
		if !strings.Contains(detail, want) {
			t.Errorf("detail lacks %q: %s", want, detail)
		}
	}
	if got, want := eval[string](t, ctx, `document.getElementById('raw').textContent`), string(frame(r, 21).Raw); got != want {
		t.Errorf("bytes shown for frame 21 = %q; want %q", got, want)
	}
	screenshot(t, ctx, "report-chaos-fault.png")
	eval[bool](t, ctx, `(() => { document.querySelectorAll('#chaos tr.cfr')[1].click(); return true })()`)
	if detail := eval[string](t, ctx, `document.getElementById('detail').textContent`); !strings.Contains(detail, "get#2") || !strings.Contains(detail, "chaos fault 2: refuse-get") {
		t.Errorf("a click on the refused GET shows %q; want get#2 with its fault", detail)
	}
}

// frame returns the frame seq of r.
func frame(r *store.Recording, seq int64) store.Frame {
	for _, f := range r.Frames {
		if f.Seq == seq {
			return f
		}
	}
	return store.Frame{}
}
