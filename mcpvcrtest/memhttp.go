package mcpvcrtest

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"sync"
)

// errMemClosed is what a memRoundTripper answers once closed.
var errMemClosed = errors.New("mcpvcrtest: in-memory replay closed")

// memRoundTripper serves HTTP requests by calling a handler in memory: no
// listener, no socket, no connection pool. Each request runs the handler on
// a goroutine the memRoundTripper owns, and the response body streams from
// the handler through a pipe, so SSE answers arrive event by event.
type memRoundTripper struct {
	h  http.Handler
	wg sync.WaitGroup

	// mu guards closed.
	mu     sync.Mutex
	closed bool
}

// RoundTrip implements http.RoundTripper.
func (m *memRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, errMemClosed
	}
	m.wg.Add(1)
	m.mu.Unlock()

	// The handler's context ends when the client's does or when the
	// client closes the body, as a server's ends when its connection does.
	ctx, cancel := context.WithCancel(req.Context())
	sreq := serverRequest(req.WithContext(ctx))
	pr, pw := io.Pipe()
	w := &memResponse{header: http.Header{}, body: pw, ready: make(chan struct{})}
	go m.serve(w, sreq, pw, cancel)

	select {
	case <-w.ready:
	case <-req.Context().Done():
		cancel()
		pr.CloseWithError(req.Context().Err())
		return nil, req.Context().Err()
	}
	resp := &http.Response{
		Status:        http.StatusText(w.status),
		StatusCode:    w.status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        w.sent,
		Body:          &memBody{pr: pr, cancel: cancel},
		ContentLength: -1,
		Request:       req,
	}
	return resp, nil
}

// serve runs the handler for one request.
func (m *memRoundTripper) serve(w *memResponse, r *http.Request, pw *io.PipeWriter, cancel context.CancelFunc) {
	defer m.wg.Done()
	defer cancel()
	defer r.Body.Close() // the client's request body: RoundTrip's to close
	defer pw.Close()
	defer w.writeHeader(http.StatusOK) // a handler that wrote nothing answered 200
	m.h.ServeHTTP(w, r)
}

// Close refuses new requests and waits for the handlers in progress, which
// the caller must have made return (by closing the replayer, which ends the
// streams it holds).
func (m *memRoundTripper) Close() {
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	m.wg.Wait()
}

// memBody is the client's side of an in-memory response body.
type memBody struct {
	pr     *io.PipeReader
	cancel context.CancelFunc
}

func (b *memBody) Read(p []byte) (int, error) { return b.pr.Read(p) }

// Close ends the handler: its context is done and its writes fail.
func (b *memBody) Close() error {
	b.cancel()
	return b.pr.Close()
}

// serverRequest is req as a server would see it: a path-only URL and the
// client's Host, from a loopback address. Its context is the client's, so
// that a client that gives up ends the handler.
func serverRequest(req *http.Request) *http.Request {
	r := req.Clone(req.Context())
	r.URL = &url.URL{Path: req.URL.Path, RawPath: req.URL.RawPath, RawQuery: req.URL.RawQuery}
	r.RequestURI = req.URL.RequestURI()
	r.Host = req.URL.Host
	r.RemoteAddr = "127.0.0.1:1"
	r.Proto, r.ProtoMajor, r.ProtoMinor = "HTTP/1.1", 1, 1
	if r.Body == nil {
		r.Body = http.NoBody
	}
	return r
}

// memResponse is the handler's side of an in-memory response.
type memResponse struct {
	header http.Header
	body   *io.PipeWriter

	once   sync.Once
	status int
	sent   http.Header // the header as sent
	ready  chan struct{}
}

func (w *memResponse) Header() http.Header { return w.header }

func (w *memResponse) WriteHeader(code int) { w.writeHeader(code) }

func (w *memResponse) writeHeader(code int) {
	w.once.Do(func() {
		w.status = code
		w.sent = w.header.Clone()
		close(w.ready)
	})
}

func (w *memResponse) Write(p []byte) (int, error) {
	w.writeHeader(http.StatusOK)
	return w.body.Write(p)
}

// Flush implements http.Flusher: writes reach the reader as they are made.
func (w *memResponse) Flush() { w.writeHeader(http.StatusOK) }
