package chaos

import (
	"bufio"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/internal/mcptest"
	"github.com/mcpvcr/mcpvcr/internal/recordtest"
	"github.com/mcpvcr/mcpvcr/replayer"
	"github.com/mcpvcr/mcpvcr/store"
)

// recordPairStdio records, fresh, the Go SDK client running chaos script
// "pair" against the Go SDK test server with tool pair over stdio: two
// calls at once, whose responses the server writes one right after the
// other.
func recordPairStdio(t *testing.T) *store.Recording {
	t.Helper()
	rec := recordStdioScript(t, mcptest.ServerConfig{Paired: true}, "pair", []string{"connected", "tools/list: ok", "pair: ok", "echo: ok", "close: ok"})
	if len(stdioReorderSites(rec)) == 0 {
		t.Fatalf("the stdio recording of script pair has no two responses side by side:\n%s", layout(rec))
	}
	return rec
}

// recordStdioScript records, fresh, the Go SDK client running chaos
// script script, which must see want, against the Go SDK test server c
// over stdio.
func recordStdioScript(t *testing.T, c mcptest.ServerConfig, script string, want []string) *store.Recording {
	t.Helper()
	ctx := t.Context()
	var saw []string
	rec := recordtest.Stdio(ctx, t, func(r io.ReadCloser, w io.WriteCloser) {
		_ = c.NewServer().Run(ctx, &mcp.IOTransport{Reader: r, Writer: w})
	}, func(r io.ReadCloser, w io.WriteCloser) {
		saw = mcptest.ChaosRun(ctx, &mcp.IOTransport{Reader: r, Writer: w}, &mcp.Implementation{Name: mcptest.ClientName, Version: mcptest.ClientVersion}, script)
	})
	if !slices.Equal(saw, want) {
		t.Fatalf("recording: the client saw %q; want %q", saw, want)
	}
	return rec
}

// stdioReplay replays rec over stdio pipes, with chaos config c, to
// client, and returns the Hook and what it logged.
func stdioReplay(t *testing.T, rec *store.Recording, c Config, client func(r io.ReadCloser, w io.WriteCloser)) (*Hook, string) {
	t.Helper()
	var logs syncWriter
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	h := New(c, logger)
	srv := &replayer.Server{Recordings: []*store.Recording{rec}, Hook: h, Logger: logger}
	serveStdio(t, srv, client)
	srv.Close()
	return h, logs.String()
}

// pipeEnds is one side of a stdio connection.
type pipeEnds struct {
	io.Reader
	io.WriteCloser
}

// stdioRaw is a raw client over stdio that writes the recorded client's
// lines in order, reading before each the responses the recorded client
// had by then, and calls react when it reaches the first request of the
// fault's pair (with what is left to send); the client leaves once react
// returns.
func stdioRaw(t *testing.T, rec *store.Recording, r io.Reader, w io.Writer, react func(send func([]byte), read func(n int) [][]byte, rest [][]byte)) {
	var lines [][]byte
	var waits []int // responses the recorded client had before line i
	had := 0
	for _, f := range rec.Frames {
		switch {
		case f.Direction == store.ClientToServer && f.Kind != store.KindEmpty:
			lines, waits = append(lines, f.Data), append(waits, had)
		case f.Direction == store.ServerToClient && f.Kind.IsResponse():
			had++
		}
	}
	br := bufio.NewReader(r)
	got := 0
	read := func(n int) [][]byte {
		var out [][]byte
		for len(out) < n {
			l, err := br.ReadBytes('\n')
			if err != nil {
				t.Errorf("read: %v after %d lines", err, got)
				return out
			}
			if jsonrpc.Parse(l).Kind.IsResponse() {
				out = append(out, l)
				got++
			}
		}
		return out
	}
	send := func(b []byte) {
		if _, err := w.Write(append(slices.Clip(b), '\n')); err != nil {
			t.Errorf("write: %v", err)
		}
	}
	for i, l := range lines {
		read(waits[i] - got)
		if m := jsonrpc.Parse(l); m.Kind == jsonrpc.KindRequest && m.Method == "tools/call" && strings.Contains(string(l), `"pair"`) {
			react(send, read, lines[i:])
			return
		}
		send(l)
	}
}

