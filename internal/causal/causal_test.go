package causal

import (
	"context"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpvcr/mcpvcr/store"
)

// load reads the first session of a committed cassette.
func load(tb testing.TB, name string) *store.Recording {
	tb.Helper()
	recs, err := store.LoadFile(context.Background(), filepath.Join("..", "..", "cassettes", name), 1)
	if err != nil {
		tb.Fatal(err)
	}
	return recs[0]
}

// order is a send described by seqs: its frame, what it awaited and
// what it overlapped.
type order struct {
	Seq      int64
	Overlaps []int64
}

// overlapping lists the sends of m that overlap earlier ones.
func overlapping(m *Model) []order {
	var out []order
	for _, s := range m.Sends {
		if len(s.Overlaps) == 0 {
			continue
		}
		o := order{Seq: s.Frame.Seq}
		for _, e := range s.Overlaps {
			o.Overlaps = append(o.Overlaps, m.Sends[e].Frame.Seq)
		}
		out = append(out, o)
	}
	return out
}

// TestNew_Overlaps names, per recorded cassette, the client frames the
// recorded client sent while earlier ones were in flight. Everything else
// was sent after the earlier frames had completed.
func TestNew_Overlaps(t *testing.T) {
	for _, tt := range []struct {
		cassette string
		want     []order
	}{
		// stdio: the slow call (27) runs while resources/list goes out and
		// is cancelled; sampling answers (45, 49) go out while the call
		// that asked is in flight.
		{"gosdk-stdio-2025-06-18.jsonl", []order{{29, []int64{27}}, {30, []int64{27, 29}}, {45, []int64{43}}, {49, []int64{47}}, {53, []int64{51}}}},
		// Streamable HTTP: the same, and a notification's POST is in
		// flight until its 202: resources/list (31) went out before the
		// cancellation's 202 had come back.
		{"gosdk-http-2025-03-26.jsonl", []order{{30, []int64{28}}, {31, []int64{30}}, {45, []int64{43}}, {47, []int64{45}}, {49, []int64{47}}}},
		{"gosdk-http-2025-11-25.jsonl", []order{{39, []int64{36}}, {40, []int64{36, 39}}, {61, []int64{58}}, {66, []int64{63}}, {71, []int64{68}}}},
		// One request at a time: nothing overlaps.
		{"everything-stdio.jsonl", nil},
		{"multi-gosdk-http-json.jsonl", nil},
	} {
		t.Run(tt.cassette, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, overlapping(New(load(t, tt.cassette)))); diff != "" {
				t.Errorf("overlapping sends (-want +got):\n%s", diff)
			}
		})
	}
}

// TestNew_AgreesWithLink checks, over every recorded cassette, that the
// model pairs answers, progress and cancellations as the walk of the old store.Link does.
func TestNew_AgreesWithLink(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "cassettes", "*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no cassettes: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			recs, err := store.LoadFile(context.Background(), file)
			if err != nil {
				t.Fatal(err)
			}
			for _, rec := range recs {
				l := walk(rec.Frames)
				m := New(rec)
				got := Links{Answer: map[int64]int64{}, Progress: map[int64]int64{}, Cancel: map[int64]int64{}}
				for _, x := range m.Msgs {
					switch {
					case x.Answer != None:
						if _, ok := got.Answer[x.Frame.Seq]; !ok {
							got.Answer[x.Frame.Seq] = m.Msgs[x.Answer].Frame.Seq
						}
					case x.Progress != None:
						got.Progress[x.Frame.Seq] = m.Msgs[x.Progress].Frame.Seq
					case x.Cancels != None:
						got.Cancel[x.Frame.Seq] = m.Msgs[x.Cancels].Frame.Seq
					}
				}
				want := Links{Answer: l.Answer, Progress: l.Progress, Cancel: l.Cancel}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("session %d: links (-walk +causal):\n%s", rec.Session.ID, diff)
				}
				if diff := cmp.Diff(l, Link(rec)); diff != "" {
					t.Errorf("session %d: Link (-walk +Link):\n%s", rec.Session.ID, diff)
				}
			}
		})
	}
}

// TestNew_Awaited checks what a Streamable HTTP client had completed
// before its next frame: notifications/initialized (202, stream 3) before
// the next request, and the server's list_changed notification owned by
// the request in flight on the stream it came on.
func TestNew_Awaited(t *testing.T) {
	m := New(load(t, "multi-gosdk-http-json.jsonl"))
	var initialized = None
	for i, s := range m.Sends {
		if m.Msgs[s.Msgs[0]].M.Method == "notifications/initialized" {
			initialized = i
		}
	}
	if initialized == None || initialized+1 >= len(m.Sends) {
		t.Fatalf("no send after notifications/initialized")
	}
	next := m.Sends[initialized+1]
	if got := next.Awaited; len(got) == 0 || got[len(got)-1] != initialized {
		t.Errorf("send after notifications/initialized awaited %v; want it to end with %d", got, initialized)
	}
}

