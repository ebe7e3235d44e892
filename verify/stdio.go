package verify

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/store"
)

// errOutputClosed is how a stdio server that went away is described.
var errOutputClosed = errors.New("the server closed its output (it exited or crashed)")

// RunStdio sends the recorded session to a server over stdio: it writes
// the client's lines to server and reads the server's lines from it. When
// the conversation is over it closes server (the server's stdin) and
// reads on until the server's output ends, so the caller must make Read
// return io.EOF once the server has exited (and may kill a server that
// lingers after its stdin closed). The session must have been recorded
// over stdio.
//
// It returns ErrNoClientFrames, ErrNoAnswer (wrapped) or a
// *RevisionError when the server could not be verified; what the server
// answered is to be compared with Diff.
func (v *Verifier) RunStdio(ctx context.Context, server io.ReadWriteCloser) (*Run, error) {
	if v.Recording != nil && v.Recording.Session.Transport != store.Stdio {
		return nil, fmt.Errorf("verify over stdio: session %d was recorded over %s", v.Recording.Session.ID, v.Recording.Session.Transport)
	}
	return v.run(ctx, &stdioConn{rw: server, done: make(chan struct{})})
}

// stdioConn is a stdio server.
type stdioConn struct {
	rw   io.ReadWriteCloser
	mu   sync.Mutex    // guards writes to rw, and closed
	done chan struct{} // closed when the reader has stopped
	// closed is set once rw is closed: no more writes.
	closed bool
}

func (c *stdioConn) start(ctx context.Context, d *driver) {
	go func() {
		defer close(c.done)
		r := bufio.NewReaderSize(c.rw, 64<<10)
		for {
			line, err := r.ReadBytes('\n')
			if m := jsonrpc.Parse(line); m.Kind != jsonrpc.KindEmpty {
				d.deliver(ctx, m)
			}
			if err != nil {
				if errors.Is(err, io.EOF) {
					d.serverGone(errOutputClosed)
				} else {
					d.serverGone(fmt.Errorf("read from the server: %w", err))
				}
				return
			}
		}
	}()
}

func (c *stdioConn) send(_ context.Context, _ *store.Frame, data []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return errors.New("the server's input is closed")
	}
	if len(data) == 0 || data[len(data)-1] != '\n' {
		data = append(data[:len(data):len(data)], '\n')
	}
	if _, err := c.rw.Write(data); err != nil {
		return fmt.Errorf("write to the server: %w", err)
	}
	return nil
}

func (c *stdioConn) open(context.Context, *store.Stream, string) error { return nil }

// finish closes the server's stdin and waits until its output has ended
// or ctx is done.
func (c *stdioConn) finish(ctx context.Context) {
	c.mu.Lock()
	if !c.closed {
		c.closed = true
		c.rw.Close()
	}
	c.mu.Unlock()
	select {
	case <-c.done:
	case <-ctx.Done():
	}
}
