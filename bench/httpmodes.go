package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"time"

	"github.com/mcpvcr/mcpvcr/store"
)

// server is an http.Server on a loopback port. The caller must call
// close.
type server struct {
	srv  *http.Server
	url  string
	done chan struct{}
}

// serve starts serving h on 127.0.0.1 at a free port.
func serve(h http.Handler) (*server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &server{srv: &http.Server{Handler: h}, url: "http://" + ln.Addr().String() + "/mcp", done: make(chan struct{})}
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(ln)
	}()
	return s, nil
}

// close stops the server and waits for its handlers.
func (s *server) close(ctx context.Context) {
	if err := s.srv.Shutdown(ctx); err != nil {
		s.srv.Close()
	}
	<-s.done
}

// passthrough returns the plain standard-library reverse proxy mcpvcr's
// recorder is measured against: full duplex, pooled upstream connections,
// a flush after every write (as for text/event-stream).
func passthrough(upstream *url.URL) http.Handler {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 64
	t.DisableCompression = true
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(upstream)
			pr.Out.URL.Path = upstream.Path
			pr.Out.Host = ""
		},
		Transport:     t,
		FlushInterval: -1,
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = http.NewResponseController(w).EnableFullDuplex()
		rp.ServeHTTP(w, r)
	})
}

// httpBench runs one HTTP load (a tool at a concurrency) in every mode,
// each server and proxy a child process (see child). It is not safe for
// concurrent use.
type httpBench struct {
	self     string
	cassette string // the cassette record runs write and replay runs serve
	peer     *child // the minimal server
	pass     *child // the passthrough proxy in front of peer, with -long-pass or -long-lived
	// floor and rec are the floor and the recorder with -long-lived; rec
	// records into cassette+"-long", longRequests requests so far.
	floor, rec   *child
	longRequests int
	longTool     string
	// clients keeps one connection pool per mode across rounds.
	clients [numModes]*http.Client
	// recorded is set once a record run has filled the cassette.
	recorded bool
}

// longPass runs the HTTP passthrough as one process for a load's warm-up
// and all its rounds (-long-pass), as the bench did before its sixteenth
// round. By default each run starts a new one, as it starts every other
// proxy: record must (a run is a recording), and so do the floor, replay
// and mcpsnoop. A passthrough that has served the warm-up run and kept
// its connections gave the first SSE event at c=1 150 to 300 µs sooner
// than a new one (docs/performance.md, sixteenth round), so comparing
// that with a new recorder measured the age of the process, not the
// recording.
var longPass bool

// longLived runs the passthrough, the floor and record each as one
// process for a load's warm-up and all its rounds (-long-lived): three
// proxies that have warmed up, rather than three new ones. Replay and
// mcpsnoop are still a new process per run. Each run of the recorder ends
// with a commit of what it recorded (child.flush), so that the run is
// given that work, and the recorder's cassette is checked to hold every
// frame of all its runs when it closes. Replay serves a recording that a
// recorder of its own made in the warm-up.
var longLived bool

// newHTTPBench starts the peer (and, with -long-pass or -long-lived, the
// passthrough proxy); record runs write cassette. The caller must call
// close.
func newHTTPBench(ctx context.Context, self, cassette string) (*httpBench, error) {
	peer, err := startChild(ctx, self, "http-peer")
	if err != nil {
		return nil, err
	}
	b := &httpBench{self: self, cassette: cassette, peer: peer}
	if longPass || longLived {
		if b.pass, err = b.startPass(ctx); err != nil {
			peer.close()
			return nil, err
		}
	}
	for i := range b.clients {
		b.clients[i] = newClient()
	}
	return b, nil
}

func (b *httpBench) close() error {
	for _, c := range b.clients {
		c.CloseIdleConnections()
	}
	var errs []error
	for _, p := range []*child{b.floor, b.pass} {
		if p != nil {
			_, err := p.close()
			errs = append(errs, err)
		}
	}
	if b.rec != nil {
		_, err := b.rec.close()
		if err == nil {
			err = b.verifyLong(context.Background())
		}
		errs = append(errs, err)
	}
	_, err := b.peer.close()
	return errors.Join(append(errs, err)...)
}

