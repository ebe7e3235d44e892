package replayer

import (
	"bufio"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/mcpvcr/mcpvcr/store"
)

// TestHook_Stdio: over stdio a Hook answers a client line itself at
// AtReceive (replay never reads it: no mismatch), makes replay read
// another line instead, and replaces or skips a recorded line at
// AtBefore.
func TestHook_Stdio(t *testing.T) {
	rec := stdioRecording(t, 1,
		`> {"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`< {"jsonrpc":"2.0","method":"notifications/message","params":{}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x"}}`,
		`< {"jsonrpc":"2.0","id":2,"result":{}}`,
	)
	hook := HookFunc(func(p *Point) Action {
		switch {
		case p.Where == AtReceive && strings.Contains(string(p.Body), `"hook"`):
			return Action{Send: []byte(`{"jsonrpc":"2.0","id":"h","result":{"hook":true}}`)}
		case p.Where == AtReceive && strings.Contains(string(p.Body), `"renamed"`):
			return Action{Body: []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x"}}`)}
		case p.Where == AtBefore && p.Frame.Method == "notifications/message":
			return Action{Skip: true}
		case p.Where == AtBefore && p.Frame.ID == "1":
			return Action{Replace: []byte(`{"jsonrpc":"2.0","id":1,"result":{"tools":[],"nextCursor":""}}`)}
		}
		return Action{}
	})
	srv := &Server{Recordings: []*store.Recording{rec.Recording}, Hook: hook}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan *Report, 1)
	go func() {
		rep, _ := srv.ServeStdio(context.Background(), pipeClient{inR, outW})
		outW.Close()
		done <- rep
	}()
	out := bufio.NewReader(outR)
	read := func() string {
		l, err := out.ReadString('\n')
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		return strings.TrimSpace(l)
	}
	for _, step := range []struct{ send, want string }{
		{`{"jsonrpc":"2.0","id":"h","method":"hook"}`, `{"jsonrpc":"2.0","id":"h","result":{"hook":true}}`},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, `{"jsonrpc":"2.0","id":1,"result":{"tools":[],"nextCursor":""}}`},
		{`{"jsonrpc":"2.0","id":2,"method":"renamed"}`, `{"jsonrpc":"2.0","id":2,"result":{}}`},
	} {
		io.WriteString(inW, step.send+"\n")
		if got := read(); got != step.want {
			t.Errorf("after %s the client got %s; want %s", step.send, got, step.want)
		}
	}
	inW.Close()
	rep := <-done
	if len(rep.Mismatches) != 0 || rep.Unrecorded != 0 {
		t.Errorf("replay saw %d mismatches, %d unrecorded frames; want none (the Hook answered its line)", len(rep.Mismatches), rep.Unrecorded)
	}
}
