package view_test

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpvcr/mcpvcr/store"
	"github.com/mcpvcr/mcpvcr/view"
)

// chaosFixture is a chaos run over session 1 of gosdk-http-2025-11-25
// with a fault of each placement: after an event (a failed verdict whose
// text looks like markup), on a stream with no event, at a request, in a
// session the page does not show, and one not reached.
func chaosFixture() view.Chaos {
	return view.Chaos{Seed: 7, Kinds: []string{"cut-resumable", "refuse-get", "503"}, Rate: 3,
		Command: "mcpvcr replay --cassette c.db --listen 127.0.0.1:0 --chaos 7",
		Faults: []view.ChaosFault{
			{Session: 1, Kind: "cut-resumable", Stream: 8, Event: 3, Seq: 21, Where: "post#8 after event 3 (seq 21)",
				What: "cut-resumable: post#8 dropped after 3 event(s) (seq 21)",
				Did:  `reconnected with a GET without Last-Event-ID </script><img src=x onerror="document.title='owned'">`, Verdict: view.VerdictFail},
			{Session: 1, Kind: "refuse-get", Stream: 2, Where: "get#2", What: "refuse-get: the standalone GET stream (get#2) answered 405",
				Did: "carried on without the GET stream (next: POST tools/list)", Verdict: view.VerdictPass},
			{Session: 1, Kind: "503", Request: 7, Where: "POST 7", What: "503: POST 7 answered 503 with Retry-After: 1",
				Did: "retried the request", Verdict: view.VerdictPass},
			{Session: 9, Kind: "expire", Request: 3, Where: "POST 3", What: "expire: the session expires (404) at its POST 3", Verdict: view.VerdictNotObserved},
			{Session: 1, Kind: "delay", Stream: 10, Seq: 9999, Where: "post#10 event 2 (seq 9999)", What: "delay: 8ms before post#10 event 2 (seq 9999)", Verdict: view.VerdictNotReached},
		}}
}

var dataRE = regexp.MustCompile(`(?s)<script id="data" type="application/json">(.*?)</script>`)

// pageData returns the data a page embeds.
func pageData(t *testing.T, page []byte) map[string]json.RawMessage {
	t.Helper()
	m := dataRE.FindSubmatch(page)
	if m == nil {
		t.Fatal("no data in the page")
	}
	var d map[string]json.RawMessage
	must(t, json.Unmarshal(m[1], &d))
	return d
}

func TestWriteHTML_ChaosMarks(t *testing.T) {
	// Each fault is placed on its session's timeline: on the frame it
	// hit (the event a cut followed; the client frame of the POST a
	// request's fault hit, counting POSTs as chaos replay does), or on
	// its stream's opening row when no frame is named or the frame is
	// not in the session; a fault of a session the page lacks is listed
	// but not placed (st -1).
	r := cassette(t, "gosdk-http-2025-11-25.jsonl")
	ch := chaosFixture()
	var buf bytes.Buffer
	must(t, view.WriteHTML(&buf, view.Page{Sessions: []*store.Recording{r}, Chaos: &ch}))
	var got struct {
		Seed    uint64 `json:",string"`
		Command string
		Faults  []struct {
			Kind    string
			Verdict string
			At      int64
			St      int
		}
	}
	must(t, json.Unmarshal(pageData(t, buf.Bytes())["chaos"], &got))
	type mark struct {
		Kind, Verdict string
		At            int64
		St            int
	}
	var marks []mark
	for _, f := range got.Faults {
		marks = append(marks, mark{f.Kind, f.Verdict, f.At, f.St})
	}
	want := []mark{
		{"cut-resumable", "fail", 21, 7},
		{"refuse-get", "pass", 0, 1},
		{"503", "pass", 18, 7}, // post#8 is the 7th POST; seq 18 its request
		{"expire", "not observed", 0, -1},
		{"delay", "not reached", 0, 9},
	}
	if diff := cmp.Diff(want, marks); diff != "" {
		t.Errorf("chaos marks mismatch (-want +got):\n%s", diff)
	}
	if got.Seed != 7 || got.Command != ch.Command {
		t.Errorf("chaos summary: seed %d, command %q; want 7, %q", got.Seed, got.Command, ch.Command)
	}
}

