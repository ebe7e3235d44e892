package recorder

import "sync"

// Memory the HTTP recorder reuses across requests, on its per-request and
// per-event path.

// copyBuffers recycles the buffers the reverse proxy copies answers
// through: without a pool it makes one of 32 KB per request, which at a
// few thousand requests a second was a good part of the garbage the
// recorder made (go test -bench -memprofile).
var copyBuffers = &bufferPool{size: 32 << 10}

// bufferPool is an httputil.BufferPool of buffers of one size.
type bufferPool struct {
	size int
	p    sync.Pool
}

func (b *bufferPool) Get() []byte {
	if v, ok := b.p.Get().(*[]byte); ok {
		return *v
	}
	return make([]byte, b.size)
}

func (b *bufferPool) Put(buf []byte) {
	if cap(buf) == b.size {
		b.p.Put(&buf)
	}
}

// eventSlices recycles the slices the SSE splitter returns events in:
// one grows to the most events a read brings (a hundred, say), and each
// answer would grow its own.
var eventSlices sync.Pool // of *[]sse.Event
