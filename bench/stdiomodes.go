package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"

	"github.com/mcpvcr/mcpvcr/recorder"
	"github.com/mcpvcr/mcpvcr/replayer"
	"github.com/mcpvcr/mcpvcr/store"
)

// stdioBench runs one stdio load in every mode. Each run starts a new
// server process (this program with -peer stdio); its start is not timed.
// It is not safe for concurrent use.
type stdioBench struct {
	self      string    // this program, to start as the peer
	db        *store.DB // the cassette record runs write
	recording *store.Recording
	// lost counts the frames mcpsnoop dropped from its trace in a run.
	lost int
}

// conn is the client's side of one stdio run: it writes requests to w and
// reads the server's lines from r. finish, called once the load is done,
// closes w and waits for the server side (and the proxy) to end.
type conn struct {
	w      io.WriteCloser
	r      io.ReadCloser
	finish func() error
}

// child starts the stdio peer.
func (b *stdioBench) child() (cmd *exec.Cmd, in io.WriteCloser, out, errOut io.ReadCloser, err error) {
	cmd = exec.Command(b.self, "-peer", "stdio")
	if in, err = cmd.StdinPipe(); err != nil {
		return nil, nil, nil, nil, err
	}
	if out, err = cmd.StdoutPipe(); err != nil {
		return nil, nil, nil, nil, err
	}
	if errOut, err = cmd.StderrPipe(); err != nil {
		return nil, nil, nil, nil, err
	}
	if err = cmd.Start(); err != nil {
		return nil, nil, nil, nil, fmt.Errorf("start the stdio peer: %w", err)
	}
	return cmd, in, out, errOut, nil
}

// pipes returns two OS pipes: the client writes to c2sW what the proxy
// reads from c2sR, and reads from s2cR what the proxy writes to s2cW. Real
// pipes, as a proxy that is its client's server command has.
func pipes() (c2sR, c2sW, s2cR, s2cW *os.File, err error) {
	if c2sR, c2sW, err = os.Pipe(); err != nil {
		return
	}
	if s2cR, s2cW, err = os.Pipe(); err != nil {
		c2sR.Close()
		c2sW.Close()
	}
	return
}

// open connects a client to the peer in mode m.
func (b *stdioBench) open(ctx context.Context, m mode) (*conn, error) {
	if m == modeReplay {
		return b.openReplay(ctx)
	}
	if m == modeSnoop {
		return snoop.openStdio(ctx, b.self, &b.lost)
	}
	cmd, in, out, errOut, err := b.child()
	if err != nil {
		return nil, err
	}
	if m == modeDirect {
		return &conn{w: in, r: out, finish: func() error {
			in.Close()
			_, _ = io.Copy(io.Discard, errOut)
			return cmd.Wait()
		}}, nil
	}
	c2sR, c2sW, s2cR, s2cW, err := pipes()
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, err
	}
	var wg sync.WaitGroup
	var runErr error
	switch m {
	case modePassthrough:
		wg.Go(func() {
			_, _ = io.Copy(in, c2sR)
			in.Close()
		})
		wg.Go(func() {
			_, _ = io.Copy(s2cW, out)
			s2cW.Close()
		})
		wg.Go(func() { _, _ = io.Copy(io.Discard, errOut) })
	case modeRecord, modeFloor:
		var sink recorder.Sink = b.db
		if m == modeFloor {
			sink = &discardSink{}
		}
		rec := &recorder.Stdio{Sink: sink, Session: store.Session{Name: "bench"}}
		client := struct {
			io.Reader
			io.Writer
		}{c2sR, s2cW}
		wg.Go(func() {
			res, err := rec.Run(ctx, client, serverPipes{out, in}, errOut)
			s2cW.Close()
			werr := cmd.Wait()
			if err == nil {
				res.End(ctx, cmd.ProcessState.ExitCode())
				err = errors.Join(res.Err, werr)
			}
			runErr = err
		})
	}
	return &conn{w: c2sW, r: s2cR, finish: func() error {
		c2sW.Close()
		wg.Wait()
		c2sR.Close()
		s2cR.Close()
		if m == modeRecord || m == modeFloor {
			return runErr
		}
		return cmd.Wait()
	}}, nil
}

// openReplay connects a client to a replayer.Server serving the first
// recording over stdio.
func (b *stdioBench) openReplay(ctx context.Context) (*conn, error) {
	if b.recording == nil {
		return nil, errors.New("replay before any record run")
	}
	c2sR, c2sW, s2cR, s2cW, err := pipes()
	if err != nil {
		return nil, err
	}
	srv := &replayer.Server{Recordings: []*store.Recording{b.recording}}
	client := struct {
		io.Reader
		io.Writer
	}{c2sR, s2cW}
	var rep *replayer.Report
	var serveErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		rep, serveErr = srv.ServeStdio(ctx, client)
		s2cW.Close()
	}()
	return &conn{w: c2sW, r: s2cR, finish: func() error {
		c2sW.Close()
		<-done
		c2sR.Close()
		s2cR.Close()
		if serveErr != nil {
			return serveErr
		}
		if !rep.OK() {
			return fmt.Errorf("replay: %d unmatched frames", len(rep.Mismatches))
		}
		return nil
	}}, nil
}

// run runs the load once in mode m; a record run then checks that the
// cassette holds every frame.
func (b *stdioBench) run(ctx context.Context, m mode, tool string, n, conc int) (run, error) {
	b.lost = 0
	c, err := b.open(ctx, m)
	if err != nil {
		return run{}, err
	}
	r, err := runStdio(ctx, c.w, c.r, tool, n, conc)
	if ferr := c.finish(); ferr != nil && err == nil {
		err = fmt.Errorf("%s: %w", m, ferr)
	}
	if err != nil {
		return run{}, err
	}
	r.lost = b.lost
	if m == modeRecord {
		rc, err := verifyRecorded(ctx, b.db, tool, n)
		if err != nil {
			return run{}, err
		}
		if b.recording == nil {
			b.recording = rc
		}
	}
	return r, nil
}

// serverPipes is the server's stdout and stdin as one io.ReadWriteCloser;
// Close closes stdin.
type serverPipes struct {
	io.Reader
	w io.WriteCloser
}

func (p serverPipes) Write(b []byte) (int, error) { return p.w.Write(b) }
func (p serverPipes) Close() error                { return p.w.Close() }