func TestWriteHTML_ChaosBytes(t *testing.T) {
	// A chaos report shows the recorded frames exactly as the view does
	// without chaos (the same session data, byte for byte), and the
	// faults' text, markup included, stays data: a frame and a verdict
	// holding </script> leave the page with its own two closing tags.
	r := cassette(t, "gosdk-http-2025-11-25.jsonl")
	r.Frames[0].Raw = []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"x":"</script><script>alert(1)</script>"}}`)
	ch := chaosFixture()
	var plain, chaos bytes.Buffer
	must(t, view.WriteHTML(&plain, view.Page{Sessions: []*store.Recording{r}}))
	must(t, view.WriteHTML(&chaos, view.Page{Sessions: []*store.Recording{r}, Chaos: &ch}))
	if got, want := closingScripts(chaos.String()), 2; got != want {
		t.Errorf("chaos page has %d closing script tags; want %d", got, want)
	}
	if strings.Contains(chaos.String(), "<img") {
		t.Error("a fault's text reached the page as markup")
	}
	p, c := pageData(t, plain.Bytes()), pageData(t, chaos.Bytes())
	if !bytes.Equal(p["sessions"], c["sessions"]) {
		t.Error("the sessions of a chaos report differ from the view's")
	}
	var sessions []struct{ Frames []struct{ R string } }
	must(t, json.Unmarshal(c["sessions"], &sessions))
	for i, f := range sessions[0].Frames {
		if f.R != string(r.Frames[i].Raw) {
			t.Errorf("frame %d shown as %q; want %q", r.Frames[i].Seq, f.R, r.Frames[i].Raw)
		}
	}
	if _, ok := p["chaos"]; ok {
		t.Error("a page without a chaos run carries chaos data")
	}
}

func TestExportChaosHTML(t *testing.T) {
	// The page shows the sessions the faults were placed in, in order;
	// with no fault, the sessions given.
	ctx := context.Background()
	db := importDB(t, "gosdk-http-2025-11-25.jsonl", "gosdk-http-2025-11-25.jsonl", "gosdk-http-2025-11-25.jsonl")
	ids := func(page []byte) []int64 {
		var ss []struct{ ID int64 }
		must(t, json.Unmarshal(pageData(t, page)["sessions"], &ss))
		var out []int64
		for _, s := range ss {
			out = append(out, s.ID)
		}
		return out
	}
	ch := view.Chaos{Seed: 3, Rate: 1, Faults: []view.ChaosFault{
		{Session: 3, Kind: "refuse-get", Stream: 2, Verdict: view.VerdictFail},
		{Session: 2, Kind: "refuse-get", Stream: 2, Verdict: view.VerdictPass},
		{Session: 3, Kind: "delay", Stream: 4, Verdict: view.VerdictNotReached},
	}}
	var buf bytes.Buffer
	must(t, view.ExportChaosHTML(ctx, db, &buf, ch, 1))
	if diff := cmp.Diff([]int64{2, 3}, ids(buf.Bytes())); diff != "" {
		t.Errorf("sessions shown mismatch (-want +got):\n%s", diff)
	}
	if !strings.Contains(buf.String(), "<title>mcpvcr chaos seed 3: 2 injected, 1 fail</title>") {
		t.Errorf("title: %s", regexp.MustCompile(`<title>.*</title>`).FindString(buf.String()))
	}
	buf.Reset()
	must(t, view.ExportChaosHTML(ctx, db, &buf, view.Chaos{Seed: 3, Rate: 1}, 1))
	if diff := cmp.Diff([]int64{1}, ids(buf.Bytes())); diff != "" {
		t.Errorf("sessions shown without faults mismatch (-want +got):\n%s", diff)
	}
}
