package diff

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpvcr/mcpvcr/internal/storetest"
	"github.com/mcpvcr/mcpvcr/store"
)

// lineRecording is storetest.LineRecording.
var lineRecording = storetest.LineRecording

// changesOf flattens a report as "label path kind" lines, or
// "label status" for requests without changes.
func changesOf(r *Report) []string {
	var out []string
	for _, rd := range r.all() {
		if !rd.Differs() {
			continue
		}
		if len(rd.Changes) == 0 {
			out = append(out, rd.Label()+" "+string(rd.Status))
		}
		for _, c := range rd.Changes {
			out = append(out, rd.Label()+" "+c.Path+" "+string(c.Kind))
		}
	}
	return out
}

const (
	initReq  = `> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`
	initResp = `< {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`
	inited   = `> {"jsonrpc":"2.0","method":"notifications/initialized"}`
	listReq  = `> {"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	callReq  = `> {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"info","arguments":{}}}`
)

func TestCompare(t *testing.T) {
	base := []string{initReq, initResp, inited,
		listReq, `< {"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"a","description":"A"},{"name":"b"}]}}`,
		callReq, `< {"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"{\"v\":\"1\"}"}],"structuredContent":{"v":"1"}}}`,
	}
	with := func(repl map[int]string, extra ...string) []string {
		out := append([]string(nil), base...)
		for i, l := range repl {
			out[i] = l
		}
		return append(out, extra...)
	}
	tests := []struct {
		name  string
		new   []string
		noise Noise
		want  []string
	}{
		{"Same", base, Noise{}, nil},
		{"ToolsReordered", with(map[int]string{4: `< {"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"b"},{"description":"A","name":"a"}]}}`}), Noise{}, nil},
		{"ToolAdded", with(map[int]string{4: `< {"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"a","description":"A"},{"name":"b"},{"name":"c"}]}}`}), Noise{},
			[]string{"tools/list (seq 4) result.tools[name=c] added"}},
		{"DescriptionChanged", with(map[int]string{4: `< {"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"a","description":"B"},{"name":"b"}]}}`}), Noise{},
			[]string{"tools/list (seq 4) result.tools[name=a].description changed"}},
		{"MirrorChangedOnce", with(map[int]string{6: `< {"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"{\"v\":\"2\"}"}],"structuredContent":{"v":"2"}}}`}), Noise{},
			[]string{"tools/call info (seq 6) result.structuredContent.v changed"}},
		{"Ignored", with(map[int]string{6: `< {"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"{\"v\":\"2\"}"}],"structuredContent":{"v":"2"}}}`}),
			Noise{Paths: []Path{MustParsePath("tools/call info:result.structuredContent.v")}}, nil},
		{"IgnoredWholeRequest", with(map[int]string{6: `< {"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"boom"}}`}),
			Noise{Paths: []Path{MustParsePath("#6:**")}}, nil},
		{"BecameError", with(map[int]string{6: `< {"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"boom"}}`}), Noise{},
			[]string{"tools/call info (seq 6) error added", "tools/call info (seq 6) result removed"}},
		{"Unanswered", base[:6], Noise{}, []string{"tools/call info (seq 6) unanswered"}},
		{"Missing", base[:5], Noise{}, []string{"tools/call info (seq 6) missing"}},
		{"Extra", with(nil, `> {"jsonrpc":"2.0","id":4,"method":"ping"}`, `< {"jsonrpc":"2.0","id":4,"result":{}}`), Noise{},
			[]string{"ping (new seq 8) extra"}},
		{"StderrDoesNotCount", with(nil, "! some log line at 2026-01-01T00:00:00Z"), Noise{}, nil},
		{"NotificationsInterleaved", []string{initReq, `< {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"b"}}`,
			initResp, inited, `< {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"a"}}`,
			listReq, base[4], callReq, base[6]}, Noise{}, nil},
	}
	old := lineRecording(t, 1, append(base[:len(base):len(base)],
		`< {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"a"}}`,
		`< {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"b"}}`)...)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var oldRec *store.Recording
			if tt.name == "NotificationsInterleaved" {
				oldRec = old
			} else {
				oldRec = lineRecording(t, 1, base...)
			}
			r := Compare(oldRec, lineRecording(t, 2, tt.new...), tt.noise)
			if diff := cmp.Diff(tt.want, changesOf(r)); diff != "" {
				t.Errorf("Diff (-want +got):\n%s", diff)
			}
			if r.Differs() != (tt.want != nil) {
				t.Errorf("Differs() = %v; want %v", r.Differs(), tt.want != nil)
			}
		})
	}
}

