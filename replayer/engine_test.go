package replayer

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/internal/replayreport"
	"github.com/mcpvcr/mcpvcr/store"
)

// stdioRecording builds a recording from lines prefixed "> " (client to
// server) or "< " (server to client).
func stdioRecording(tb testing.TB, id int64, lines ...string) *recording {
	tb.Helper()
	rec := &recording{Recording: &store.Recording{
		Session: store.Session{ID: id, Transport: store.Stdio},
		Streams: []store.Stream{{ID: 1, Kind: store.StdinStream}, {ID: 2, Kind: store.StdoutStream}},
	}}
	for i, l := range lines {
		dir, st := store.ClientToServer, int64(1)
		if strings.HasPrefix(l, "< ") {
			dir, st = store.ServerToClient, 2
		} else if !strings.HasPrefix(l, "> ") {
			tb.Fatalf("line %d: want a > or < prefix: %q", i, l)
		}
		f := store.Frame{SessionID: id, StreamID: st, Seq: int64(i + 1), Direction: dir, Raw: []byte(l[2:] + "\n")}
		f.Derive(store.StdinStream)
		rec.Frames = append(rec.Frames, f)
	}
	return rec
}

func datas(outs []outFrame) []string {
	var s []string
	for _, o := range outs {
		s = append(s, strings.TrimSuffix(string(o.Data), "\n"))
	}
	return s
}

// recv is receive then emit, as ServeStdio does: what the client sent,
// the leader's recorded frame it matched, and what goes back.
func (c *cursor) recv(m jsonrpc.Message) ([]outFrame, *store.Frame, *Mismatch) {
	rc := c.receive(m, nil)
	if rc.mm != nil {
		return nil, nil, rc.mm
	}
	if rc.unrecorded {
		return nil, nil, nil
	}
	// An answer to a server request that differs from the recorded one
	// matched it by id only: what it released comes with the report.
	return c.emit(), rc.matched[c.leader()], rc.differs
}

func recv(tb testing.TB, c *cursor, line string) []string {
	tb.Helper()
	outs, _, mm := c.recv(jsonrpc.Parse([]byte(line)))
	if mm != nil {
		tb.Fatalf("receive(%s): %v\n%s", line, mm, mm.Diff)
	}
	return datas(outs)
}

func TestCursor_RewritesIDsAndTokens(t *testing.T) {
	rec := stdioRecording(t, 1,
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"p","_meta":{"progressToken":"t1"}}}`,
		`< {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t1","progress":1}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"ok":true}}`,
	)
	c := newCursor([]*recording{rec}, Match{}, true)
	if got := c.start(); len(got) != 0 {
		t.Fatalf("start() = %v; want nothing", datas(got))
	}
	got := recv(t, c, `{"jsonrpc":"2.0","id":"abc","method":"tools/call","params":{"_meta":{"progressToken":99},"name":"p"}}`)
	want := []string{
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":99,"progress":1}}`,
		`{"jsonrpc":"2.0","id":"abc","result":{"ok":true}}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("released frames mismatch (-want +got):\n%s", diff)
	}
}

func TestCursor_ServerRequestWaitsForClientAnswer(t *testing.T) {
	rec := stdioRecording(t, 1,
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sample"}}`,
		`< {"jsonrpc":"2.0","id":0,"method":"sampling/createMessage","params":{}}`,
		`> {"jsonrpc":"2.0","id":0,"result":{"text":"hi"}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"content":"hi"}}`,
	)
	c := newCursor([]*recording{rec}, Match{}, true)
	got := recv(t, c, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"sample"}}`)
	if diff := cmp.Diff([]string{`{"jsonrpc":"2.0","id":0,"method":"sampling/createMessage","params":{}}`}, got); diff != "" {
		t.Fatalf("after the call (-want +got):\n%s", diff)
	}
	got = recv(t, c, `{"jsonrpc":"2.0","id":0,"result":{"text":"hi"}}`)
	if diff := cmp.Diff([]string{`{"jsonrpc":"2.0","id":5,"result":{"content":"hi"}}`}, got); diff != "" {
		t.Errorf("after the answer (-want +got):\n%s", diff)
	}
}

func TestCursor_SequentialClientAgainstConcurrentRecording(t *testing.T) {
	// Recorded: two requests in flight at once. Live: the client waits for
	// each answer before sending the next. Replay must not deadlock.
	rec := stdioRecording(t, 1,
		`> {"jsonrpc":"2.0","id":1,"method":"a"}`,
		`> {"jsonrpc":"2.0","id":2,"method":"b"}`,
		`< {"jsonrpc":"2.0","id":1,"result":"A"}`,
		`< {"jsonrpc":"2.0","id":2,"result":"B"}`,
	)
	c := newCursor([]*recording{rec}, Match{}, true)
	if diff := cmp.Diff([]string{`{"jsonrpc":"2.0","id":1,"result":"A"}`}, recv(t, c, `{"jsonrpc":"2.0","id":1,"method":"a"}`)); diff != "" {
		t.Errorf("a (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{`{"jsonrpc":"2.0","id":2,"result":"B"}`}, recv(t, c, `{"jsonrpc":"2.0","id":2,"method":"b"}`)); diff != "" {
		t.Errorf("b (-want +got):\n%s", diff)
	}
}

func TestCursor_Batch(t *testing.T) {
	rec := stdioRecording(t, 1,
		`> [{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"n"},{"jsonrpc":"2.0","id":2,"method":"b"}]`,
		`< [{"jsonrpc":"2.0","id":2,"result":"B"}, {"jsonrpc":"2.0","id":1,"result":"A"}]`,
	)
	c := newCursor([]*recording{rec}, Match{}, true)
	got := recv(t, c, `[{"jsonrpc":"2.0","id":"y","method":"b"},{"jsonrpc":"2.0","id":"x","method":"a"},{"jsonrpc":"2.0","method":"n"}]`)
	want := []string{`[{"jsonrpc":"2.0","id":"y","result":"B"}, {"jsonrpc":"2.0","id":"x","result":"A"}]`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("batch answer (-want +got):\n%s", diff)
	}
}

func TestCursor_CancellationMapsRequestID(t *testing.T) {
	rec := stdioRecording(t, 1,
		`> {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":3}}}`,
		`< {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":3,"progress":0}}`,
		`> {"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3,"reason":"ctx"}}`,
		`< {"jsonrpc":"2.0","id":3,"error":{"code":-32800,"message":"cancelled"}}`,
		`> {"jsonrpc":"2.0","id":4,"method":"tools/list"}`,
		`< {"jsonrpc":"2.0","id":4,"result":{"tools":[]}}`,
	)
	c := newCursor([]*recording{rec}, Match{}, true)
	recv(t, c, `{"jsonrpc":"2.0","id":30,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":30}}}`)
	got := recv(t, c, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":30,"reason":"ctx"}}`)
	if diff := cmp.Diff([]string{`{"jsonrpc":"2.0","id":30,"error":{"code":-32800,"message":"cancelled"}}`}, got); diff != "" {
		t.Errorf("after cancel (-want +got):\n%s", diff)
	}
}

