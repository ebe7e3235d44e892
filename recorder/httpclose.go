package recorder

import (
	"context"

	"github.com/mcpvcr/mcpvcr/store"
)

// OpenStreams counts the MCP streams under way (requests being answered,
// GET streams held open) by kind.
func (h *HTTP) OpenStreams() map[store.StreamKind]int {
	h.init()
	h.mu.Lock()
	defer h.mu.Unlock()
	n := map[store.StreamKind]int{}
	for x := range h.open {
		n[x.st.Kind]++
	}
	return n
}

// Stop marks the proxy as stopping: streams cut from now on (by closing
// the server serving h) are recorded as ended by the proxy
// (store.EndProxyShutdown), not by their client. Call it just before
// closing connections.
func (h *HTTP) Stop() {
	h.init()
	h.stopping.Store(true)
}

// abortEnd is how a stream whose client connection went away ended.
func (h *HTTP) abortEnd() store.End {
	if h.stopping.Load() {
		return store.EndProxyShutdown
	}
	return store.EndClientAborted
}

// Close ends the GET streams still under way (their upstream requests
// are cancelled, and they are recorded as ended by the proxy, as after
// Stop), waits for the other requests h began serving before it to
// return, ending those still under way when ctx is done, then ends every
// session recorded so far, like httptest.Server.Close. (An answer under
// way is let finish: its client may have read all of it already, and the
// stream then ends complete, as it did.) It may be called before the
// server serving h closes (a client that left a GET stream open sees it
// end, and the server then closes at once) or after; a server's own
// Shutdown waits for held streams, which Close ends.
func (h *HTTP) Close(ctx context.Context) error {
	h.init()
	h.stopping.Store(true)
	h.inMu.Lock()
	h.closing = true
	h.inMu.Unlock()
	h.endStreams()
	done := make(chan struct{})
	go func() {
		h.inflight.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
	}
	h.endAll()
	h.mu.Lock()
	all := append([]*httpSession(nil), h.all...)
	err := h.err
	h.mu.Unlock()
	for _, hs := range all {
		hs.endAtLast(ctx, -1)
		if e := hs.Err(); e != nil && err == nil {
			err = e
		}
	}
	return err
}

// track counts a ServeHTTP call in inflight, unless Close has begun.
func (h *HTTP) track() bool {
	h.inMu.Lock()
	defer h.inMu.Unlock()
	if h.closing {
		return false
	}
	h.inflight.Add(1)
	return true
}
