package chaos

import (
	"bufio"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/internal/mcptest"
	"github.com/mcpvcr/mcpvcr/store"
)

// pingDriver is a raw stdio client that writes the recorded client's
// lines in order, each once the responses the recorded client had by
// then came, and meets chaos's ping (which follows the response with id
// after) as ping says: "answer" answers it and goes on, "ignore" goes on
// without answering, "leave" stops there.
func pingDriver(t *testing.T, rec *store.Recording, r io.Reader, w io.Writer, after, ping string) {
	var lines [][]byte
	var waits []int
	var pingFirst []bool // the ping comes before line i
	had, answered := 0, false
	for _, f := range rec.Frames {
		switch {
		case f.Direction == store.ClientToServer && f.Kind != store.KindEmpty:
			lines, waits, pingFirst = append(lines, f.Data), append(waits, had), append(pingFirst, answered)
		case f.Direction == store.ServerToClient && f.Kind.IsResponse():
			had++
			answered = answered || f.ID == after
		}
	}
	in := make(chan []byte)
	go func() {
		defer close(in)
		br := bufio.NewReader(r)
		for {
			l, err := br.ReadBytes('\n')
			if err != nil {
				return
			}
			in <- l
		}
	}()
	write := func(b []byte) {
		if _, err := w.Write(append(slices.Clip(b), '\n')); err != nil {
			t.Errorf("write: %v", err)
		}
	}
	got, pinged := 0, false
	for i, l := range lines {
		for got < waits[i] || pingFirst[i] && !pinged {
			m, ok := <-in
			if !ok {
				t.Errorf("the replay ended after %d responses; want %d", got, waits[i])
				return
			}
			switch msg := jsonrpc.Parse(m); {
			case msg.Kind == jsonrpc.KindRequest && msg.Method == "ping" && string(msg.ID) == earlyPingID:
				pinged = true
				switch ping {
				case "answer":
					write([]byte(`{"jsonrpc":"2.0","id":` + earlyPingID + `,"result":{}}`))
				case "leave":
					return
				}
			case msg.Kind.IsResponse():
				got++
			}
		}
		write(l)
	}
}

// TestChaos_LateRequestStdio: over stdio, late-request writes a ping of
// chaos's own right after a tools/call's response. The Go SDK client
// answers it and carries on: pass, the same fault drawn each time; a raw
// client that answers it passes, one that goes on without answering, or
// leaves there, fails.
func TestChaos_LateRequestStdio(t *testing.T) {
	rec := recordStdioScript(t, mcptest.ServerConfig{}, "confusion", confusionLive)
	c := Config{Seed: 1, Kinds: []FaultKind{FaultLateRequest}, Rate: 1}
	plan := c.Plan(rec)
	if len(plan) != 1 {
		t.Fatalf("plan %v; want one late-request", plan)
	}
	for run := range 2 {
		var saw []string
		h, logs := stdioReplay(t, rec, c, func(r io.ReadCloser, w io.WriteCloser) {
			saw = mcptest.ChaosRun(t.Context(), &mcp.IOTransport{Reader: r, Writer: w}, &mcp.Implementation{Name: "another-client", Version: "9.9.9"}, "confusion")
		})
		res := h.Results()
		if len(res) != 1 || res[0].Fault != plan[0] || res[0].Verdict != VerdictPass {
			t.Fatalf("run %d: results %v (%v); want the planned late-request, passed\n%s", run+1, res, did(res), logs)
		}
		if !slices.Equal(saw, confusionLive) {
			t.Errorf("run %d: the Go SDK client saw %q; want %q", run+1, saw, confusionLive)
		}
		if !strings.Contains(logs, "chaos: injected late-request") {
			t.Errorf("run %d: the fault is not announced:\n%s", run+1, logs)
		}
		t.Logf("run %d: %s: %s", run+1, res[0].Fault, res[0].Did)
	}
	for _, tt := range []struct {
		ping string
		want Verdict
	}{{"answer", VerdictPass}, {"ignore", VerdictFail}, {"leave", VerdictFail}} {
		t.Run(tt.ping, func(t *testing.T) {
			after := frameBySeq(rec, plan[0].Seq).ID
			h, logs := stdioReplay(t, rec, c, func(r io.ReadCloser, w io.WriteCloser) { pingDriver(t, rec, r, w, after, tt.ping) })
			res := h.Results()
			if len(res) != 1 || res[0].Verdict != tt.want {
				t.Fatalf("results %v; want one late-request, %s\n%s", res, tt.want, logs)
			}
			t.Logf("%s: %s", res[0].Did, res[0].Verdict)
		})
	}
}

// did says what the client did and the verdict, for each result.
func did(res []Result) []string {
	var out []string
	for _, r := range res {
		out = append(out, r.Did+": "+r.Verdict.String())
	}
	return out
}
