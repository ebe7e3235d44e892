package replayer

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/internal/storetest"
)

// cancelledCall is a recorded call that the client cancelled after the
// first progress notification while the server went on.
var cancelledCall = []string{
	`> {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"long","_meta":{"progressToken":"t"}}}`,
	`< {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}`,
	`> {"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}`,
	`< {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":2}}`,
}

const liveCall = `{"jsonrpc":"2.0","id":30,"method":"tools/call","params":{"name":"long","_meta":{"progressToken":"u"}}}`

func TestCursor_CancelledUnansweredIsNotAStall(t *testing.T) {
	c := newCursor([]*recording{stdioRecording(t, 1, cancelledCall...)}, Match{}, true)
	c.start()
	if diff := cmp.Diff([]string{`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"u","progress":1}}`}, recv(t, c, liveCall)); diff != "" {
		t.Errorf("after the call (-want +got):\n%s", diff)
	}
	sts := c.stalls()
	if len(sts) != 1 || !sts[0].Expected || sts[0].Cancel == nil || sts[0].Cancel.Seq != 3 {
		t.Fatalf("stalls() = %+v; want one expected stall naming the recorded cancellation (seq 3)", sts)
	}
	if got, want := sts[0].Describe(), "the recorded client cancelled it (notifications/cancelled, seq 3)"; !strings.Contains(got, want) {
		t.Errorf("describe() = %q; want it to say %q", got, want)
	}
	got := recv(t, c, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":30}}`)
	if diff := cmp.Diff([]string{`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"u","progress":2}}`}, got); diff != "" {
		t.Errorf("after the cancellation (-want +got):\n%s", diff)
	}
	if sts := c.stalls(); len(sts) != 0 {
		t.Errorf("stalls() after the cancellation = %+v; want none: nothing is owed", sts)
	}
}

func TestCursor_WaiveReleasesLateAnswer(t *testing.T) {
	rec := stdioRecording(t, 1, append(cancelledCall, `< {"jsonrpc":"2.0","id":3,"result":{"late":true}}`)...)
	c := newCursor([]*recording{rec}, Match{}, true)
	c.start()
	recv(t, c, liveCall)
	sts := c.stalls()
	if len(sts) != 1 || sts[0].Cancel == nil || len(sts[0].Awaited) != 1 {
		t.Fatalf("stalls() = %+v; want one stall awaiting the recorded cancellation", sts)
	}
	if _, ok := c.waive(sts[0]); !ok {
		t.Fatal("waive() = false; want the frames after the cancellation released")
	}
	want := []string{
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"u","progress":2}}`,
		`{"jsonrpc":"2.0","id":30,"result":{"late":true}}`,
	}
	if diff := cmp.Diff(want, datas(c.emit())); diff != "" {
		t.Errorf("after waive (-want +got):\n%s", diff)
	}
}

// TestCursor_WaiveReturnsReleased: over HTTP nothing is queued; the
// frames waive releases are returned for the streams to send (they
// were released and never sent, and the client waited for good).
func TestCursor_WaiveReturnsReleased(t *testing.T) {
	rec := stdioRecording(t, 1, append(cancelledCall, `< {"jsonrpc":"2.0","id":3,"result":{"late":true}}`)...)
	c := newCursor([]*recording{rec}, Match{}, false)
	c.start()
	c.receive(jsonrpc.Parse([]byte(liveCall)), nil)
	sts := c.stalls()
	if len(sts) != 1 {
		t.Fatalf("stalls() = %+v; want one", sts)
	}
	outs, ok := c.waive(sts[0])
	if !ok {
		t.Fatal("waive() = false; want the frames after the cancellation released")
	}
	var got []string
	for _, o := range outs {
		got = append(got, o.Frame.Method+" "+string(o.Frame.ID)) // a result has no method
	}
	if diff := cmp.Diff([]string{"notifications/progress ", " 3"}, got); diff != "" {
		t.Errorf("released frames (-want +got):\n%s", diff)
	}
}

func TestCursor_WaiveNeedsAnAnswer(t *testing.T) {
	c := newCursor([]*recording{stdioRecording(t, 1, cancelledCall...)}, Match{}, true)
	c.start()
	recv(t, c, liveCall)
	if sts := c.stalls(); len(sts) != 1 || waived(c, sts[0]) {
		t.Errorf("waive(%+v) = true; want false: the recording holds no answer, so the --wait rule answers", sts)
	}
}

// TestSource_SplitsWhereACancellingSessionWaits: two sessions share a call
// and its first progress; one client cancelled there, the other's server
// went on to answer. A client that does not cancel must get the answer,
// though the cancelling session speaks for both up to there.
func TestSource_SplitsWhereACancellingSessionWaits(t *testing.T) {
	open := []string{
		`> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18"}}`,
	}
	answered := append(append(append([]string{}, open...), cancelledCall[:2]...),
		`< {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":2}}`,
		`< {"jsonrpc":"2.0","id":3,"result":{"done":true}}`)
	ctx := context.Background()
	db, _ := storetest.Import(t, sessionsJSONL(append(append([]string{}, open...), cancelledCall...), answered))
	src, err := NewSource(ctx, db, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := awaitLine(t, &Server{Source: src, Wait: -1}, `"done"`,
		`{"jsonrpc":"2.0","id":10,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`, liveCall)
	want := []string{
		`{"jsonrpc":"2.0","id":10,"result":{"protocolVersion":"2025-06-18"}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"u","progress":1}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"u","progress":2}}`,
		`{"jsonrpc":"2.0","id":30,"result":{"done":true}}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("replayed lines (-want +got):\n%s", diff)
	}
}

// sessionsJSONL returns the JSONL export of stdio sessions, one per list
// of "> " and "< " lines.
func sessionsJSONL(sessions ...[]string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(map[string]any{"type": "mcpvcr", "version": 1})
	for n, lines := range sessions {
		s := n + 1
		_ = enc.Encode(map[string]any{"type": "session", "id": s, "transport": "stdio", "revision": "2025-06-18", "era": "legacy",
			"started_at": "2026-01-01T00:00:00Z", "ended_at": "2026-01-01T00:00:01Z", "exit_code": 0})
		_ = enc.Encode(map[string]any{"type": "stream", "id": 2*s - 1, "session": s, "kind": "stdin", "end": "complete", "closed_ns": 100})
		_ = enc.Encode(map[string]any{"type": "stream", "id": 2 * s, "session": s, "kind": "stdout", "end": "complete", "closed_ns": 100})
		for i, l := range lines {
			dir, stream := "s2c", 2*s
			if l[0] == '>' {
				dir, stream = "c2s", 2*s-1
			}
			_ = enc.Encode(map[string]any{"type": "frame", "session": s, "seq": i + 1, "stream": stream, "dir": dir, "offset_ns": i + 1, "raw": l[2:] + "\n"})
		}
	}
	return b.String()
}

// awaitLine serves one stdio client that sends lines, then reads until a
// line containing want arrives, and returns every line it got.
func awaitLine(t *testing.T, srv *Server, want string, lines ...string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cr, cw := io.Pipe()
	sr, sw := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = srv.ServeStdio(ctx, struct {
			io.Reader
			io.Writer
		}{cr, sw})
		sw.Close()
	}()
	go func() {
		for _, l := range lines {
			if _, err := io.WriteString(cw, l+"\n"); err != nil {
				return
			}
		}
	}()
	var got []string
	in := bufio.NewScanner(sr)
	for in.Scan() {
		got = append(got, in.Text())
		if strings.Contains(in.Text(), want) {
			break
		}
	}
	cw.Close()
	go func() { _, _ = io.Copy(io.Discard, sr) }()
	<-done
	if ctx.Err() != nil {
		t.Errorf("no line with %s before the deadline; got %v", want, got)
	}
	return got
}

// TestCursor_SettleKeepsWhatCameBeforeTheCancellation: two sessions
// cancel the same call, one before the second progress notification and
// one after it. Settling between them keeps the one that sends progress
// 2 now: a frame recorded before the client's cancellation is not held
// back for it.
func TestCursor_SettleKeepsWhatCameBeforeTheCancellation(t *testing.T) {
	early := stdioRecording(t, 1, cancelledCall[0], cancelledCall[1], cancelledCall[2], cancelledCall[3])
	late := stdioRecording(t, 2, cancelledCall[0], cancelledCall[1], cancelledCall[3], cancelledCall[2],
		`< {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":3}}`)
	c := newCursor([]*recording{early, late}, Match{}, true)
	c.start()
	recv(t, c, liveCall)
	if !c.undecided() || !c.settle() {
		t.Fatal("the candidates agree; want them undecided on progress 2")
	}
	if diff := cmp.Diff([]string{`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"u","progress":2}}`}, datas(c.emit())); diff != "" {
		t.Errorf("after settling (-want +got):\n%s", diff)
	}
	got := recv(t, c, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":30}}`)
	if diff := cmp.Diff([]string{`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"u","progress":3}}`}, got); diff != "" {
		t.Errorf("after the cancellation (-want +got):\n%s", diff)
	}
}

// TestCursor_SettleAfterGivesTimeToCancel: while a candidate waits for
// this client to cancel as its recorded client did, and another's server
// goes on, settling waits CancelGrace more than the recorded client took
// to cancel; without such a candidate, the base time.
func TestCursor_SettleAfterGivesTimeToCancel(t *testing.T) {
	answered := stdioRecording(t, 2, cancelledCall[0], cancelledCall[1], cancelledCall[3], `< {"jsonrpc":"2.0","id":3,"result":{}}`)
	c := newCursor([]*recording{stdioRecording(t, 1, cancelledCall...), answered}, Match{}, true)
	c.start()
	recv(t, c, liveCall)
	if got, want := c.settleAfter(DefaultSettle), CancelGrace; got < want {
		t.Errorf("settleAfter() = %v; want at least %v", got, want)
	}
	c = newCursor([]*recording{answered}, Match{}, true)
	c.start()
	recv(t, c, liveCall)
	if got, want := c.settleAfter(DefaultSettle), DefaultSettle; got != want {
		t.Errorf("settleAfter() without a cancelling candidate = %v; want %v", got, want)
	}
}

// waived reports whether c.waive(st) waived anything.
func waived(c *cursor, st stall) bool {
	_, ok := c.waive(st)
	return ok
}

// TestCursor_ServerCancelKeepsItsTimeout: a server's cancellation of its
// own request keeps the delay since that request, even when the server's
// answer to the client's call overtook the cancellation in the recording
// (so that the client gets the request well before the cancellation, as
// it did).
func TestCursor_ServerCancelKeepsItsTimeout(t *testing.T) {
	rec := stdioRecording(t, 1,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"abandon"}}`,
		`< {"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":{"message":"name?"}}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"content":[]}}`,
		`< {"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
	)
	offsets := []time.Duration{0, time.Millisecond, 101 * time.Millisecond, 101 * time.Millisecond}
	for i := range rec.Frames {
		rec.Frames[i].Offset = offsets[i]
	}
	c := newCursor([]*recording{rec}, Match{}, true)
	c.start()
	outs, _, mm := c.recv(jsonrpc.Parse([]byte(`{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"abandon"}}`)))
	if mm != nil {
		t.Fatal(mm)
	}
	outs = append(outs, c.emit()...)
	if len(outs) != 3 {
		t.Fatalf("released %q; want the elicitation, the answer and the cancellation", datas(outs))
	}
	if o := outs[2]; !o.Timed || o.Gap != 100*time.Millisecond {
		t.Errorf("the cancellation has Timed %t, Gap %v; want true and 100ms, the time since the elicitation", o.Timed, o.Gap)
	}
}