// TestNew_Refused pairs an HTTP 400 refusal without an id with the one
// request its POST carried: a dual-era client's server/discover.
func TestNew_Refused(t *testing.T) {
	json := http.Header{"Content-Type": {"application/json"}}
	rec := &store.Recording{
		Session: store.Session{ID: 1, Transport: store.StreamableHTTP},
		Streams: []store.Stream{
			{ID: 1, Kind: store.PostStream, Method: "POST", Status: 400, ResponseHeader: json, Opened: 1, Closed: 3 * time.Millisecond},
			{ID: 2, Kind: store.PostStream, Method: "POST", Status: 200, ResponseHeader: json, Opened: 4 * time.Millisecond, Closed: 6 * time.Millisecond},
		},
		Frames: []store.Frame{
			{Seq: 1, StreamID: 1, Direction: store.ClientToServer, Offset: 2, Data: []byte(`{"jsonrpc":"2.0","id":1,"method":"server/discover"}`)},
			{Seq: 2, StreamID: 1, Direction: store.ServerToClient, Offset: 3 * time.Millisecond, Data: []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"bad"}}`)},
			{Seq: 3, StreamID: 2, Direction: store.ClientToServer, Offset: 5 * time.Millisecond, Data: []byte(`{"jsonrpc":"2.0","id":2,"method":"initialize"}`)},
			{Seq: 4, StreamID: 2, Direction: store.ServerToClient, Offset: 6 * time.Millisecond, Data: []byte(`{"jsonrpc":"2.0","id":2,"result":{}}`)},
		},
	}
	m := New(rec)
	got := []int{m.Msgs[0].Answer, m.Msgs[1].Answers, m.Msgs[2].Answer}
	if diff := cmp.Diff([]int{1, 0, 3}, got); diff != "" {
		t.Errorf("answers (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{0}, m.Sends[1].Awaited); diff != "" {
		t.Errorf("initialize awaited (-want +got):\n%s", diff)
	}
}

// TestNew_Invalid keeps a client frame that is not JSON-RPC as a send of
// its own, so that verify sends it as recorded.
func TestNew_Invalid(t *testing.T) {
	rec := &store.Recording{
		Session: store.Session{ID: 1, Transport: store.Stdio},
		Streams: []store.Stream{{ID: 1, Kind: store.StdinStream}, {ID: 2, Kind: store.StdoutStream}},
		Frames: []store.Frame{
			{Seq: 1, StreamID: 1, Direction: store.ClientToServer, Data: []byte("not json\n")},
			{Seq: 2, StreamID: 1, Direction: store.ClientToServer, Data: []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)},
			{Seq: 3, StreamID: 2, Direction: store.ServerToClient, Data: []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)},
		},
	}
	m := New(rec)
	if len(m.Sends) != 2 || len(m.Sends[0].Msgs) != 1 || m.Msgs[m.Sends[0].Msgs[0]].M.Kind.IsResponse() {
		t.Fatalf("sends = %+v; want the invalid frame and the ping", m.Sends)
	}
	if got := m.Msgs[1].Answer; got != 2 {
		t.Errorf("ping answered by %d; want 2", got)
	}
}

// TestNew_Listen: a 2026-07-28 subscriptions/listen request stays open
// for good, so it owns only the notifications that carry its
// subscription id; what else the server sends belongs to the request in
// flight, and to none once that is answered.
func TestNew_Listen(t *testing.T) {
	c, s := store.ClientToServer, store.ServerToClient
	sse := http.Header{"Content-Type": {"text/event-stream"}}
	rec := &store.Recording{
		Session: store.Session{ID: 1, Transport: store.StreamableHTTP},
		Streams: []store.Stream{
			{ID: 1, Kind: store.ListenStream, Method: "POST", Status: 200, ResponseHeader: sse},
			{ID: 2, Kind: store.PostStream, Method: "POST", Status: 200, ResponseHeader: sse},
		},
		Frames: []store.Frame{
			{Seq: 1, StreamID: 1, Direction: c, Data: []byte(`{"jsonrpc":"2.0","id":"L","method":"subscriptions/listen","params":{}}`)},
			{Seq: 2, StreamID: 2, Direction: c, Data: []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x"}}`)},
			{Seq: 3, StreamID: 1, Direction: s, Data: []byte(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"L"}}}`)},
			{Seq: 4, StreamID: 2, Direction: s, Data: []byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`)},
			{Seq: 5, StreamID: 2, Direction: s, Data: []byte(`{"jsonrpc":"2.0","id":2,"result":{}}`)},
			{Seq: 6, StreamID: 1, Direction: s, Data: []byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"y"}}`)},
		},
	}
	m := New(rec)
	got := []int{m.Msgs[2].Owner, m.Msgs[3].Owner, m.Msgs[5].Owner}
	if diff := cmp.Diff([]int{0, 1, None}, got); diff != "" {
		t.Errorf("owners of seq 3, 4, 6 (-want +got):\n%s", diff)
	}
}
