package verify

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpvcr/mcpvcr/clock"
	"github.com/mcpvcr/mcpvcr/diff"
	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/internal/storetest"
)

// Lines of a stdio recording, as storetest.LineRecording reads them.
const (
	initReq  = `> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`
	initResp = `< {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`
	inited   = `> {"jsonrpc":"2.0","method":"notifications/initialized"}`
	listReq  = `> {"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	callReq  = `> {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"info","arguments":{}}}`
)

// errCrash, returned by a fakeServer handler, makes the server go away.
var errCrash = errors.New("crash")

// fakeServer is a stdio server run by a handler: for each client line it
// returns the lines to write back. It is the Verifier's io.ReadWriteCloser.
type fakeServer struct {
	inR, outR *io.PipeReader
	inW, outW *io.PipeWriter
	done      chan struct{}
	mu        sync.Mutex // guards got
	got       []string   // the client lines received
}

func startFake(tb testing.TB, handle func(m jsonrpc.Message) ([]string, error)) *fakeServer {
	tb.Helper()
	s := &fakeServer{done: make(chan struct{})}
	s.inR, s.inW = io.Pipe()
	s.outR, s.outW = io.Pipe()
	go func() {
		defer close(s.done)
		defer s.outW.Close()
		r := bufio.NewReader(s.inR)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			s.mu.Lock()
			s.got = append(s.got, strings.TrimSuffix(line, "\n"))
			s.mu.Unlock()
			out, herr := handle(jsonrpc.Parse([]byte(line)))
			for _, l := range out {
				if _, err := io.WriteString(s.outW, l+"\n"); err != nil {
					return
				}
			}
			if herr != nil {
				s.inR.CloseWithError(errors.New("server gone"))
				return
			}
		}
	}()
	tb.Cleanup(func() {
		s.inR.CloseWithError(errors.New("test over"))
		<-s.done
	})
	return s
}

func (s *fakeServer) Read(p []byte) (int, error)  { return s.outR.Read(p) }
func (s *fakeServer) Write(p []byte) (int, error) { return s.inW.Write(p) }
func (s *fakeServer) Close() error                { return s.inW.Close() }

func (s *fakeServer) lines() []string {
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.got...)
}

func verifyCtx(tb testing.TB) context.Context {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	tb.Cleanup(cancel)
	return ctx
}

// result builds a response line.
func result(id, body string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, id, body)
}

const liveInit = `{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s","version":"1"}}`

// TestVerifier_RunStdio sends a recording with a paginated list and a
// tool that samples: the cursor the live server minted is echoed, and the
// live server's sampling request is answered with the recorded answer
// under the live id.
func TestVerifier_RunStdio(t *testing.T) {
	page2 := `> {"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"cursor":"rec-cursor"}}`
	call := `> {"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"sample"}}`
	sampled := `> {"jsonrpc":"2.0","id":1,"result":{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"}}`
	rec := storetest.LineRecording(t, 1, initReq, initResp, inited,
		listReq, `< {"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"a"}],"nextCursor":"rec-cursor"}}`,
		page2, `< {"jsonrpc":"2.0","id":3,"result":{"tools":[{"name":"sample"}]}}`,
		call, `< {"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{"messages":[],"maxTokens":5}}`,
		sampled, `< {"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"hi"}]}}`)
	srv := startFake(t, func(m jsonrpc.Message) ([]string, error) {
		switch {
		case m.Method == "initialize":
			return []string{result(string(m.ID), liveInit)}, nil
		case m.Method == "tools/list" && !strings.Contains(string(m.Params), "cursor"):
			return []string{result(string(m.ID), `{"tools":[{"name":"a"}],"nextCursor":"live-cursor"}`)}, nil
		case m.Method == "tools/list":
			return []string{result(string(m.ID), `{"tools":[{"name":"sample"}]}`)}, nil
		case m.Method == "tools/call":
			return []string{`{"jsonrpc":"2.0","id":42,"method":"sampling/createMessage","params":{"messages":[],"maxTokens":5}}`}, nil
		case m.Kind == jsonrpc.KindResult && string(m.ID) == "42":
			return []string{result("4", `{"content":[{"type":"text","text":"hi"}]}`)}, nil
		}
		return nil, nil
	})
	vr, err := (&Verifier{Recording: rec}).RunStdio(verifyCtx(t), srv)
	if err != nil {
		t.Fatalf("RunStdio = %v", err)
	}
	want := []string{initReq[2:], inited[2:], listReq[2:], strings.Replace(page2[2:], "rec-cursor", "live-cursor", 1), call[2:],
		strings.Replace(sampled[2:], `"id":1`, `"id":42`, 1)}
	if diff := cmp.Diff(want, srv.lines()); diff != "" {
		t.Errorf("lines the server received (-want +got):\n%s", diff)
	}
	if len(vr.NoAnswer) != 0 || vr.ServerGone != nil || vr.Sent != 5 {
		t.Errorf("Run = %+v; want 5 frames sent, all answered", vr)
	}
}

// TestVerifier_WaitsForProgress holds a frame back until the progress
// notification the recorded client saw before sending it has arrived.
func TestVerifier_WaitsForProgress(t *testing.T) {
	slow := `> {"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":"p"}}}`
	cancel := `> {"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}`
	rec := storetest.LineRecording(t, 1, initReq, initResp, inited, slow,
		`< {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1}}`,
		cancel, `< {"jsonrpc":"2.0","id":5,"result":{"content":[]}}`)
	release := make(chan struct{})
	srv := startFake(t, func(m jsonrpc.Message) ([]string, error) {
		switch m.Method {
		case "initialize":
			return []string{result(string(m.ID), liveInit)}, nil
		case "tools/call":
			close(release) // the cancel must not have come yet
			return []string{`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1}}`}, nil
		case "notifications/cancelled":
			select {
			case <-release:
			default:
				t.Error("the cancellation came before the call")
			}
			return []string{result("5", `{"content":[]}`)}, nil
		}
		return nil, nil
	})
	if _, err := (&Verifier{Recording: rec}).RunStdio(verifyCtx(t), srv); err != nil {
		t.Fatalf("RunStdio = %v", err)
	}
	if got := len(srv.lines()); got != 4 {
		t.Errorf("server received %d lines; want 4", got)
	}
}

func TestVerifier_RunStdio_Failures(t *testing.T) {
	call := `> {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"info"}}`
	rec := storetest.LineRecording(t, 1, initReq, initResp, inited, listReq, `< {"jsonrpc":"2.0","id":2,"result":{"tools":[]}}`,
		call, `< {"jsonrpc":"2.0","id":3,"result":{}}`)
	t.Run("OtherRevision", func(t *testing.T) {
		srv := startFake(t, func(m jsonrpc.Message) ([]string, error) {
			return []string{result(string(m.ID), strings.Replace(liveInit, "2025-06-18", "2025-03-26", 1))}, nil
		})
		_, err := (&Verifier{Recording: rec}).RunStdio(verifyCtx(t), srv)
		var re *RevisionError
		if !errors.As(err, &re) || re.Recorded != "2025-06-18" || re.Live != "2025-03-26" {
			t.Errorf("RunStdio = %v; want a RevisionError 2025-06-18 vs 2025-03-26", err)
		}
		if got := len(srv.lines()); got != 1 {
			t.Errorf("server received %d lines; want only initialize", got)
		}
	})
	t.Run("ExitsAtOnce", func(t *testing.T) {
		srv := startFake(t, func(jsonrpc.Message) ([]string, error) { return nil, errCrash })
		if _, err := (&Verifier{Recording: rec}).RunStdio(verifyCtx(t), srv); !errors.Is(err, ErrNoAnswer) {
			t.Errorf("RunStdio = %v; want ErrNoAnswer", err)
		}
	})
	t.Run("Crash", func(t *testing.T) {
		srv := startFake(t, func(m jsonrpc.Message) ([]string, error) {
			switch m.Method {
			case "initialize":
				return []string{result(string(m.ID), liveInit)}, nil
			case "tools/list":
				return nil, errCrash
			}
			return nil, nil
		})
		vr, err := (&Verifier{Recording: rec}).RunStdio(verifyCtx(t), srv)
		if err != nil {
			t.Fatalf("RunStdio = %v", err)
		}
		want := map[int64]string{4: "no answer: the server went away first", 6: "not sent: the server had gone away"}
		if diff := cmp.Diff(want, vr.NoAnswer); diff != "" || vr.ServerGone == nil {
			t.Errorf("NoAnswer (-want +got):\n%s\nServerGone = %v", diff, vr.ServerGone)
		}
	})
	t.Run("Timeout", func(t *testing.T) {
		clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		srv := startFake(t, func(m jsonrpc.Message) ([]string, error) {
			switch m.Method {
			case "initialize":
				return []string{result(string(m.ID), liveInit)}, nil
			case "tools/list":
				return []string{result(string(m.ID), `{"tools":[]}`)}, nil
			case "tools/call":
				// The call was sent: its deadline runs from now. Let it pass.
				clk.Advance(time.Minute)
			}
			return nil, nil
		})
		vr, err := (&Verifier{Recording: rec, Clock: clk, Timeout: 10 * time.Second}).RunStdio(verifyCtx(t), srv)
		if err != nil {
			t.Fatalf("RunStdio = %v", err)
		}
		if diff := cmp.Diff(map[int64]string{6: "no answer within 10s"}, vr.NoAnswer); diff != "" {
			t.Errorf("NoAnswer (-want +got):\n%s", diff)
		}
	})
	t.Run("NoClientFrames", func(t *testing.T) {
		empty := storetest.LineRecording(t, 1, "! starting")
		if err := (&Verifier{Recording: empty}).Check(); !errors.Is(err, ErrNoClientFrames) {
			t.Errorf("Check = %v; want ErrNoClientFrames", err)
		}
	})
}

func TestVerifyRun_Annotate(t *testing.T) {
	old := storetest.LineRecording(t, 1, initReq, initResp, listReq, `< {"jsonrpc":"2.0","id":2,"result":{}}`, callReq, `< {"jsonrpc":"2.0","id":3,"result":{}}`)
	new := storetest.LineRecording(t, 2, initReq, initResp, listReq)
	r := diff.Compare(old, new, diff.Noise{})
	vr := &Run{NoAnswer: map[int64]string{3: "no answer: the server went away first", 5: "not sent: the server had gone away"},
		ServerGone: errors.New("it crashed")}
	vr.Annotate(r)
	var got []string
	for _, rd := range r.Requests {
		got = append(got, fmt.Sprintf("%s %s %s", rd.Label(), rd.Status, rd.Reason))
	}
	want := []string{"initialize (seq 1) same ", "tools/list (seq 3) unanswered no answer: the server went away first",
		"tools/call info (seq 5) unanswered not sent: the server had gone away"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("annotated requests (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"the server went away during the run: it crashed"}, r.Notes); diff != "" {
		t.Errorf("notes (-want +got):\n%s", diff)
	}
}

// TestVerifier_PreparedRunsShareThePlan runs a prepared Verifier (as the
// workflow does: one plan for every run of a session) three times, once
// then twice at once: each run answers the live server's sampling request
// with the recorded answer, since which recorded requests a run has
// answered is the run's, not the shared plan's.
func TestVerifier_PreparedRunsShareThePlan(t *testing.T) {
	call := `> {"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"sample"}}`
	sampled := `> {"jsonrpc":"2.0","id":1,"result":{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"}}`
	rec := storetest.LineRecording(t, 1, initReq, initResp, inited,
		call, `< {"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{"messages":[],"maxTokens":5}}`,
		sampled, `< {"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"hi"}]}}`)
	v := &Verifier{Recording: rec}
	if err := v.prepare(); err != nil {
		t.Fatalf("prepare = %v", err)
	}
	run := func() error {
		srv := startFake(t, func(m jsonrpc.Message) ([]string, error) {
			switch {
			case m.Method == "initialize":
				return []string{result(string(m.ID), liveInit)}, nil
			case m.Method == "tools/call":
				return []string{`{"jsonrpc":"2.0","id":42,"method":"sampling/createMessage","params":{"messages":[],"maxTokens":5}}`}, nil
			case m.Kind.IsResponse() && string(m.ID) == "42":
				return []string{result("4", `{"content":[{"type":"text","text":"hi"}]}`)}, nil
			}
			return nil, nil
		})
		vr, err := v.RunStdio(verifyCtx(t), srv)
		if err != nil {
			return fmt.Errorf("RunStdio = %w", err)
		}
		got := srv.lines()
		if want := strings.Replace(sampled[2:], `"id":1`, `"id":42`, 1); len(got) == 0 || got[len(got)-1] != want {
			return fmt.Errorf("the server's last line = %q; want the recorded answer %s", got, want)
		}
		if len(vr.Unrecorded) != 0 || len(vr.NoAnswer) != 0 {
			return fmt.Errorf("Run = %+v; want the sampling request answered as recorded and every request answered", vr)
		}
		return nil
	}
	if err := run(); err != nil {
		t.Fatalf("first run: %v", err)
	}
	errs := make(chan error, 2)
	for range 2 {
		go func() { errs <- run() }()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Errorf("concurrent run: %v", err)
		}
	}
	if v.plan == nil || v.plan.rec != rec {
		t.Error("the Verifier's plan is not the one prepare built")
	}
}
