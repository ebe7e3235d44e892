package sse

import "io"

// readSize is the size of a Reader's read buffer.
const readSize = 32 << 10

// maxEmptyReads is how many reads in a row may return no bytes and no error
// before a Reader gives up with io.ErrNoProgress, as bufio does.
const maxEmptyReads = 100

// Reader reads events from an event stream. It reads in chunks into its own
// buffer and splits them with a Splitter, so it returns the same events.
//
// A Reader is not safe for concurrent use.
type Reader struct {
	r     io.Reader
	buf   []byte // read buffer, allocated on first use
	s     Splitter
	queue []Event // events read but not yet returned, from queue[next]
	next  int
	err   error // returned once queue is drained
}

// NewReader returns a Reader that reads the event stream from r.
func NewReader(r io.Reader) *Reader {
	return &Reader{r: r}
}

// Next returns the next event, comment block included. At the end of the
// stream, bytes that do not make a whole event are returned as a final event
// with Partial set, and the call after that returns io.EOF. If reading fails,
// Next likewise returns what it holds as a Partial event first, and then the
// error, unwrapped. Once Next has returned an error, it returns it on every
// later call.
func (r *Reader) Next() (Event, error) {
	for {
		if r.next < len(r.queue) {
			e := r.queue[r.next]
			r.queue[r.next] = Event{} // let the caller own it alone
			r.next++
			return e, nil
		}
		if r.err != nil {
			return Event{}, r.err
		}
		r.queue, r.next = r.queue[:0], 0
		r.fill()
	}
}

// fill reads once from the underlying reader, queueing the events it
// completes and, at the end of the stream, the rest.
func (r *Reader) fill() {
	if r.buf == nil {
		r.buf = make([]byte, readSize)
	}
	err := io.ErrNoProgress
	for range maxEmptyReads {
		var n int
		n, err = r.r.Read(r.buf)
		r.queue = r.s.Feed(r.queue, r.buf[:n])
		if err != nil {
			break
		}
		if n > 0 {
			return
		}
		err = io.ErrNoProgress
	}
	if e, ok := r.s.End(); ok {
		r.queue = append(r.queue, e)
	}
	r.err = err
}
