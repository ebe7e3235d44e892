package replayer

import (
	"bytes"
	"io"
	"testing"

	"github.com/mcpvcr/mcpvcr/store"
)

// TestHook_StdioExit: a Hook's Stop at AtLine ends a stdio session as a
// server that exits: what was queued before reaches the client, then the
// end, and ServeStdio returns though the client never closed its side
// (the client here cannot be closed, as replay's stdin cannot).
func TestHook_StdioExit(t *testing.T) {
	rec := stdioRecording(t, 1,
		`> {"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`< {"jsonrpc":"2.0","id":1,"result":{}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"tools":[]}}`)
	hook := HookFunc(func(p *Point) Action {
		return Action{Stop: p.Where == AtLine && bytes.Contains(p.Body, []byte("tools/list"))}
	})
	srv := &Server{Recordings: []*store.Recording{rec.Recording}, Hook: hook}
	defer srv.Close()
	cr, cw := io.Pipe()
	sr, sw := io.Pipe()
	defer cw.Close() // ends the read replay leaves behind
	done := make(chan error, 1)
	go func() {
		_, err := srv.ServeStdio(t.Context(), struct {
			io.Reader
			io.Writer
		}{cr, sw})
		sw.Close() // the process exits
		done <- err
	}()
	go func() {
		_, _ = io.WriteString(cw, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n"+`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`+"\n")
	}()
	got, err := io.ReadAll(sr)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Errorf("ServeStdio: %v", err)
	}
	if want := `{"jsonrpc":"2.0","id":1,"result":{}}` + "\n"; string(got) != want {
		t.Errorf("the client read %q; want %q, then the end", got, want)
	}
}
