package replayer

import (
	"bufio"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/internal/rules"
	"github.com/mcpvcr/mcpvcr/internal/storetest"
	"github.com/mcpvcr/mcpvcr/store"
)

// A client's answer to a server request (elicitation, sampling, roots,
// ping) is a client frame like any other (issue #46 item 4): compared
// under the same rules, reported when it differs, loosened only by a rule
// the user writes.

const (
	askCall   = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask"}}`
	askElicit = `{"jsonrpc":"2.0","id":0,"method":"elicitation/create","params":{"message":"name?","requestedSchema":{"type":"object"}}}`
	accepted  = `{"jsonrpc":"2.0","id":0,"result":{"action":"accept","content":{"name":"Ada"}}}`
	declined  = `{"jsonrpc":"2.0","id":0,"result":{"action":"decline"}}`
)

// elicitLines is a session whose client answered the server's
// elicitation with answer, and whose server then said said.
func elicitLines(answer, said string) []string {
	return []string{
		`> ` + askCall,
		`< ` + askElicit,
		`> ` + answer,
		`< {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` + said + `"}]}}`,
	}
}

func saidLine(said string) string {
	return `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` + said + `"}]}}`
}

// TestCursor_AnswerDiffers: a client that declines where the recorded
// one accepted gets what the recording holds next (the server goes on as
// it did), and the answer is reported, naming the paths that differ with
// both values and the rule that would match; in exact mode alike.
func TestCursor_AnswerDiffers(t *testing.T) {
	for _, mt := range []Match{{}, {Exact: true}} {
		t.Run(mt.String(), func(t *testing.T) {
			c := newCursor([]*recording{stdioRecording(t, 1, elicitLines(accepted, "accepted")...)}, mt, true)
			c.start()
			if diff := cmp.Diff([]string{askElicit}, recv(t, c, askCall)); diff != "" {
				t.Fatalf("after the call (-want +got):\n%s", diff)
			}
			outs, matched, mm := c.recv(jsonrpc.Parse([]byte(declined)))
			if mm == nil {
				t.Fatal("a declined elicitation matched the recorded accept silently; want it reported")
			}
			if diff := cmp.Diff([]string{saidLine("accepted")}, datas(outs)); diff != "" {
				t.Errorf("after the differing answer (-want +got):\n%s", diff)
			}
			if matched == nil || matched.Seq != 3 || mm.Closest == nil || mm.Closest.Seq != 3 || mm.Session != 1 {
				t.Errorf("matched %v, closest %v session %d; want recorded seq 3 of session 1", matched, mm.Closest, mm.Session)
			}
			wantErr := `result: answer to elicitation/create differs at result.action: "decline" (recorded "accept"), result.content: (absent) (recorded {"name":"Ada"}); replay went on as recorded after seq 3`
			if got := mm.Error(); got != wantErr {
				t.Errorf("Error() = %s\nwant      %s", got, wantErr)
			}
			wantDiff := "result.action\n  - \"accept\"\n  + \"decline\"\nresult.content\n  - {\"name\":\"Ada\"}\n  + (absent)\n"
			if mm.Diff != wantDiff {
				t.Errorf("Diff = %q; want %q", mm.Diff, wantDiff)
			}
			if diff := cmp.Diff([]string{"elicitation/create:result.action", "elicitation/create:result.content"}, mm.Rules); diff != "" || mm.Tolerant {
				t.Errorf("rules (-want +got):\n%s (tolerant %v)", diff, mm.Tolerant)
			}
			if !strings.Contains(mm.Hint, "--ignore 'elicitation/create:result.action'") {
				t.Errorf("hint = %q; want the --ignore rule", mm.Hint)
			}
		})
	}
}

