package scrub_test

import (
	"bytes"
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpvcr/mcpvcr/scrub"
	"github.com/mcpvcr/mcpvcr/store"
)

func open(t *testing.T, name string) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestCassette scrubs an HTTP session: a credential header and URL
// parameter, an e-mail address and a token in a request, a home path in
// an SSE event (rebuilt around its new data), a password member. Protocol
// identifiers (the JSON-RPC id, the event id, Mcp-Session-Id) are kept,
// and the report counts each kind.
func TestCassette(t *testing.T) {
	ctx := context.Background()
	in := open(t, "in.db")
	s := &store.Session{Name: "bug of ann@corp.example", Transport: store.StreamableHTTP, StartedAt: time.Unix(1, 0), ExitCode: -1}
	if err := in.CreateSession(ctx, s); err != nil {
		t.Fatal(err)
	}
	st := &store.Stream{SessionID: s.ID, Kind: store.PostStream, Method: "POST", URL: "/mcp?api_key=k3y-value",
		RequestHeader:  http.Header{"Authorization": {"Bearer s3cret"}, "Mcp-Session-Id": {"Q7vTz2LmP9xRw4KdN8cB1yHsAb"}},
		ResponseHeader: http.Header{"Content-Type": {"text/event-stream"}}}
	if err := in.OpenStream(ctx, st); err != nil {
		t.Fatal(err)
	}
	req := `{"jsonrpc":"2.0","id":"Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh","method":"tools/call","params":{"name":"send","arguments":{"to":"ann@corp.example","key":"sk-Q7vTz2LmP9xRw4KdN8cB1yHs","password":"hunter2"}}}`
	ev := "id: 1\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh\",\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"saved to /home/ann/out.txt\"}]}}\n\n"
	frames := []*store.Frame{
		{SessionID: s.ID, StreamID: st.ID, Seq: 1, Direction: store.ClientToServer, Raw: []byte(req)},
		{SessionID: s.ID, StreamID: st.ID, Seq: 2, Direction: store.ServerToClient, Raw: []byte(ev), SSE: true, HasEventID: true, EventID: "1",
			Data: []byte(strings.TrimSuffix(strings.TrimPrefix(ev, "id: 1\ndata: "), "\n\n"))},
	}
	for _, f := range frames {
		f.Derive(st.Kind)
		if err := in.Append(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	st.End = store.EndComplete
	if err := in.CloseStream(ctx, st); err != nil {
		t.Fatal(err)
	}
	if err := in.Flush(ctx); err != nil {
		t.Fatal(err)
	}

	out := open(t, "out.db")
	rep, err := scrub.Cassette(ctx, in, out, scrub.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{scrub.KindMember: 1, scrub.KindHeader: 1, scrub.KindURL: 1, scrub.KindEmail: 2, scrub.KindHome: 1, scrub.KindToken: 1}
	for k, n := range want {
		if rep.Counts[k] != n {
			t.Errorf("Counts[%s] = %d; want %d (all: %v)", k, rep.Counts[k], n, rep.Counts)
		}
	}
	var buf bytes.Buffer
	if err := out.Export(ctx, &buf); err != nil {
		t.Fatal(err)
	}
	got := buf.String()
	for _, gone := range []string{"ann@corp.example", "k3y-value", "s3cret", "sk-Q7vTz2LmP9xRw4KdN8cB1yHs", "hunter2", "/home/ann/"} {
		if strings.Contains(got, gone) {
			t.Errorf("the scrubbed export holds %q:\n%s", gone, got)
		}
	}
	for _, kept := range []string{`"id\":\"Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh\"`, `"Mcp-Session-Id":["Q7vTz2LmP9xRw4KdN8cB1yHsAb"]`, `"event_id":"1"`, `id: 1\ndata: `, "/home/user-", `"labels":{"scrubbed":"v1"}`, `"url":"/mcp?api_key=REDACTED-`} {
		if !strings.Contains(got, kept) {
			t.Errorf("the scrubbed export lacks %s:\n%s", kept, got)
		}
	}
}