// run runs the load once in mode m. The run's cpu is the CPU time of the
// proxy (or replayer) process during it; none for direct.
func (b *httpBench) run(ctx context.Context, m mode, tool string, n, conc int) (run, error) {
	c := b.clients[m]
	switch m {
	case modeDirect:
		return runHTTP(ctx, c, b.peer.url, tool, n, conc)
	case modePassthrough:
		if b.pass != nil {
			return runThrough(ctx, c, b.pass, false, tool, n, conc)
		}
		p, err := b.startPass(ctx)
		if err != nil {
			return run{}, err
		}
		return runThrough(ctx, c, p, true, tool, n, conc)
	case modeRecord:
		if longLived {
			return b.recordLong(ctx, c, tool, n, conc)
		}
		return b.record(ctx, c, tool, n, conc)
	case modeReplay:
		return b.replay(ctx, c, tool, n, conc)
	case modeSnoop:
		return snoop.runHTTP(ctx, c, b.peer.url, tool, n, conc)
	case modeFloor:
		if longLived {
			if b.floor == nil {
				f, err := b.startFloor(ctx)
				if err != nil {
					return run{}, err
				}
				b.floor = f
			}
			return runThrough(ctx, c, b.floor, false, tool, n, conc)
		}
		rec, err := b.startFloor(ctx)
		if err != nil {
			return run{}, err
		}
		return runThrough(ctx, c, rec, true, tool, n, conc)
	}
	return run{}, fmt.Errorf("unknown mode %d", m)
}

// record runs the load through a new recorder process, then checks that
// the cassette holds every frame: each request and each answer's events.
func (b *httpBench) record(ctx context.Context, c *http.Client, tool string, n, conc int) (run, error) {
	rec, err := startChild(ctx, b.self, "http-record", "-upstream", b.peer.url, "-cassette", b.cassette)
	if err != nil {
		return run{}, err
	}
	// The recorder's CPU time includes committing what it recorded.
	r, err := runThrough(ctx, c, rec, true, tool, n, conc)
	if err != nil {
		return run{}, err
	}
	db, err := store.Open(ctx, b.cassette)
	if err != nil {
		return run{}, err
	}
	defer db.Close()
	if _, err := verifyRecorded(ctx, db, tool, n); err != nil {
		return run{}, err
	}
	b.recorded = true
	return r, nil
}

// startPass starts a passthrough proxy in front of the peer.
func (b *httpBench) startPass(ctx context.Context) (*child, error) {
	return startChild(ctx, b.self, "http-pass", "-upstream", b.peer.url)
}

// startFloor starts a recorder in front of the peer that records into
// nothing (-floor).
func (b *httpBench) startFloor(ctx context.Context) (*child, error) {
	return startChild(ctx, b.self, "http-record", "-upstream", b.peer.url, "-discard")
}

// recordLong runs the load through the recorder that lives on
// (-long-lived). Its first run, the warm-up, also has a recorder of its
// own record the cassette that replay serves.
func (b *httpBench) recordLong(ctx context.Context, c *http.Client, tool string, n, conc int) (run, error) {
	if b.rec == nil {
		if _, err := b.record(ctx, c, tool, n, conc); err != nil {
			return run{}, err
		}
		rec, err := startChild(ctx, b.self, "http-record", "-upstream", b.peer.url, "-cassette", b.cassette+"-long")
		if err != nil {
			return run{}, err
		}
		b.rec = rec
	}
	r, err := runThrough(ctx, c, b.rec, false, tool, n, conc)
	if err != nil {
		return run{}, err
	}
	b.longRequests += n
	b.longTool = tool
	return r, nil
}

// verifyLong checks that the cassette of the recorder that lived on holds
// every frame of its runs, in whichever sessions it put them.
func (b *httpBench) verifyLong(ctx context.Context) error {
	path := b.cassette + "-long"
	defer removeCassette(path)
	db, err := store.Open(ctx, path)
	if err != nil {
		return err
	}
	defer db.Close()
	ids, err := db.SessionIDs(ctx)
	if err != nil {
		return err
	}
	var c2s, s2c int
	for _, id := range ids {
		fs, err := db.Frames(ctx, id)
		if err != nil {
			return err
		}
		c, s := countFrames(fs)
		c2s, s2c = c2s+c, s2c+s
	}
	wantC2S, wantS2C := wantFrames(b.longTool, b.longRequests)
	if c2s != wantC2S || s2c != wantS2C {
		return fmt.Errorf("-long-lived: the recorder kept %d client and %d server frames of %d requests; want %d and %d", c2s, s2c, b.longRequests, wantC2S, wantS2C)
	}
	return nil
}