// TestDiff_Progress compares progress notifications per request, and
// cancelled requests whether or not they were answered.
func TestCompare_Progress(t *testing.T) {
	slow := `> {"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":"p1"}}}`
	started := `< {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p1","progress":1,"message":"started"}}`
	cancel := `> {"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}`
	answer := `< {"jsonrpc":"2.0","id":5,"result":{"content":[],"isError":true}}`
	old := lineRecording(t, 1, initReq, initResp, slow, started, cancel, answer)
	tests := []struct {
		name string
		new  []string
		want []string
	}{
		{"Same", []string{initReq, initResp, slow, started, cancel, answer}, nil},
		{"CancelledUnanswered", []string{initReq, initResp, slow, started, cancel}, nil},
		{"ProgressChanged", []string{initReq, initResp, slow, strings.Replace(started, "started", "begun", 1), cancel, answer},
			[]string{"tools/call slow (seq 3) progress[0].message changed"}},
		{"ProgressMissing", []string{initReq, initResp, slow, cancel, answer},
			[]string{"tools/call slow (seq 3) progress removed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Compare(old, lineRecording(t, 2, tt.new...), Noise{})
			if diff := cmp.Diff(tt.want, changesOf(r)); diff != "" {
				t.Errorf("Diff (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReport_Write(t *testing.T) {
	old := lineRecording(t, 1, initReq, initResp, callReq, `< {"jsonrpc":"2.0","id":3,"result":{"structuredContent":{"v":"1.0.0"}}}`)
	new := lineRecording(t, 2, initReq, initResp, callReq, `< {"jsonrpc":"2.0","id":3,"result":{"structuredContent":{"v":"2.0.0"}}}`)
	r := Compare(old, new, Noise{})

	var text bytes.Buffer
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	want := "comparing session 1 (stdio, 2025-06-18) with session 2 (stdio, 2025-06-18)\n" +
		"tools/call info (seq 3): 1 change\n" +
		"  changed  result.structuredContent.v\n" +
		"             - \"1.0.0\"\n" +
		"             + \"2.0.0\"\n" +
		"1 of 2 requests differ: 1 changed (1 change)\n"
	if diff := cmp.Diff(want, text.String()); diff != "" {
		t.Errorf("WriteText (-want +got):\n%s", diff)
	}

	var js bytes.Buffer
	if err := WriteJSON(&js, r); err != nil {
		t.Fatal(err)
	}
	var decoded struct {
		Differ  bool      `json:"differ"`
		Reports []*Report `json:"reports"`
	}
	if err := json.Unmarshal(js.Bytes(), &decoded); err != nil {
		t.Fatalf("WriteJSON output does not decode: %v\n%s", err, js.String())
	}
	if diff := cmp.Diff(r, decoded.Reports[0]); diff != "" || !decoded.Differ {
		t.Errorf("WriteJSON round trip (-want +got):\n%s", diff)
	}

	var junit bytes.Buffer
	if err := WriteJUnit(&junit, r); err != nil {
		t.Fatal(err)
	}
	var doc junitSuites
	if err := xml.Unmarshal(junit.Bytes(), &doc); err != nil {
		t.Fatalf("WriteJUnit output does not decode: %v\n%s", err, junit.String())
	}
	s := doc.Suites[0]
	if s.Tests != 2 || s.Failures != 1 || s.Cases[1].Failure == nil || !strings.Contains(s.Cases[1].Failure.Body, `+ "2.0.0"`) {
		t.Errorf("WriteJUnit = %+v; want 2 tests, the second failing with the diff", s)
	}
}

// TestReport_WriteTextTraffic shows what the server sent on its own by
// method and a short body, not as a list of empty strings.
func TestReport_WriteTextTraffic(t *testing.T) {
	changed := `< {"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`
	logged := `< {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hi"}}`
	old := lineRecording(t, 1, initReq, initResp, inited, logged)
	new := lineRecording(t, 2, initReq, initResp, inited, changed, changed)
	var b bytes.Buffer
	if err := Compare(old, new, Noise{}).WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`added    notifications["notifications/tools/list_changed"]`,
		`+ 2 × notifications/tools/list_changed (no params)`,
		`removed  notifications["notifications/message"]`,
		`- notifications/message {"data":"hi","level":"info"}`,
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), `""`) {
		t.Errorf("text report shows empty strings:\n%s", b.String())
	}
}
