package mcpvcrtest

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/internal/authwire"
	"github.com/mcpvcr/mcpvcr/replayer"
	"github.com/mcpvcr/mcpvcr/store"
)

// memHost is the host of the URL an in-memory HTTP replay is reached at. No
// socket serves it: requests go to the replayer through memRoundTripper.
const memHost = "127.0.0.1"

// Transport replays cassette in memory, for (*mcp.Client).Connect: no
// sockets, no child process, so it runs inside testing/synctest bubbles and
// with a fake Clock. A cassette of stdio sessions is served over in-memory
// pipes; one of HTTP sessions (when it has no stdio session, or Session
// names an HTTP one) over the SDK's Streamable HTTP or HTTP+SSE client
// transport, as recorded, with an http.RoundTripper that calls the replayer
// directly.
//
// Each Connect is a new client of the replay. At t.Cleanup Transport ends
// the replay, waits for every goroutine it started, and fails t with the
// replayer's diff for each client frame that matched nothing.
func Transport(t testing.TB, cassette string, opts ...Option) mcp.Transport {
	t.Helper()
	c := newConfig(opts)
	recs := loadAll(t, cassette, c, "Transport")
	ts := stdioTransports
	for _, r := range recs {
		ts = httpTransports
		if r.Session.Transport == store.Stdio {
			ts = stdioTransports
			break
		}
	}
	recs = pick(t, recs, cassette, "Transport", ts...)
	tr := &memTransport{srv: newServer(t, recs, c, "Transport")}
	tr.ctx, tr.cancel = context.WithCancel(context.Background())
	if ts[0] != store.Stdio {
		tr.rt = &memRoundTripper{h: authwire.NewHandler(tr.srv, recs, nil)} // the OAuth dance beside MCP
		tr.endpoint = "http://" + memHost + recordedPath(recs)
		tr.legacySSE = recs[0].Session.Transport == store.LegacySSE
	}
	t.Cleanup(func() {
		tr.srv.Close()
		tr.cancel()
		tr.wg.Wait()
		reps := tr.reports
		if tr.rt != nil {
			tr.rt.Close()
			reps = tr.srv.Reports()
		}
		for _, err := range tr.errs {
			t.Errorf("mcpvcrtest.Transport: %v", err)
		}
		check(t, "Transport", cassette, reps)
		checkChaos(t, "Transport", tr.srv)
	})
	return tr
}

// memTransport is the mcp.Transport Transport returns.
type memTransport struct {
	srv *replayer.Server
	// ctx ends the stdio replays at cleanup; it owns their goroutines.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	// HTTP replay: set when the recordings are HTTP sessions.
	rt        *memRoundTripper
	endpoint  string
	legacySSE bool

	// mu guards reports and errs.
	mu      sync.Mutex
	reports []*replayer.Report
	errs    []error
}

// Connect implements mcp.Transport: a new client of the replay.
func (tr *memTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	if tr.ctx.Err() != nil {
		return nil, fmt.Errorf("mcpvcrtest.Transport: connect after the test ended")
	}
	if tr.rt != nil {
		hc := &http.Client{Transport: tr.rt}
		if tr.legacySSE {
			return (&mcp.SSEClientTransport{Endpoint: tr.endpoint, HTTPClient: hc}).Connect(ctx)
		}
		return (&mcp.StreamableClientTransport{Endpoint: tr.endpoint, HTTPClient: hc}).Connect(ctx)
	}
	toServer, fromClient := io.Pipe()
	toClient, fromServer := io.Pipe()
	end := &pipeEnd{r: toServer, w: fromServer}
	tr.wg.Go(func() {
		rep, err := tr.srv.ServeStdio(tr.ctx, end)
		end.Close()
		tr.mu.Lock()
		defer tr.mu.Unlock()
		if rep != nil {
			tr.reports = append(tr.reports, rep)
		}
		if err != nil && tr.ctx.Err() == nil {
			tr.errs = append(tr.errs, fmt.Errorf("replay: %w", err))
		}
	})
	return (&mcp.IOTransport{Reader: toClient, Writer: fromClient}).Connect(ctx)
}

// pipeEnd is the replayer's side of an in-memory stdio pair.
type pipeEnd struct {
	r *io.PipeReader
	w *io.PipeWriter
}

func (p *pipeEnd) Read(b []byte) (int, error)  { return p.r.Read(b) }
func (p *pipeEnd) Write(b []byte) (int, error) { return p.w.Write(b) }

// Close ends both directions: the client reads EOF and its writes fail.
func (p *pipeEnd) Close() error {
	p.w.Close()
	p.r.Close()
	return nil
}
