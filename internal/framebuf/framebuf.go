// Package framebuf grows the buffer that gathers one frame's bytes as
// they arrive (a stdio line, an HTTP body, an SSE event) so that a big
// frame costs its recorder about one copy of it, never more than the
// recorder's limit on a frame plus a constant.
//
// Growing a buffer with append copies a frame into every larger buffer on
// the way, and each of those stays in memory until the next garbage
// collection: a frame of 80 MB left some 200 MB of buffers behind. Here a
// buffer grows as append grows it up to Step; past that it is made once
// with room for the most it may hold (the limit, or the length the frame
// announced). Room a frame does not fill costs address space, not memory,
// when its pages come fresh from the system, and at most the limit when
// they do not.
package framebuf

// Step is the length up to which a buffer grows as append grows it.
const Step = 4 << 20

// Append appends p to b, keeping at most limit bytes in all (limit <= 0:
// no limit), and returns the extended buffer and how many bytes of p it
// kept. size is the frame's whole length when it is known (a
// Content-Length), 0 otherwise: a buffer that must grow is then made
// with room for min(size, limit) at once.
func Append(b, p []byte, limit int, size int64) ([]byte, int) {
	keep := len(p)
	if limit > 0 {
		keep = max(0, min(keep, limit-len(b)))
	}
	n := len(b) + keep
	if n > cap(b) {
		b = grown(b, n, limit, size)
	}
	return append(b, p[:keep]...), keep
}

// grown returns b with room for at least n bytes (see Append).
func grown(b []byte, n, limit int, size int64) []byte {
	want := max(n, 2*cap(b), 512)
	switch {
	case size > 0 && size >= int64(n) && (limit <= 0 || size <= int64(limit)):
		want = int(size)
	case size > int64(limit) && limit > 0:
		want = limit
	case want > Step && limit > 0:
		want = limit
	}
	if limit > 0 {
		want = min(want, limit)
	}
	nb := make([]byte, len(b), max(want, n))
	copy(nb, b)
	return nb
}
