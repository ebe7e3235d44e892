package recorder_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/mcpvcr/mcpvcr/internal/sse"
	"github.com/mcpvcr/mcpvcr/recorder"
	"github.com/mcpvcr/mcpvcr/store"
)

// frameSink is a store.DB that the recorder hands a frame per event: it
// hides the DB's RunSink.
type frameSink struct{ recorder.Sink }

// runCounter is a store.DB that counts the runs of events it is handed.
type runCounter struct {
	*store.DB
	runs, events atomic.Int64
}

func (c *runCounter) Append(ctx context.Context, f *store.Frame) error {
	if f.Events > 0 {
		c.runs.Add(1)
		c.events.Add(int64(f.Events))
	}
	return c.DB.Append(ctx, f)
}

// runTestBlocks are SSE blocks of every shape a server may stream: the
// notifications a run may hold, and every kind of event one may not
// (ids, retry, comments, CRLF, several data lines, escapes, a secret,
// batches, text that is not JSON, nested "result" and "error" members,
// an answer, an event longer than the recorder's limit).
func runTestBlocks() []string {
	note := func(i int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"step %d of the work"}}`, i)
	}
	var bs []string
	for i := range 40 {
		bs = append(bs, "event: message\ndata: "+note(i)+"\n\n")
		switch i % 10 {
		case 1:
			bs = append(bs, "data: "+note(i)+"\n\n", "data:"+note(i)+"\n\n", "event: custom\ndata: "+note(i)+"\n\n")
		case 2:
			bs = append(bs, "id: "+fmt.Sprint(i)+"\ndata: "+note(i)+"\n\n", "retry: 250\ndata: "+note(i)+"\n\n", ": keep-alive\n\n")
		case 3:
			bs = append(bs, "event: message\r\ndata: "+note(i)+"\r\n\r\n", "data: {\"jsonrpc\":\"2.0\",\ndata: \"method\":\"m\"}\n\n")
		case 4:
			bs = append(bs, `data: {"jsonrpc":"2.0","method":"m","params":{"text":"a \"quoted\" word"}}`+"\n\n",
				`data: {"jsonrpc":"2.0","method":"m","params":{"access_token":"s3cr3t-value"}}`+"\n\n")
		case 5:
			bs = append(bs, `data: [{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","method":"b"}]`+"\n\n", "data: not json\n\n", "data:\n\n", "event: message\n\n")
		case 6:
			bs = append(bs, `data: {"jsonrpc":"2.0","method":"m","params":{"result" : 1}}`+"\n\n",
				`data: {"jsonrpc":"2.0","method":"m","params":{"error":{"code":1}}}`+"\n\n",
				`data: {"jsonrpc":"2.0","id":99,"method":"sampling/createMessage","params":{}}`+"\n\n")
		case 7:
			bs = append(bs, "data: "+note(i)[:len(note(i))-2]+`,"pad":"`+strings.Repeat("p", 5000)+`"}}`+"\n\n")
		}
	}
	return append(bs, `data: {"jsonrpc":"2.0","id":1,"result":{"content":[]}}`+"\n\n")
}

// TestHTTP_EventRunsReadAsFrames records the same SSE answers into a
// cassette that takes runs of events and into one handed a frame per
// event, through reads cut at random, and requires the two to read back
// the same: frames, streams and how they ended, and a clean check.
func TestHTTP_EventRunsReadAsFrames(t *testing.T) {
	blocks := runTestBlocks()
	stream := []byte(strings.Join(blocks, ""))
	progress := make(chan int, len(stream)) // how much of its answer the client has read
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		rng := rand.New(rand.NewPCG(uint64(len(r.Header.Get("X-Cut"))), 7))
		for rest := stream; len(rest) > 0; {
			n := min(len(rest), 1+rng.IntN(3000))
			if rng.IntN(4) == 0 {
				// Cut at the end of a block, as a server that flushes
				// each event does.
				if i := bytes.Index(rest[1:], []byte("\n\n")); i >= 0 {
					n = i + 3
				}
			}
			_, _ = w.Write(rest[:n])
			_ = rc.Flush()
			rest = rest[n:]
			// Write on once the client has the piece, so that each is
			// a read of the recorder's of its own.
			for sent := len(stream) - len(rest); <-progress < sent; {
			}
		}
	}))
	defer up.Close()
	u, _ := url.Parse(up.URL)
	red := &recorder.Redactor{} // one, so that both place the same placeholders
	record := func(sink recorder.Sink) {
		t.Helper()
		rec := &recorder.HTTP{Upstream: u, Sink: sink, MaxFrame: 4096, Redactor: red}
		px := httptest.NewServer(rec)
		for i := range 6 {
			req, _ := http.NewRequest(http.MethodPost, px.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"work"}}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("X-Cut", strings.Repeat("x", i))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var got []byte
			buf := make([]byte, 64<<10)
			for {
				n, err := resp.Body.Read(buf)
				got = append(got, buf[:n]...)
				if n > 0 {
					progress <- len(got)
				}
				if err != nil {
					break
				}
			}
			resp.Body.Close()
			if !bytes.Equal(got, stream) {
				t.Fatalf("POST %d: the client got %d bytes, not the %d the server sent", i, len(got), len(stream))
			}
		}
		px.Close()
		if err := rec.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	runs := &runCounter{DB: openDB(t)}
	record(runs)
	frames := openDB(t)
	record(frameSink{frames})
	if runs.runs.Load() == 0 {
		t.Fatal("the recorder handed the cassette no run of events")
	}
	t.Logf("%d runs of %d events", runs.runs.Load(), runs.events.Load())

	read := func(db *store.DB) *store.Recording {
		t.Helper()
		if err := db.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		ss, err := db.Sessions(ctx)
		if err != nil || len(ss) != 1 {
			t.Fatalf("Sessions() = %d sessions, %v; want 1", len(ss), err)
		}
		rec, err := db.Recording(ctx, ss[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		r, err := db.Check(ctx)
		if err != nil || !r.OK() || r.Frames != int64(len(rec.Frames)) {
			t.Fatalf("Check() = %+v, %v; want OK with %d frames", r, err, len(rec.Frames))
		}
		return rec
	}
	want, got := read(frames), read(runs.DB)
	var sp sse.Splitter
	if n := 6 * (len(sp.Feed(nil, stream)) + 1); len(want.Frames) != n {
		t.Fatalf("the cassette of frames holds %d frames; want %d", len(want.Frames), n)
	}
	ignore := cmp.Options{
		cmpopts.IgnoreFields(store.Frame{}, "Offset"),
		cmpopts.IgnoreFields(store.Stream{}, "Opened", "Closed", "RequestHeader", "ResponseHeader"),
		cmpopts.EquateEmpty(),
	}
	if diff := cmp.Diff(want.Frames, got.Frames, ignore); diff != "" {
		t.Errorf("frames read from the cassette of runs differ (-frames +runs):\n%s", diff)
	}
	if diff := cmp.Diff(want.Streams, got.Streams, ignore); diff != "" {
		t.Errorf("streams differ (-frames +runs):\n%s", diff)
	}
	for _, f := range got.Frames {
		if bytes.Contains(f.Raw, []byte("s3cr3t")) {
			t.Errorf("frame %d holds the secret: %q", f.Seq, f.Raw)
		}
	}
}
