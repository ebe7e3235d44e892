package script

import (
	"slices"
	"testing"
	"time"

	"github.com/mcpvcr/mcpvcr/internal/match"
	"github.com/mcpvcr/mcpvcr/internal/storetest"
	"github.com/mcpvcr/mcpvcr/store"
)

// session is a recorded call with progress, a log line of the server's
// own and the answer, with the client's ids given.
func session(t *testing.T, init, call string) *store.Recording {
	return storetest.LineRecording(t, 1,
		`> {"jsonrpc":"2.0","id":`+init+`,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		`< {"jsonrpc":"2.0","id":`+init+`,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`,
		`> {"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`> {"jsonrpc":"2.0","id":`+call+`,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":`+call+`}}}`,
		`< {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":`+call+`,"progress":1}}`,
		`< {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"tick"}}`,
		`< {"jsonrpc":"2.0","id":`+call+`,"result":{"content":[]}}`,
		`! a log line on stderr`,
	)
}

func TestBuild(t *testing.T) {
	s := Build(session(t, "1", "2"), match.Match{})
	if len(s.Frames) != 7 || s.ServerFrames != 4 {
		t.Fatalf("%d frames, %d of the server's; want 7 and 4 (stderr is no protocol frame)", len(s.Frames), s.ServerFrames)
	}
	if got := s.AnswerOf[Ref{Frame: 0, ID: "1"}]; got != 1 {
		t.Errorf("initialize answered by frame %d, want 1", got)
	}
	if got := s.AnswerOf[Ref{Frame: 3, ID: "2"}]; got != 6 {
		t.Errorf("tools/call answered by frame %d, want 6", got)
	}
	// What each server frame waits for: the frame before it in its causal
	// group (the log line came while the call ran: the call owns it).
	for i, want := range map[int]int{1: 0, 4: 3, 5: 4, 6: 5} {
		if got := s.Frames[i].Prev; got != want {
			t.Errorf("frame %d waits for %d, want %d", i, got, want)
		}
	}
	for i, fr := range s.Frames {
		if fr.Prev >= i || fr.Extra >= i {
			t.Errorf("frame %d waits for a later frame (prev %d, extra %d)", i, fr.Prev, fr.Extra)
		}
	}
}

// The index hashes of a session do not depend on the ids its client
// chose, or on its clientInfo, under the tolerant default; they do under
// exact matching for what exact matching compares.
func TestHashes_IDsDoNotCount(t *testing.T) {
	a := Build(session(t, "1", "2"), match.Match{}).Hashes()
	b := Build(session(t, `"x"`, "7"), match.Match{}).Hashes()
	for i := range a {
		client := a[i]&(1<<63) != 0
		if client && a[i] != b[i] {
			t.Errorf("client frame %d hashes apart for other ids", i)
		}
	}
	if Mode(match.Match{}) == Mode(match.Match{Exact: true}) {
		t.Error("exact and tolerant matching share a hashing mode")
	}
}

func TestShiftTimes(t *testing.T) {
	rec := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	born := time.Date(2026, 12, 7, 5, 0, 0, 0, time.UTC)
	in := []byte(`{"jsonrpc":"2.0","id":3,"result":{"task":{"taskId":"t","status":"working","createdAt":"2026-01-01T10:00:00.000Z","lastUpdatedAt":"2026-01-01T10:00:02.500Z"}}}`)
	out, ok := ShiftTimes(in, rec, born)
	want := `{"jsonrpc":"2.0","id":3,"result":{"task":{"taskId":"t","status":"working","createdAt":"2026-12-07T05:00:00.000Z","lastUpdatedAt":"2026-12-07T05:00:02.500Z"}}}`
	if !ok || string(out) != want {
		t.Errorf("ShiftTimes = %s, %v\nwant %s", out, ok, want)
	}
	if out, ok := ShiftTimes([]byte(`{"jsonrpc":"2.0","id":3,"result":{}}`), rec, born); ok || string(out) != `{"jsonrpc":"2.0","id":3,"result":{}}` {
		t.Errorf("ShiftTimes changed a frame without task times: %s", out)
	}
}

func TestStreams(t *testing.T) {
	rec := &store.Recording{
		Streams: []store.Stream{{ID: 10, Status: 200}, {ID: 11, Status: 200, ResumesID: 10}, {ID: 12, Status: 200, ResumesID: 11}, {ID: 13, Status: 404}},
		Frames: []store.Frame{
			{StreamID: 10, Seq: 1, Direction: store.ServerToClient}, {StreamID: 11, Seq: 2, Direction: store.ServerToClient},
			{StreamID: 12, Seq: 3, Direction: store.ServerToClient}, {StreamID: 13, Seq: 4, Direction: store.ClientToServer},
		},
	}
	var seqs []int64
	for _, f := range Chain(rec, 11) {
		seqs = append(seqs, f.Seq)
	}
	if !slices.Equal(seqs, []int64{1, 2, 3}) {
		t.Errorf("Chain(11) = seqs %v, want 1 2 3: the stream it resumes and those resuming it", seqs)
	}
	if !RefusedFrame(rec, &rec.Frames[3]) || RefusedFrame(rec, &rec.Frames[0]) || !RefusedStream(rec, &rec.Frames[3]) {
		t.Error("a 404 stream's client frame is refused, a 200 stream's server frame is not")
	}
	if Ordinal(rec, 12) != 3 || Ordinal(rec, 99) != 0 || Stream(rec, 99) != nil {
		t.Error("Ordinal and Stream count from 1 and know only rec's streams")
	}
}