// wantFrames returns the client and server frames that n requests of
// tool make: n client frames, and one answer or streamEvents events per
// request.
func wantFrames(tool string, n int) (c2s, s2c int) {
	if tool == toolStream {
		return n, n * streamEvents
	}
	return n, n
}

// countFrames counts the client and the server frames of fs.
func countFrames(fs []store.Frame) (c2s, s2c int) {
	for _, f := range fs {
		switch f.Direction {
		case store.ClientToServer:
			c2s++
		case store.ServerToClient:
			s2c++
		}
	}
	return c2s, s2c
}

// replay runs the load against a new replayer process serving the newest
// recording, which fails if anything went unmatched.
func (b *httpBench) replay(ctx context.Context, c *http.Client, tool string, n, conc int) (run, error) {
	if !b.recorded {
		return run{}, errors.New("replay before any record run")
	}
	rs, err := startChild(ctx, b.self, "http-replay", "-cassette", b.cassette)
	if err != nil {
		return run{}, err
	}
	// Untimed: the first request of a replay links the whole recording
	// (the replay start rows measure that); a GET, which this recording
	// has no stream for (405), does it without taking any of the recorded
	// exchanges the load replays.
	if req, err := http.NewRequestWithContext(ctx, http.MethodGet, rs.url, nil); err == nil {
		req.Header.Set("Accept", "text/event-stream")
		if resp, err := c.Do(req); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}
	return runThrough(ctx, c, rs, true, tool, n, conc)
}

// runThrough runs the load through the proxy (or replayer) process p,
// closing it after if last, and gives the run the CPU time p used
// meanwhile (up to its close).
func runThrough(ctx context.Context, c *http.Client, p *child, last bool, tool string, n, conc int) (run, error) {
	cpu0, err := p.cpu()
	if err != nil {
		if last {
			p.kill()
		}
		return run{}, err
	}
	r, err := runHTTP(ctx, c, p.url, tool, n, conc)
	var cpu1 time.Duration
	var cerr error
	if last {
		c.CloseIdleConnections()
		cpu1, cerr = p.close()
	} else if cerr = p.flush(); cerr == nil {
		cpu1, cerr = p.cpu()
	}
	r.cpu = cpu1 - cpu0
	if err := errors.Join(err, cerr); err != nil {
		return run{}, err
	}
	return r, nil
}

// verifyRecorded flushes db and checks that its newest session holds the
// frames of n requests of tool: n client frames, and one answer or
// streamEvents events per request; it returns the session loaded for
// replay.
func verifyRecorded(ctx context.Context, db *store.DB, tool string, n int) (*store.Recording, error) {
	wantC2S, wantS2C := wantFrames(tool, n)
	if err := db.Flush(ctx); err != nil {
		return nil, err
	}
	ss, err := db.Sessions(ctx)
	if err != nil {
		return nil, err
	}
	if len(ss) == 0 {
		return nil, errors.New("nothing recorded")
	}
	id := ss[len(ss)-1].ID
	recs, err := db.Recordings(ctx, id)
	if err != nil {
		return nil, err
	}
	c2s, s2c := countFrames(recs[0].Frames)
	if c2s != wantC2S || s2c != wantS2C {
		return nil, fmt.Errorf("session %d recorded %d client and %d server frames; want %d and %d", id, c2s, s2c, wantC2S, wantS2C)
	}
	return recs[0], nil
}

// modes in the order of the table.
type mode int

const (
	modeDirect mode = iota
	modePassthrough
	modeRecord
	modeReplay
	modeSnoop // mcpsnoop, with -mcpsnoop
	modeFloor // record into nothing, with -floor
	numModes
)

var modeNames = [numModes]string{"direct", "passthrough", "record", "replay", "mcpsnoop", "floor"}

func (m mode) String() string { return modeNames[m] }

// roundOrder returns the modes in the order round i runs them: forwards
// in even rounds, backwards in odd ones, so that no mode always runs on a
// warmer or a more tired machine. Replay always follows a record run,
// whose first recording it serves. mcpsnoop runs only with -mcpsnoop,
// the floor only with -floor.
func roundOrder(i int) []mode {
	ms := []mode{modeDirect, modePassthrough}
	if floor {
		ms = append(ms, modeFloor)
	}
	ms = append(ms, modeRecord)
	if snoop != nil {
		ms = append(ms, modeSnoop)
	}
	ms = append(ms, modeReplay)
	if i%2 == 1 {
		slices.Reverse(ms)
	}
	return ms
}
