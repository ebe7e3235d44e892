package recorder

import (
	"context"
	"io"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/mcpvcr/mcpvcr/internal/framebuf"
	"github.com/mcpvcr/mcpvcr/store"
)

// A request body the recorder cannot take whole: cut short by the client,
// or longer than MaxFrame.

// cutBody handles a request whose body the client cut short (it closed
// the connection, or sent less than its Content-Length): nothing is sent
// upstream and no answer is made up. The stream is recorded with the
// bytes that arrived, as ended by the client, and the connection is
// closed. It does not return.
func (h *HTTP) cutBody(r *http.Request, body []byte, err error) {
	h.log.Warn("the client cut its request body short; closing its connection, nothing was sent upstream", "url", h.red.URL(r.URL.RequestURI()), "received", len(body), "err", err)
	if !h.isExchange(r.URL.Path) {
		ctx := context.WithoutCancel(r.Context())
		x := h.begin(ctx, r, body, nil)
		x.hs.closeStream(ctx, x.st, store.EndClientAborted, err)
	}
	panic(http.ErrAbortHandler)
}

// readHead reads r until EOF or until it has limit bytes, into one buffer
// made for size (the Content-Length, -1 when unknown) when it is known: a
// big body costs one copy of at most limit bytes (framebuf), where
// io.ReadAll left several times that behind. A read error is returned
// with the bytes read before it.
func readHead(r io.Reader, limit int, size int64) ([]byte, error) {
	var b []byte
	buf := copyBuffers.Get()
	defer copyBuffers.Put(buf)
	for len(b) < limit {
		n, err := r.Read(buf[:min(len(buf), limit-len(b))])
		b, _ = framebuf.Append(b, buf[:n], limit, max(size, 0))
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
	return b, nil
}

// bigBody is a request body longer than MaxFrame, forwarded as it
// arrives: the first bytes read already (head), then the rest from the
// client. The request frame is recorded with head cut to max once the
// upstream has read it all or answers, whichever comes first.
type bigBody struct {
	head []byte
	rest io.ReadCloser
	max  int
	x    *exchange
	ctx  context.Context

	n    atomic.Int64          // bytes handed upstream
	err  atomic.Pointer[error] // the client's read error, if any
	once sync.Once
}

func (b *bigBody) Read(p []byte) (int, error) {
	var n int
	var err error
	if off := b.n.Load(); off < int64(len(b.head)) {
		n = copy(p, b.head[off:])
	} else {
		n, err = b.rest.Read(p)
	}
	b.n.Add(int64(n))
	switch {
	case err == io.EOF:
		b.record()
	case err != nil:
		b.err.Store(&err)
	}
	return n, err
}

func (b *bigBody) Close() error { return b.rest.Close() }

// clientErr returns the error reading from the client, if any.
func (b *bigBody) clientErr() error {
	if e := b.err.Load(); e != nil {
		return *e
	}
	return nil
}

// record records the request frame, once, with the length handed
// upstream so far (at least max+1: that much was read at the start).
func (b *bigBody) record() {
	b.once.Do(func() {
		f := &store.Frame{Raw: b.head[:b.max], Oversize: max(b.n.Load(), int64(b.max)+1)}
		b.x.hs.append(b.ctx, b.x.st, store.ClientToServer, f)
	})
}
