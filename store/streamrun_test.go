package store

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// TestWriter_StreamOnceARun queues, while the writer is busy (as under
// load), two HTTP exchanges that open and end within one take of the
// writer: their streams' rows are written once each, after their frames.
// The second one's end is refused by SQLite (a response header longer
// than its length limit, lowered for the test): its row stays as it
// opened, and the writer goes on. Every frame is stored either way.
func TestWriter_StreamOnceARun(t *testing.T) {
	ctx := context.Background()
	d, logs := openRefusing(t)
	s := &Session{Transport: StreamableHTTP}
	if err := d.CreateSession(ctx, s); err != nil {
		t.Fatal(err)
	}
	release := holdWriter(t, d)
	var seq int64
	exchange := func(respHeader http.Header) *Stream {
		st := &Stream{SessionID: s.ID, Kind: PostStream, Method: "POST", URL: "/mcp",
			RequestHeader: http.Header{"Content-Type": {"application/json"}}}
		if err := d.OpenStream(ctx, st); err != nil {
			t.Fatal(err)
		}
		for i, raw := range []string{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, `{"jsonrpc":"2.0","id":1,"result":{}}`} {
			seq++
			f := &Frame{SessionID: s.ID, StreamID: st.ID, Seq: seq, Direction: Direction(i + 1), Raw: []byte(raw)}
			f.Derive(st.Kind)
			if err := d.Append(ctx, f); err != nil {
				t.Fatal(err)
			}
		}
		st.Status, st.ResponseHeader, st.End = 200, respHeader, EndComplete
		if err := d.CloseStream(ctx, st); err != nil {
			t.Fatal(err)
		}
		return st
	}
	ok := exchange(http.Header{"Content-Type": {"application/json"}})
	refused := exchange(http.Header{"X-Pad": {strings.Repeat("x", 5000)}})
	release()
	if err := d.Flush(ctx); err != nil {
		t.Fatalf("Flush() = %v; want nil: a refused stream end must not stop the writer", err)
	}
	sts, err := d.Streams(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	got := map[int64]Stream{}
	for _, st := range sts {
		got[st.ID] = st
	}
	if st, found := got[ok.ID]; !found || st.End != EndComplete || st.Status != 200 || st.ResponseHeader.Get("Content-Type") != "application/json" {
		t.Errorf("stream %d = %+v (found %v); want it ended complete with status 200 and its response header", ok.ID, st, found)
	}
	if st, found := got[refused.ID]; !found || st.End != EndOpen || st.Status != 0 || st.RequestHeader.Get("Content-Type") != "application/json" {
		t.Errorf("stream %d = %+v (found %v); want it as it opened: its end was refused", refused.ID, st, found)
	}
	fs, err := d.Frames(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != 4 {
		t.Errorf("%d frames stored; want 4", len(fs))
	}
	if !strings.Contains(logs.String(), "too big") {
		t.Errorf("log lacks the refused stream end:\n%s", logs.String())
	}
}