func TestCursor_NarrowsCandidates(t *testing.T) {
	open := []string{
		`> {"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`,
		`< {"jsonrpc":"2.0","id":0,"result":{}}`,
	}
	a := stdioRecording(t, 1, append(open, `> {"jsonrpc":"2.0","id":1,"method":"x"}`, `< {"jsonrpc":"2.0","id":1,"result":"from 1"}`)...)
	b := stdioRecording(t, 2, append(open, `> {"jsonrpc":"2.0","id":1,"method":"y"}`, `< {"jsonrpc":"2.0","id":1,"result":"from 2"}`)...)
	c := newCursor([]*recording{a, b}, Match{}, true)
	recv(t, c, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`)
	got := recv(t, c, `{"jsonrpc":"2.0","id":1,"method":"y"}`)
	if diff := cmp.Diff([]string{`{"jsonrpc":"2.0","id":1,"result":"from 2"}`}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got, want := c.leader().rec.Session.ID, int64(2); got != want {
		t.Errorf("leader = session %d; want %d", got, want)
	}
}

func TestCursor_Mismatch(t *testing.T) {
	rec := stdioRecording(t, 1,
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{}}`,
	)
	c := newCursor([]*recording{rec}, Match{}, true)
	_, _, mm := c.recv(jsonrpc.Parse([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"bye"}}}`)))
	if mm == nil {
		t.Fatal("receive of a changed call matched; want a mismatch")
	}
	if mm.Closest == nil || mm.Closest.Seq != 1 {
		t.Fatalf("closest = %+v; want seq 1", mm.Closest)
	}
	if !strings.Contains(mm.Diff, `"bye"`) || !strings.Contains(mm.Diff, `"hi"`) {
		t.Errorf("diff does not show the changed argument:\n%s", mm.Diff)
	}
	ans := jsonrpc.Parse(replayreport.NoMatchAnswer(jsonrpc.Parse(mm.Live).ID, mm))
	if ans.Kind != jsonrpc.KindError || string(ans.ID) != "1" {
		t.Errorf("no-match answer = %s; want an error for id 1", ans.Raw)
	}
}

func TestCursor_UnrecordedAnswer(t *testing.T) {
	// The recorded client left before answering the server's request.
	rec := stdioRecording(t, 1,
		`> {"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`< {"jsonrpc":"2.0","id":0,"method":"roots/list"}`,
		`< {"jsonrpc":"2.0","id":1,"result":{}}`,
	)
	c := newCursor([]*recording{rec}, Match{}, true)
	recv(t, c, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	outs, matched, mm := c.recv(jsonrpc.Parse([]byte(`{"jsonrpc":"2.0","id":0,"result":{"roots":[]}}`)))
	if mm != nil || matched != nil || len(outs) != 0 {
		t.Errorf("receive(answer) = %v, %v, %v; want it taken silently", outs, matched, mm)
	}
	// An answer to a request the server never sent is a mismatch.
	if _, _, mm = c.recv(jsonrpc.Parse([]byte(`{"jsonrpc":"2.0","id":5,"result":{}}`))); mm == nil {
		t.Error("receive(answer to no request) matched; want a mismatch")
	}
}

func TestNoMatchReply(t *testing.T) {
	mm := &Mismatch{}
	got := jsonrpc.Parse(replayreport.NoMatchReply(jsonrpc.Parse([]byte(`{"jsonrpc":"2.0","id":"<a>","method":"x"}`)), mm))
	if got.Kind != jsonrpc.KindError || string(got.ID) != `"<a>"` {
		t.Errorf("reply to id \"<a>\" = %s; want an error with the id as sent", got.Raw)
	}
	batch := jsonrpc.Parse([]byte(`[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"n"},{"jsonrpc":"2.0","id":"b","method":"b"}]`))
	got = jsonrpc.Parse(replayreport.NoMatchReply(batch, mm))
	if got.Kind != jsonrpc.KindBatch || len(got.Members) != 2 || string(got.Members[0].ID) != "1" || string(got.Members[1].ID) != `"b"` {
		t.Errorf("reply to a batch = %s; want one error per request", got.Raw)
	}
	if r := replayreport.NoMatchReply(jsonrpc.Parse([]byte(`{"jsonrpc":"2.0","method":"n"}`)), mm); r != nil {
		t.Errorf("reply to a notification = %s; want none", r)
	}
}

// TestLink_BodyFollowsItsOwnRequest: an HTTP+SSE POST's "Accepted" body,
// recorded after the client's next request, is released by its own
// request: the client waits for it before it sends the next one.
func TestLink_BodyFollowsItsOwnRequest(t *testing.T) {
	rec := &recording{Recording: &store.Recording{
		Session: store.Session{ID: 1, Transport: store.LegacySSE},
		Streams: []store.Stream{{ID: 1, Kind: store.SSEGetStream}, {ID: 2, Kind: store.PostStream}, {ID: 3, Kind: store.PostStream}},
	}}
	add := func(stream int64, dir store.Direction, raw string) {
		f := store.Frame{SessionID: 1, StreamID: stream, Seq: int64(len(rec.Frames) + 1), Direction: dir, Raw: []byte(raw)}
		f.Derive(store.PostStream)
		rec.Frames = append(rec.Frames, f)
	}
	add(2, store.ClientToServer, `{"jsonrpc":"2.0","id":1,"method":"a"}`)
	add(1, store.ServerToClient, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	add(3, store.ClientToServer, `{"jsonrpc":"2.0","id":2,"method":"b"}`)
	add(2, store.ServerToClient, `Accepted`) // post 2's body, recorded late
	c := newCursor([]*recording{rec}, Match{}, false)
	c.start()
	rc := c.receive(jsonrpc.Parse([]byte(`{"jsonrpc":"2.0","id":1,"method":"a"}`)), nil)
	var got []string
	for _, o := range rc.outs {
		got = append(got, string(o.Data))
	}
	if diff := cmp.Diff([]string{`{"jsonrpc":"2.0","id":1,"result":{}}`, `Accepted`}, got); diff != "" {
		t.Errorf("released after request a (-want +got):\n%s", diff)
	}
}

// TestStalls_Expected: a request whose answer waits for the client's
// answer to a server request already sent is an ordinary wait, reported
// only when Server.Wait runs out; once the client answers, it is over.
func TestStalls_Expected(t *testing.T) {
	rec := stdioRecording(t, 1,
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sample"}}`,
		`< {"jsonrpc":"2.0","id":0,"method":"sampling/createMessage","params":{}}`,
		`> {"jsonrpc":"2.0","id":0,"result":{"content":{"type":"text","text":"hi"}}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{}}`,
	)
	c := newCursor([]*recording{rec}, Match{}, true)
	c.start()
	recv(t, c, `{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"sample"}}`)
	st := c.stalls()
	if len(st) != 1 || !st[0].Expected || len(st[0].Awaited) != 1 || st[0].Awaited[0].Seq != 3 {
		t.Fatalf("stalls() = %+v; want request a awaiting seq 3, expected", st)
	}
	recv(t, c, `{"jsonrpc":"2.0","id":0,"result":{"content":{"type":"text","text":"hi"}}}`)
	if st := c.stalls(); len(st) != 0 {
		t.Fatalf("stalls() after the answer = %+v; want none", st)
	}
}