// TestCursor_AgreesAcrossServerOrder: the flake of
// TestCancel_EverythingStdio. Two sessions of one call, whose server
// also asks the client for its roots: in one the progress came before
// roots/list, and the client cancelled after progress 2 while the server
// went on; in the other roots/list came first, and the server answered.
// Candidates that sent the same frames in another order agree on them,
// so either client gets progress 2 and decides: the cancelling client's
// cancellation keeps the first session, a client that does not cancel is
// settled on the second and gets the answer.
func TestCursor_AgreesAcrossServerOrder(t *testing.T) {
	const (
		roots     = `{"jsonrpc":"2.0","id":0,"method":"roots/list"}`
		rootsBack = `{"jsonrpc":"2.0","id":0,"result":{"roots":[]}}`
		cancel    = `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":30}}`
		answer    = `{"jsonrpc":"2.0","id":30,"result":{"done":true}}`
	)
	progress := func(token, n string) string {
		return `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"` + token + `","progress":` + n + `}}`
	}
	rec := func(n string) string { return "< " + progress("t", n) }
	cancelling := stdioRecording(t, 1, cancelledCall[0], rec("1"), "< "+roots, "> "+rootsBack, rec("2"), cancelledCall[2], rec("3"))
	answering := stdioRecording(t, 2, cancelledCall[0], "< "+roots, "> "+rootsBack, rec("1"), rec("2"), rec("3"),
		`< {"jsonrpc":"2.0","id":3,"result":{"done":true}}`)
	for _, cancels := range []bool{true, false} {
		c := newCursor([]*recording{cancelling, answering}, Match{}, true)
		c.start()
		if diff := cmp.Diff([]string{roots}, recv(t, c, liveCall)); diff != "" {
			t.Fatalf("after the call (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{progress("u", "1"), progress("u", "2")}, recv(t, c, rootsBack)); diff != "" {
			t.Fatalf("after the client's roots (-want +got):\n%s", diff)
		}
		var got []string
		if cancels {
			got = recv(t, c, cancel)
		} else {
			if !c.undecided() || !c.settle() {
				t.Fatal("settle() dropped nothing; want the cancelling session dropped")
			}
			got = datas(c.emit())
		}
		want := []string{progress("u", "3")}
		if !cancels {
			want = append(want, answer)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("cancels=%v, at the end (-want +got):\n%s", cancels, diff)
		}
		if lead := c.leader().rec.Session.ID; lead != map[bool]int64{true: 1, false: 2}[cancels] {
			t.Errorf("cancels=%v: replaying session %d", cancels, lead)
		}
	}
}

// TestCursor_NoAnswerAheadOfWhatOnlyOneSent: one session's server sent a
// log line before its answer, the other's the answer alone. The answer is
// not sent ahead of the log line (no recording holds the log line after
// the answer): nothing goes until the candidates settle, then the first
// session's frames in its order.
func TestCursor_NoAnswerAheadOfWhatOnlyOneSent(t *testing.T) {
	const (
		call   = `{"jsonrpc":"2.0","id":30,"method":"tools/call","params":{"name":"x"}}`
		logged = `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"working"}}`
	)
	withLog := stdioRecording(t, 1, `> {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x"}}`, "< "+logged, `< {"jsonrpc":"2.0","id":3,"result":{}}`)
	without := stdioRecording(t, 2, `> {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x"}}`, `< {"jsonrpc":"2.0","id":3,"result":{}}`)
	c := newCursor([]*recording{withLog, without}, Match{}, true)
	c.start()
	if got := recv(t, c, call); len(got) != 0 {
		t.Fatalf("after the call: %q; want nothing before the candidates settle", got)
	}
	if !c.undecided() || !c.settle() {
		t.Fatal("settle() dropped nothing")
	}
	if diff := cmp.Diff([]string{logged, `{"jsonrpc":"2.0","id":30,"result":{}}`}, datas(c.emit())); diff != "" {
		t.Errorf("after settling (-want +got):\n%s", diff)
	}
}

// TestEmitLog_Unsent: what a session loaded later must not send again,
// from the frames that went out, in order (a count) and out of order
// (by payload).
func TestEmitLog_Unsent(t *testing.T) {
	type out struct {
		data string
		head bool
	}
	for _, tc := range []struct {
		outs []string
		went []out
		want []string
	}{
		{[]string{"a", "b", "c"}, nil, []string{"a", "b", "c"}},
		{[]string{"a", "b", "c"}, []out{{"a", true}, {"b", true}}, []string{"c"}},
		{[]string{"p1", "roots", "p2"}, []out{{"roots", false}}, []string{"p1", "p2"}},
		{[]string{"p1", "roots", "p2", "x"}, []out{{"roots", false}, {"p1", true}, {"p2", true}}, []string{"x"}},
		{[]string{"x", "y", "x"}, []out{{"y", false}}, []string{"x", "x"}},
		{[]string{"x", "y", "x"}, []out{{"x", true}, {"x", false}}, []string{"y"}},
		{[]string{"a"}, []out{{"a", true}, {"b", true}}, nil},
	} {
		var l emitLog
		for _, o := range tc.went {
			l.note([]byte(o.data), o.head)
		}
		var outs []outFrame
		for _, d := range tc.outs {
			outs = append(outs, outFrame{Data: []byte(d)})
		}
		var got []string
		for _, o := range l.unsent(outs) {
			got = append(got, string(o.Data))
		}
		if !cmp.Equal(got, tc.want, cmpopts.EquateEmpty()) {
			t.Errorf("outs %q after %v: unsent = %q; want %q", tc.outs, tc.went, got, tc.want)
		}
	}
}

// TestSource_BringsASessionAfterFramesOutOfOrder: a session loaded after
// frames went out of its order (roots/list ahead of progress 1, as
// another candidate recorded them) queues what it released less those
// frames, by content, not its first so many: the client gets progress 1
// next, once.
func TestSource_BringsASessionAfterFramesOutOfOrder(t *testing.T) {
	const (
		roots     = `{"jsonrpc":"2.0","id":0,"method":"roots/list"}`
		rootsBack = `{"jsonrpc":"2.0","id":0,"result":{"roots":[]}}`
	)
	open := []string{
		`> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18"}}`,
		cancelledCall[0],
	}
	progress := func(token, n string) string {
		return `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"` + token + `","progress":` + n + `}}`
	}
	session := func(lines ...string) []string { return append(append([]string{}, open...), lines...) }
	cancelling := session("< "+progress("t", "1"), "< "+roots, "> "+rootsBack, "< "+progress("t", "2"), cancelledCall[2])
	answering := session("< "+roots, "> "+rootsBack, "< "+progress("t", "1"), "< "+progress("t", "2"), `< {"jsonrpc":"2.0","id":3,"result":{"done":true}}`)
	other := session("< "+progress("t", "1"), "< "+roots, "> "+rootsBack, `< {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":2,"message":"x"}}`, cancelledCall[2])
	db, _ := storetest.Import(t, sessionsJSONL(cancelling, answering, other))
	src, err := NewSource(context.Background(), db, nil)
	if err != nil {
		t.Fatal(err)
	}
	// No settling: progress 1 must come because all three candidates
	// released it, not because one was picked.
	got := awaitLine(t, &Server{Source: src, Wait: -1, Settle: time.Hour}, `"progress":1`,
		`{"jsonrpc":"2.0","id":10,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`, liveCall, rootsBack)
	want := []string{`{"jsonrpc":"2.0","id":10,"result":{"protocolVersion":"2025-06-18"}}`, roots, progress("u", "1")}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("replayed lines (-want +got):\n%s", diff)
	}
}

// TestCursor_ReleasedBy: each frame names the recorded client frame whose
// live counterpart released it (Server.Trace prints it): the progress
// after the cancellation, the cancellation, never the call.
func TestCursor_ReleasedBy(t *testing.T) {
	c := newCursor([]*recording{stdioRecording(t, 1, cancelledCall...)}, Match{}, true)
	c.start()
	by := func(live string) []string {
		t.Helper()
		c.receive(jsonrpc.Parse([]byte(live)), nil)
		var got []string
		for _, o := range c.emit() {
			got = append(got, traceLine(o))
		}
		return got
	}
	if diff := cmp.Diff([]string{"mcpvcr replay: sent #2 notification notifications/progress, released by #1 request tools/call"}, by(liveCall)); diff != "" {
		t.Errorf("after the call (-want +got):\n%s", diff)
	}
	got := by(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":30}}`)
	if diff := cmp.Diff([]string{"mcpvcr replay: sent #4 notification notifications/progress, released by #3 notification notifications/cancelled"}, got); diff != "" {
		t.Errorf("after the cancellation (-want +got):\n%s", diff)
	}
}
