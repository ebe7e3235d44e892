package diff

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpvcr/mcpvcr/store"
)

func TestLearn(t *testing.T) {
	clock := `> {"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"x://clock"}}`
	logs := `> {"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"logs"}}`
	run := func(id int64, now string, items string, notes ...string) *store.Recording {
		lines := []string{initReq, initResp, inited, clock,
			`< {"jsonrpc":"2.0","id":3,"result":{"contents":[{"uri":"x://clock","text":"it is ` + now + `"}]}}`,
			logs, `< {"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"[` + items + `]"}]}}`,
		}
		return lineRecording(t, id, append(lines, notes...)...)
	}
	note := `< {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"tick"}}`
	expected := run(1, "3:00:01 PM", "1,2")
	a := run(2, "3:00:05 PM", "1,2,3", note)
	b := run(3, "3:00:09 PM", "1,2", note, note)

	got := Learn(expected, a, b)
	want := "#4:result.contents[uri=x://clock].text\n" +
		"#6:result.content[0].text\n" +
		`server:notifications["notifications/message"]`
	if diff := cmp.Diff(want, got.String()); diff != "" {
		t.Errorf("Learn (-want +got):\n%s", diff)
	}
	// What was learned hides those differences, and only those.
	c := run(4, "4:00:00 PM", "7", note)
	if r := Compare(expected, c, got); r.Differs() {
		t.Errorf("Diff with the learned noise: %q; want no differences", changesOf(r))
	}
	changed := lineRecording(t, 5, initReq, `< {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s","version":"2"}}}`,
		inited, clock, `< {"jsonrpc":"2.0","id":3,"result":{"contents":[{"uri":"x://clock","text":"x"}]}}`,
		logs, `< {"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"[1]"}]}}`)
	if diff := cmp.Diff([]string{"initialize (seq 1) result.serverInfo.version changed"}, changesOf(Compare(expected, changed, got))); diff != "" {
		t.Errorf("Diff of a real change with the learned noise (-want +got):\n%s", diff)
	}
}

func TestNoise_Rescope(t *testing.T) {
	old := lineRecording(t, 1, initReq, initResp, inited, listReq, `< {"jsonrpc":"2.0","id":2,"result":{"tools":[]}}`, callReq)
	next := lineRecording(t, 2, initReq, `< {"jsonrpc":"2.0","method":"notifications/message","params":{}}`, initResp, inited,
		listReq, `< {"jsonrpc":"2.0","id":2,"result":{"tools":[]}}`)
	n, err := ParseNoise("#4:result.tools\n#6:result\ntools/list:result.x\nserver:notifications")
	if err != nil {
		t.Fatal(err)
	}
	got := n.Rescope(old, next).String()
	want := "#5:result.tools\ntools/list:result.x\nserver:notifications"
	if got != want {
		t.Errorf("Rescope = %q; want %q (seq 4 is seq 5 now; seq 6 is gone)", got, want)
	}
}
