package view_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/mcpvcr/mcpvcr/internal/causal"
	"github.com/mcpvcr/mcpvcr/internal/mcptest"
	"github.com/mcpvcr/mcpvcr/store"
	"github.com/mcpvcr/mcpvcr/view"
)

// ArtifactsEnv names the directory where the browser tests leave their
// screenshots; without it they go to artifacts/ at the repository root.
const artifactsEnv = "MCPVCR_ARTIFACTS"

func artifacts(t testing.TB) string {
	t.Helper()
	dir := os.Getenv(artifactsEnv)
	if dir == "" {
		dir = filepath.Join("..", "artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// browse starts a headless Chromium (with the flags it needs on a machine
// without network or GPU, and a fresh profile) and returns a context for
// one tab. The browser is stopped when the test ends.
func browse(t *testing.T) context.Context {
	t.Helper()
	exe := mcptest.Chromium(t)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1400, 900),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelTab(); cancelAlloc() })
	// The first call starts the browser, which lives as long as its
	// context: no timeout on that one; later steps get one each.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start %s: %v", exe, err)
	}
	return ctx
}

// do runs steps with a deadline, failing the test on an error.
func do(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// open writes the report of r to a file and loads it from file://, waiting
// until the page has drawn. It returns the file's size and the page's own
// time to ready (performance.now() when the first rows are drawn).
func open(t *testing.T, ctx context.Context, r *store.Recording) (size int, ready float64) {
	t.Helper()
	return openAt(t, ctx, r, "")
}

// openAt is open with a URL fragment, such as "#12".
func openAt(t *testing.T, ctx context.Context, r *store.Recording, fragment string) (size int, ready float64) {
	t.Helper()
	var buf bytes.Buffer
	if err := view.WriteHTML(&buf, view.Page{Sessions: []*store.Recording{r}}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	do(t, ctx, "load "+path+fragment, chromedp.Navigate("file://"+path+fragment))
	// Wait in the page for the report to say it has drawn (or failed).
	at := eval[string](t, ctx, `new Promise(done => {
		window.addEventListener('error', e => done('error: ' + e.message));
		const check = () => document.body.dataset.ready ? done(document.body.dataset.ready) : setTimeout(check, 5);
		check();
	})`)
	ready, err := strconv.ParseFloat(at, 64)
	if err != nil {
		t.Fatalf("data-ready = %q", at)
	}
	return buf.Len(), ready
}

func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(artifacts(t), name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}

func TestHTML_Browser(t *testing.T) {
	// The report of a Streamable HTTP session (SSE answers, a GET stream,
	// a resume, a stream the server closed early) in headless Chromium:
	// one row per frame, end markers, a click shows the frame's bytes,
	// the method filter keeps only that method.
	r := cassette(t, "gosdk-http-2025-11-25.jsonl")
	ctx := browse(t)
	size, ready := open(t, ctx, r)
	t.Logf("%d frames: %d bytes, ready in %.0f ms", len(r.Frames), size, ready)

	if got, want := eval[int](t, ctx, `document.querySelectorAll('#rows .row.f').length`), len(r.Frames); got != want {
		t.Errorf("frame rows = %d; want %d, one per frame", got, want)
	}
	ended := 0
	for _, st := range r.Streams {
		if st.End != store.EndOpen {
			ended++
		}
	}
	if got := eval[int](t, ctx, `document.querySelectorAll('#rows .row.e').length`); got != ended {
		t.Errorf("end markers = %d; want %d", got, ended)
	}
	if got := eval[int](t, ctx, `document.querySelectorAll('#rows .row.e.end-server-closed').length`); got != 1 {
		t.Errorf("server-closed end markers = %d; want 1", got)
	}
	if got := eval[string](t, ctx, `(document.querySelector('#rows .row.o .c-wide')||{}).textContent||''`); got == "" {
		t.Error("no stream-open row")
	}

	// Click a result: the detail shows its exact bytes and the request it answers.
	links := causal.Link(r)
	var pick store.Frame
	for _, f := range r.Frames {
		if f.SSE && links.Method[f.Seq] == "tools/call" {
			pick = f
			break
		}
	}
	if pick.Seq == 0 {
		t.Fatal("no tools/call answer in the cassette")
	}
	sel := fmt.Sprintf(`#rows .row.f[data-seq="%d"]`, pick.Seq)
	do(t, ctx, fmt.Sprintf("click frame %d", pick.Seq), chromedp.ScrollIntoView(chromedp.CSS(sel)), chromedp.Click(chromedp.CSS(sel)))
	if got, want := eval[string](t, ctx, `document.getElementById('raw').textContent`), string(pick.Raw); got != want {
		t.Errorf("bytes shown for frame %d = %q; want %q", pick.Seq, got, want)
	}
	if got := eval[string](t, ctx, `document.getElementById('json') ? document.getElementById('json').textContent : ''`); !bytes.Contains([]byte(got), []byte(`"result": {`)) {
		t.Errorf("pretty JSON shown = %q; want the result pretty-printed", got)
	}
	if got, want := eval[int](t, ctx, `document.querySelectorAll('#rows .row.sel').length`), 1; got != want {
		t.Errorf("selected rows = %d; want %d", got, want)
	}
	screenshot(t, ctx, "report-http.png")

	// The method filter keeps the method's requests and their answers.
	eval[bool](t, ctx, `(() => { const s = document.getElementById('method'); s.value = 'tools/call'; s.dispatchEvent(new Event('change')); return true })()`)
	want := countMethod(r, "tools/call")
	if got := eval[int](t, ctx, `document.querySelectorAll('#rows .row').length`); got != want {
		t.Errorf("rows after the tools/call filter = %d; want %d", got, want)
	}
	if got := eval[int](t, ctx, `[...document.querySelectorAll('#rows .row')].filter(r => r.dataset.method !== 'tools/call').length`); got != 0 {
		t.Errorf("%d rows of other methods after the tools/call filter", got)
	}
	if got := eval[string](t, ctx, `document.getElementById('count').textContent`); got != fmt.Sprintf("%d of %d frames · %d streams", want, len(r.Frames), len(r.Streams)) {
		t.Errorf("count = %q", got)
	}
}

// TestHTML_BrowserLinks: a selected frame's number is the page's URL
// fragment, so a bug report can cite it; opening the page with it selects
// that frame; and no method name is cut short in the timeline (a long
// tool name or URI after it may be: the cell's title holds it whole).
func TestHTML_BrowserLinks(t *testing.T) {
	r := cassette(t, "gosdk-http-2025-11-25.jsonl")
	ctx := browse(t)
	open(t, ctx, r)
	if got := eval[[]string](t, ctx, `[...document.querySelectorAll('#rows .row.f .c-m')].filter(e => {
		if (!e.firstChild || e.firstChild.nodeType !== Node.TEXT_NODE) return false;
		const r = document.createRange(); r.selectNodeContents(e.firstChild);
		return r.getBoundingClientRect().right > e.getBoundingClientRect().right - 5;
	}).map(e => e.textContent)`); len(got) != 0 {
		t.Errorf("method cells cut short in a 1400px window: %q", got)
	}
	pick := r.Frames[len(r.Frames)/2].Seq
	sel := fmt.Sprintf(`#rows .row.f[data-seq="%d"]`, pick)
	do(t, ctx, fmt.Sprintf("click frame %d", pick), chromedp.ScrollIntoView(chromedp.CSS(sel)), chromedp.Click(chromedp.CSS(sel)))
	if got, want := eval[string](t, ctx, `location.hash`), fmt.Sprintf("#%d", pick); got != want {
		t.Errorf("location.hash after a click on frame %d = %q; want %q", pick, got, want)
	}
	if got, want := eval[string](t, ctx, `document.querySelector('#detail h2 a.perma').getAttribute('href')`), fmt.Sprintf("#%d", pick); got != want {
		t.Errorf("the frame's link = %q; want %q", got, want)
	}

	last := r.Frames[len(r.Frames)-1].Seq
	openAt(t, ctx, r, fmt.Sprintf("#%d", last))
	if got := eval[string](t, ctx, `(document.querySelector('#rows .row.sel')||{dataset:{}}).dataset.seq||''`); got != fmt.Sprint(last) {
		t.Errorf("the page opened at #%d selected frame %q", last, got)
	}
	if got := eval[string](t, ctx, `document.getElementById('raw').textContent`); got != string(r.Frames[len(r.Frames)-1].Raw) {
		t.Errorf("the page opened at #%d shows %q", last, got)
	}
}

func TestHTML_Browser64(t *testing.T) {
	// The load time of a 64-frame session, for comparison with 10,000.
	r := synthetic(64)
	ctx := browse(t)
	size, ready := open(t, ctx, r)
	t.Logf("64 frames: %d bytes, ready in %.0f ms", size, ready)
	if got := eval[int](t, ctx, `document.querySelectorAll('#rows .row.f').length`); got != 64 {
		t.Errorf("frame rows = %d; want 64", got)
	}
}

func TestHTML_BrowserLarge(t *testing.T) {
	// A 10,000-frame session opens, keeps only the rows in view in the
	// DOM, and scrolls to its end: the load time and the slowest scroll
	// step are logged.
	const n = 10000
	r := synthetic(n)
	ctx := browse(t)
	size, ready := open(t, ctx, r)
	t.Logf("%d frames: %d bytes, ready in %.0f ms", n, size, ready)
	if got := eval[int](t, ctx, `document.querySelectorAll('#rows .row').length`); got == 0 || got > 400 {
		t.Errorf("rows in the DOM = %d; want a window of the session (lazy rendering)", got)
	}
	// Scroll the list from top to bottom in 40 steps, one per animation
	// frame, and time each step's drawing.
	steps := eval[[]float64](t, ctx, `new Promise(done => {
		const list = document.getElementById('list'), n = 40, step = (list.scrollHeight - list.clientHeight) / n;
		const out = [];
		let i = 0, last = performance.now();
		function next() {
			const now = performance.now();
			if (i > 0) out.push(now - last);
			last = now;
			if (i++ === n) return done(out);
			list.scrollTop = Math.round(i * step);
			requestAnimationFrame(() => requestAnimationFrame(next));
		}
		next();
	})`)
	slices.Sort(steps)
	t.Logf("scrolling in %d steps of %d rows, two animation frames each: median %.0f ms, slowest %.0f ms",
		len(steps), n/len(steps), steps[len(steps)/2], steps[len(steps)-1])
	last := fmt.Sprintf(`#rows .row.f[data-seq="%d"]`, n)
	if got := eval[int](t, ctx, `document.querySelectorAll('`+last+`').length`); got != 1 {
		t.Errorf("after scrolling to the end, frame %d is not drawn", n)
	}
	if got := eval[int](t, ctx, `document.querySelectorAll('#rows .row').length`); got > 400 {
		t.Errorf("rows in the DOM after scrolling = %d; want a window", got)
	}
	do(t, ctx, "click the last frame", chromedp.Click(chromedp.CSS(last)))
	if got, want := eval[string](t, ctx, `document.getElementById('raw').textContent`), string(r.Frames[n-1].Raw); got != want {
		t.Errorf("bytes shown = %q; want %q", got, want)
	}
	screenshot(t, ctx, "report-10000.png")
}

func TestHTML_BrowserDiff(t *testing.T) {
	// A diff report over two sessions: the differences are listed on top,
	// marked on their frames, and a click on one shows the session and
	// frame it concerns, with its changes in place.
	old := cassette(t, "gosdk-stdio-2025-06-18.jsonl")
	cur := cassette(t, "gosdk-stdio-2025-11-25.jsonl")
	cur.Session.ID = 2
	var seq, newSeq int64
	for _, f := range old.Frames {
		if f.Method == "tools/list" {
			seq = f.Seq
		}
	}
	for _, f := range cur.Frames {
		if f.Method == "tools/list" {
			newSeq = f.Seq
		}
	}
	diff := fmt.Sprintf(`{"old":{"id":1,"transport":"stdio"},"new":{"id":2,"transport":"stdio"},"requests":[
		{"seq":%d,"new_seq":%d,"method":"tools/list","status":"changed","changes":[{"path":"result.tools[name=add].description","change":"changed","old":"Adds a and b.","new":"Adds numbers."}]},
		{"seq":1,"new_seq":1,"method":"initialize","status":"same"}]}`, seq, newSeq)
	var buf bytes.Buffer
	if err := view.WriteHTML(&buf, view.Page{Title: "diff", Sessions: []*store.Recording{old, cur}, Diffs: []json.RawMessage{json.RawMessage(diff)}}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "diff.html")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := browse(t)
	do(t, ctx, "load", chromedp.Navigate("file://"+path))
	eval[string](t, ctx, `new Promise(done => { const c = () => document.body.dataset.ready ? done('') : setTimeout(c, 5); c() })`)
	if got := eval[int](t, ctx, `document.querySelectorAll('#diffs .drq').length`); got != 1 {
		t.Errorf("differences listed = %d; want 1 (the same request is not listed)", got)
	}
	links := causal.Link(old)
	if got, want := eval[string](t, ctx, `[...document.querySelectorAll('#rows .row.dif')].map(r => r.dataset.seq).join()`), fmt.Sprintf("%d,%d", seq, links.Answer[seq]); got != want {
		t.Errorf("rows marked in the old session = %q; want the request and its answer, %s", got, want)
	}
	eval[bool](t, ctx, `(() => { document.querySelector('#tabs button[data-i="1"]').click(); return true })()`)
	if got, want := eval[string](t, ctx, `[...document.querySelectorAll('#rows .row.dif')].map(r => r.dataset.seq).join()`), fmt.Sprintf("%d,%d", newSeq, causal.Link(cur).Answer[newSeq]); got != want {
		t.Errorf("rows marked in the new session = %q; want %s", got, want)
	}
	eval[bool](t, ctx, `(() => { document.querySelector('#diffs .drq').click(); return true })()`)
	if got := eval[string](t, ctx, `document.getElementById('title').textContent`); got != "Session 1 · gosdk-stdio-2025-06-18" {
		t.Errorf("after a click on the difference the page shows %q; want the old session", got)
	}
	detail := eval[string](t, ctx, `document.getElementById('detail').textContent`)
	for _, want := range []string{"#" + fmt.Sprint(seq), "differences (changed)", "result.tools[name=add].description", `"Adds numbers."`} {
		if !bytes.Contains([]byte(detail), []byte(want)) {
			t.Errorf("detail lacks %q: %s", want, detail)
		}
	}
	screenshot(t, ctx, "report-diff.png")
}

func TestHAR_DevToolsImport(t *testing.T) {
	// Chromium's own DevTools HAR importer (the code behind Import HAR
	// file in the Network panel) reads the export: one request per HTTP
	// exchange, SSE answers as event streams with their events, and a
	// stdio session's synthetic entries.
	ctx := browse(t)
	do(t, ctx, "open DevTools", chromedp.Navigate("devtools://devtools/bundled/devtools_app.html"))
	type request struct {
		Method string
		URL    string
		Status int
		Type   string
		Events int
	}
	load := func(r *store.Recording) []request {
		var har bytes.Buffer
		if err := view.WriteHAR(&har, r); err != nil {
			t.Fatal(err)
		}
		lit, err := json.Marshal(har.String())
		if err != nil {
			t.Fatal(err)
		}
		return eval[[]request](t, ctx, `(async () => {
			const har = await import('./models/har/har.js');
			const root = new har.HARFormat.HARRoot(JSON.parse(`+string(lit)+`));
			return har.Importer.Importer.requestsFromHARLog(root.log).map(r => ({
				Method: r.requestMethod, URL: r.url(), Status: r.statusCode, Type: r.resourceType().name(),
				Events: r.eventSourceMessages().length}));
		})()`)
	}

	r := cassette(t, "gosdk-http-2025-11-25.jsonl")
	got := load(r)
	if len(got) != len(r.Streams) {
		t.Fatalf("DevTools imported %d requests; want %d, one per exchange", len(got), len(r.Streams))
	}
	events := map[int64]int{}
	for _, f := range r.Frames {
		if f.SSE && !f.Comment {
			events[f.StreamID]++
		}
	}
	for i, st := range r.Streams { // entries are in the order the streams opened, as stored
		g := got[i]
		if g.Method != st.Method || g.Status != st.Status || !strings.HasSuffix(g.URL, st.URL) || g.Events != events[st.ID] {
			t.Errorf("request %d = %+v; want %s %s %d with %d events", i, g, st.Method, st.URL, st.Status, events[st.ID])
		}
		if events[st.ID] > 0 && g.Type != "eventsource" {
			t.Errorf("request %d is of type %q; want eventsource", i, g.Type)
		}
	}

	stdio := load(cassette(t, "everything-stdio.jsonl"))
	if len(stdio) == 0 || stdio[0].URL != "mcp-stdio://session-1/c2s/initialize?id=1" || stdio[0].Status != 200 {
		t.Errorf("stdio session imported as %+v", stdio)
	}
}

// TestHTML_BrowserMeta: the page's header shows the session as
// SessionJSON carries it: client, started (to the second, in UTC) and,
// for a stdio session that ended, the server's exit code.
func TestHTML_BrowserMeta(t *testing.T) {
	r := cassette(t, "gosdk-stdio-2025-06-18.jsonl")
	if r.Session.StartedAt.IsZero() || r.Session.EndedAt.IsZero() || len(r.Session.ClientInfo) == 0 {
		t.Fatalf("session %+v: want one that started, ended and names its client", r.Session)
	}
	ctx := browse(t)
	open(t, ctx, r)
	got := eval[string](t, ctx, `document.querySelector('#meta').textContent`)
	for _, want := range []string{
		"started" + r.Session.StartedAt.UTC().Format("2006-01-02 15:04:05") + " UTC",
		"exit" + strconv.Itoa(r.Session.ExitCode),
		"client",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("#meta = %q; want it to contain %q", got, want)
		}
	}
}