// TestCursor_AnswerSameAsRecorded: the same answer with the client's
// own key order and number spelling matches without a report
// (tolerant), and numbers count by value only in tolerant mode.
func TestCursor_AnswerSameAsRecorded(t *testing.T) {
	rec := func() *recording {
		return stdioRecording(t, 1, elicitLines(`{"jsonrpc":"2.0","id":0,"result":{"action":"accept","content":{"age":1,"name":"Ada"}}}`, "ok")...)
	}
	live := `{"jsonrpc":"2.0","id":0,"result":{"content":{"name":"Ada","age":1.0},"action":"accept"}}`
	c := newCursor([]*recording{rec()}, Match{}, true)
	recv(t, c, askCall)
	if diff := cmp.Diff([]string{saidLine("ok")}, recv(t, c, live)); diff != "" {
		t.Errorf("tolerant (-want +got):\n%s", diff)
	}
	c = newCursor([]*recording{rec()}, Match{Exact: true}, true)
	recv(t, c, askCall)
	_, _, mm := c.recv(jsonrpc.Parse([]byte(live)))
	if mm == nil || !mm.Tolerant || !strings.Contains(mm.Error(), `result.content.age: 1.0 (recorded 1)`) {
		t.Errorf("exact: mismatch %v (tolerant %v); want result.content.age reported, tolerant matching hinted", mm, mm != nil && mm.Tolerant)
	}
}