// TestChaos_ReorderStdio: over stdio, reorder writes the responses to two
// concurrent requests in the other order (the held one right after the
// other). The Go SDK client, which matches a response to its request by
// id, takes both and carries on: pass, each seed drawing the same pair
// twice; a raw client that sends the held request again, or leaves after
// the pair where the recorded one went on, fails.
func TestChaos_ReorderStdio(t *testing.T) {
	rec := recordPairStdio(t)
	c := Config{Seed: 1, Kinds: []FaultKind{FaultReorder}, Rate: 1}
	plan := c.Plan(rec)
	if len(plan) != 1 || !plan[0].Responses {
		t.Fatalf("plan %v; want one reorder of two responses", plan)
	}
	for run := range 2 {
		var saw []string
		h, logs := stdioReplay(t, rec, c, func(r io.ReadCloser, w io.WriteCloser) {
			saw = mcptest.ChaosRun(t.Context(), &mcp.IOTransport{Reader: r, Writer: w}, &mcp.Implementation{Name: "another-client", Version: "9.9.9"}, "pair")
		})
		res := h.Results()
		if len(res) != 1 || res[0].Fault != plan[0] || res[0].Verdict != VerdictPass || !strings.Contains(res[0].Did, "took both responses in the other order and carried on") {
			t.Fatalf("run %d: results %v; want the planned reorder, passed\n%s", run+1, res, logs)
		}
		if want := []string{"connected", "tools/list: ok", "pair: ok", "echo: ok", "close: ok"}; !slices.Equal(saw, want) {
			t.Errorf("run %d: the Go SDK client saw %q; want %q", run+1, saw, want)
		}
		t.Logf("run %d: %s: %s", run+1, res[0].Fault, res[0].Did)
	}
	held, other := rec.Frames[slices.IndexFunc(rec.Frames, func(f store.Frame) bool { return f.Seq == plan[0].Seq })],
		rec.Frames[slices.IndexFunc(rec.Frames, func(f store.Frame) bool { return f.Seq == plan[0].OtherSeq })]
	for _, tt := range []struct {
		name  string
		react func(send func([]byte), read func(int) [][]byte, rest [][]byte)
		want  Verdict
	}{
		{"takes both and carries on", func(send func([]byte), read func(int) [][]byte, rest [][]byte) {
			send(rest[0])
			send(rest[1])
			got := read(2)
			if len(got) == 2 && (string(jsonrpc.Parse(got[0]).ID) != other.ID || string(jsonrpc.Parse(got[1]).ID) != held.ID) {
				t.Errorf("responses came with ids %s, %s; want %s (the other) before %s (the held)", jsonrpc.Parse(got[0]).ID, jsonrpc.Parse(got[1]).ID, other.ID, held.ID)
			}
			send(rest[2]) // echo
			read(1)
		}, VerdictPass},
		{"sends the held request again", func(send func([]byte), read func(int) [][]byte, rest [][]byte) {
			send(rest[0])
			send(rest[1])
			read(2)
			for _, l := range rest[:2] {
				if string(jsonrpc.Parse(l).ID) == held.ID {
					send(l)
				}
			}
		}, VerdictFail},
		{"leaves after the pair", func(send func([]byte), read func(int) [][]byte, rest [][]byte) {
			send(rest[0])
			send(rest[1])
			read(2)
		}, VerdictFail},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h, logs := stdioReplay(t, rec, c, func(r io.ReadCloser, w io.WriteCloser) { stdioRaw(t, rec, r, w, tt.react) })
			res := h.Results()
			if len(res) != 1 || res[0].Verdict != tt.want {
				t.Fatalf("results %v; want one reorder, %s\n%s", res, tt.want, logs)
			}
			t.Logf("%s: %s", res[0].Did, res[0].Verdict)
		})
	}
}
