package chaos

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
	"github.com/mcpvcr/mcpvcr/replayer"
	"github.com/mcpvcr/mcpvcr/store"
)

// TestChaos_StdioRestart: one replay serving stdio sessions one after
// another, as mcpvcrtest.Transport does for each Connect. The server
// exits at a request of the Go SDK client's session (its call fails at
// once); a client that restarts its server (a new session) meets one
// that works (the exit is taken once) and runs its script whole, and the
// verdict says it restarted: pass. A client that does not restart is not
// observed: the rule asks for no restart.
func TestChaos_StdioRestart(t *testing.T) {
	rec := recordStdioScript(t, mcptest.ServerConfig{}, "confusion", confusionLive)
	c := Config{Seed: 1, Kinds: []FaultKind{FaultExit}, Rate: 1}
	if plan := c.Plan(rec); len(plan) != 1 {
		t.Fatalf("plan %v; want one exit", plan)
	}
	info := &mcp.Implementation{Name: "another-client", Version: "9.9.9"}
	for _, restart := range []bool{true, false} {
		var logs syncWriter
		logger := slog.New(slog.NewTextHandler(&logs, nil))
		h := New(c, logger)
		srv := &replayer.Server{Recordings: []*store.Recording{rec}, Hook: h, Logger: logger}
		run := func() []string {
			var saw []string
			serveStdio(t, srv, func(r io.ReadCloser, w io.WriteCloser) {
				saw = mcptest.ChaosRun(t.Context(), &mcp.IOTransport{Reader: r, Writer: w}, info, "confusion")
			})
			return saw
		}
		first := run()
		if slices.Equal(first, confusionLive) {
			t.Fatalf("the first run saw %q: the server never exited", first)
		}
		want, says := VerdictNotObserved, "no new session began"
		if restart {
			if again := run(); !slices.Equal(again, confusionLive) {
				t.Errorf("the restarted server: the client saw %q; want %q (a restarted server works)", again, confusionLive)
			}
			want, says = VerdictPass, "restarted its server"
		}
		srv.Close()
		res := h.Results()
		if len(res) != 1 || res[0].Kind != FaultExit || res[0].Verdict != want || !strings.Contains(res[0].Did, says) {
			t.Fatalf("restart %t: results %v (%v); want one exit, %s saying %q\n%s", restart, res, did(res), want, says, logs.String())
		}
		t.Logf("restart %t: %s: %s", restart, res[0].Did, res[0].Verdict)
	}
}

// serveStdio serves one stdio session of srv, over pipes, to client.
func serveStdio(t *testing.T, srv *replayer.Server, client func(r io.ReadCloser, w io.WriteCloser)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), rawClientLimit)
	defer cancel()
	toClientR, toClientW := io.Pipe()
	fromClientR, fromClientW := io.Pipe()
	served := make(chan error, 1)
	go func() {
		_, err := srv.ServeStdio(ctx, pipeEnds{fromClientR, toClientW})
		toClientW.Close()
		served <- err
	}()
	client(toClientR, fromClientW)
	fromClientW.Close()
	go io.Copy(io.Discard, toClientR) // what replay writes after the client stopped reading
	if err := <-served; err != nil && ctx.Err() == nil && !errors.Is(err, io.ErrClosedPipe) {
		t.Errorf("ServeStdio: %v", err)
	}
	if ctx.Err() != nil {
		t.Fatalf("the replay was still going after %v", rawClientLimit)
	}
}