// TestCursor_AnswerRules: a rule the user writes, scoped to the server
// request's method, loosens its answers; a rule for another method or for
// request params does not.
func TestCursor_AnswerRules(t *testing.T) {
	live := `{"jsonrpc":"2.0","id":0,"result":{"action":"accept","content":{"name":"Bob"}}}`
	for _, tt := range []struct {
		rules   []string
		differs bool
	}{
		{nil, true},
		{[]string{"elicitation/create:result.content.name"}, false},
		{[]string{"result.content"}, false},
		{[]string{"sampling/createMessage:result.content"}, true},
		{[]string{"tools/call:params.content"}, true},
		{[]string{"elicitation/create:result.action"}, true},
	} {
		t.Run(strings.Join(tt.rules, ","), func(t *testing.T) {
			var mt Match
			for _, r := range tt.rules {
				p, err := rules.ParsePath(r)
				if err != nil {
					t.Fatal(err)
				}
				mt.Ignore = append(mt.Ignore, p)
			}
			c := newCursor([]*recording{stdioRecording(t, 1, elicitLines(accepted, "ok")...)}, mt, true)
			recv(t, c, askCall)
			outs, _, mm := c.recv(jsonrpc.Parse([]byte(live)))
			if (mm != nil) != tt.differs {
				t.Errorf("mismatch = %v; want one: %v", mm, tt.differs)
			}
			if diff := cmp.Diff([]string{saidLine("ok")}, datas(outs)); diff != "" {
				t.Errorf("after the answer (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCursor_AnswerPicksTheCandidateThatAgrees: of two sessions that part
// ways on the client's answer, the one whose recorded answer the client
// gives stays, silently; an answer neither recorded keeps both (the
// server of either has sent the request) and is reported.
func TestCursor_AnswerPicksTheCandidateThatAgrees(t *testing.T) {
	recs := func() []*recording {
		return []*recording{
			stdioRecording(t, 1, elicitLines(accepted, "accepted")...),
			stdioRecording(t, 2, elicitLines(declined, "declined")...),
		}
	}
	for _, tt := range []struct {
		answer  string
		want    []string
		session int64
	}{
		{declined, []string{saidLine("declined")}, 2},
		{accepted, []string{saidLine("accepted")}, 1},
	} {
		c := newCursor(recs(), Match{}, true)
		recv(t, c, askCall)
		if diff := cmp.Diff(tt.want, recv(t, c, tt.answer)); diff != "" {
			t.Errorf("answer %s (-want +got):\n%s", tt.answer, diff)
		}
		if l := c.leader(); len(c.candidates()) != 1 || l.rec.Session.ID != tt.session {
			t.Errorf("answer %s: %d candidates, leader session %d; want session %d alone", tt.answer, len(c.candidates()), l.rec.Session.ID, tt.session)
		}
	}
	c := newCursor(recs(), Match{}, true)
	recv(t, c, askCall)
	outs, _, mm := c.recv(jsonrpc.Parse([]byte(`{"jsonrpc":"2.0","id":0,"result":{"action":"cancel"}}`)))
	if mm == nil || !strings.Contains(mm.Error(), `result.action: "cancel" (recorded "accept")`) || mm.Session != 1 {
		t.Errorf("answer recorded by neither: mismatch %v; want it reported against session 1", mm)
	}
	if len(outs) != 0 || len(c.candidates()) != 2 {
		t.Errorf("answer recorded by neither: sent %v, %d candidates; want nothing yet and both in play", datas(outs), len(c.candidates()))
	}
	if !c.settle() {
		t.Fatal("settle dropped nothing")
	}
	if diff := cmp.Diff([]string{saidLine("accepted")}, datas(c.emit())); diff != "" {
		t.Errorf("after settling (-want +got):\n%s", diff)
	}
}

// serveLines serves one stdio client that writes each line after it read
// want[i] answers to the previous ones, and returns what it read and the
// report.
func serveLines(t *testing.T, srv *Server, lines []string, answers []int) ([]string, *Report) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cr, cw := io.Pipe()
	sr, sw := io.Pipe()
	type result struct {
		rep *Report
		err error
	}
	done := make(chan result, 1)
	go func() {
		rep, err := srv.ServeStdio(ctx, struct {
			io.Reader
			io.Writer
		}{cr, sw})
		sw.Close()
		done <- result{rep, err}
	}()
	var got []string
	in := bufio.NewScanner(sr)
	for i, l := range lines {
		if _, err := io.WriteString(cw, l+"\n"); err != nil {
			t.Fatal(err)
		}
		for range answers[i] {
			if !in.Scan() {
				t.Fatalf("no answer to %s", l)
			}
			got = append(got, in.Text())
		}
	}
	cw.Close()
	for in.Scan() {
		got = append(got, in.Text())
	}
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	return got, r.rep
}

// TestServeStdio_AnswerDiffersIsUnmatched: the report counts a differing
// answer unmatched (replay exits 1 on it) and the client still gets the
// recorded result of its call, not a hang.
func TestServeStdio_AnswerDiffersIsUnmatched(t *testing.T) {
	rec := stdioRecording(t, 1, elicitLines(accepted, "accepted")...)
	got, rep := serveLines(t, &Server{Recordings: []*store.Recording{rec.Recording}}, []string{askCall, declined}, []int{1, 1})
	if diff := cmp.Diff([]string{askElicit, saidLine("accepted")}, got); diff != "" {
		t.Errorf("client read (-want +got):\n%s", diff)
	}
	if rep.OK() || rep.Received != 2 || rep.Matched != 1 || len(rep.Mismatches) != 1 {
		t.Fatalf("report: %d received, %d matched, %d mismatches; want 2, 1, 1", rep.Received, rep.Matched, len(rep.Mismatches))
	}
	var b strings.Builder
	rep.WriteSummary(&b)
	if !strings.Contains(b.String(), "1 matched, 1 unmatched\n  unmatched result: answer to elicitation/create differs at result.action") {
		t.Errorf("summary:\n%s", b.String())
	}
}

// TestSource_AnswerPicksTheSession: read lazily from a cassette (the
// candidate tree parts the sessions at the client's answer), a declining
// client gets the declining session's result with nothing reported, and
// an answer no session recorded is reported.
func TestSource_AnswerPicksTheSession(t *testing.T) {
	ctx := context.Background()
	db, _ := storetest.Import(t, sessionsJSONL(elicitLines(accepted, "accepted"), elicitLines(declined, "declined")))
	for _, tt := range []struct {
		answer string
		said   string
		ok     bool
	}{
		{declined, "declined", true},
		{accepted, "accepted", true},
		{`{"jsonrpc":"2.0","id":0,"result":{"action":"cancel"}}`, "accepted", false},
	} {
		src, err := NewSource(ctx, db, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, rep := serveLines(t, &Server{Source: src}, []string{askCall, tt.answer}, []int{1, 1})
		if diff := cmp.Diff([]string{askElicit, saidLine(tt.said)}, got); diff != "" {
			t.Errorf("answer %s: client read (-want +got):\n%s", tt.answer, diff)
		}
		if rep.OK() != tt.ok {
			var b strings.Builder
			rep.WriteSummary(&b)
			t.Errorf("answer %s: report OK = %v; want %v:\n%s", tt.answer, rep.OK(), tt.ok, b.String())
		}
	}
}
