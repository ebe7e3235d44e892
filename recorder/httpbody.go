package recorder

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"

	"github.com/mcpvcr/mcpvcr/internal/framebuf"
	"github.com/mcpvcr/mcpvcr/internal/sse"
	"github.com/mcpvcr/mcpvcr/internal/sserun"
	"github.com/mcpvcr/mcpvcr/store"
)

// recordingBody wraps an upstream answer body: the proxy reads (and so
// forwards) exactly the upstream's bytes through it, and it records them,
// event by event for SSE, as they pass. Only the HTTP+SSE endpoint event
// is changed on its way to the client, so that the client's POSTs come
// back through the proxy.
type recordingBody struct {
	h   *HTTP
	x   *exchange
	ctx context.Context
	rc  io.ReadCloser
	sse bool
	// json reports a JSON content type: a body that is not JSON-RPC is
	// then flagged malformed. Other bodies ("Accepted") are kept unflagged.
	json bool

	mu       sync.Mutex // guards everything below
	split    sse.Splitter
	events   []sse.Event
	reserved []*store.Frame // events forwarded and recorded, not yet settled
	chunks   int            // chunks reserved since the last settle
	// splitChunk and chunkDone are splitData and settled, made once; a
	// flush of the session calls them, under its lock, for b's chunks.
	// spare is a slice they pass frames in, reused.
	splitChunk func([]byte) []*store.Frame
	chunkDone  func([]*store.Frame)
	spare      []*store.Frame
	buf        []byte // a non-SSE body, recorded at EOF (its first max bytes)
	size       int64  // the length of a non-SSE body so far
	length     int64  // the answer's Content-Length, or 0 when unknown
	max        int    // the most bytes recorded of one frame
	out        []byte // bytes held back for the client (the endpoint event)
	holding    bool   // holding bytes until the endpoint event is complete
	atEOF      bool   // the upstream body ended with the bytes last handed out: finish is due
	// runs reports that the sink takes runs of SSE events (see runLen).
	runs     bool
	started  bool
	finished bool
}

func (b *recordingBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.started {
		b.started = true
		b.holding = b.sse && b.x.st.Kind == store.SSEGetStream
		b.max = maxFrame(b.h.MaxFrame)
		b.split.Max = b.max
		b.runs = b.sse && takesRuns(b.x.hs.sink)
	}
	b.settle()
	for {
		if len(b.out) > 0 && !b.holding {
			n := copy(p, b.out)
			b.out = b.out[n:]
			return n, nil
		}
		if b.atEOF {
			b.finish(nil)
		}
		if b.finished {
			return 0, io.EOF
		}
		n, err := b.rc.Read(p)
		if n > 0 && b.x.client != nil && b.x.client.Err() != nil {
			// The client went away while the upstream still sent: what
			// came now reaches no one, and is not recorded (a client
			// that stopped reading a call it cancelled never saw what
			// the server sent after). The stream ends client-aborted.
			b.finish(b.x.client.Err())
			return 0, b.x.client.Err()
		}
		if err == io.EOF {
			b.x.act.end()
		}
		if n > 0 {
			if b.holding {
				b.out = append(b.out, p[:n]...)
				if ferr := b.feed(p[:n]); ferr != nil {
					b.finish(ferr)
					return 0, ferr
				}
				n = 0 // handed out from b.out once the endpoint is known
				if b.holding && len(b.out) > b.max {
					// No event ends within MaxFrame: not an endpoint
					// event to rewrite; let the bytes go.
					b.holding = false
				}
			} else if b.sse {
				b.reserve(p[:n])
			} else {
				b.size += int64(n)
				// One buffer of at most max bytes, made for the
				// announced length (framebuf).
				b.buf, _ = framebuf.Append(b.buf, p[:n], b.max, b.length)
			}
		}
		if err == io.EOF && n > 0 && !b.holding && len(b.out) == 0 {
			// The last bytes go to the client before the end is
			// recorded: the proxy writes and flushes them, then reads
			// again, and that read records the end (see atEOF). The
			// body of an answer with a Content-Length ends so, and its
			// client need not wait for finish.
			b.atEOF = true
			return n, nil
		}
		if err != nil {
			if err == io.EOF {
				b.holding = false
				b.finish(nil)
				if len(b.out) > 0 || n > 0 {
					if n > 0 {
						return n, nil
					}
					continue
				}
				return 0, io.EOF
			}
			b.finish(err)
			return n, err
		}
		if n > 0 {
			return n, nil
		}
	}
}

// reserve takes SSE bytes that are about to be forwarded, as they are:
// it copies them and reserves the place of the events they complete in
// the session, and nothing else. The next Read (or the end, or another
// stream's write in the session) splits them into events and records
// those in that place (see chunk); settle then notes what they answered.
// So no recording work is done for an event before it is on its way to
// the client, even for the first event of a stream or the events of a
// long read, and the order of frames is still the order seen.
func (b *recordingBody) reserve(p []byte) {
	data := p
	if len(p) <= copyBuffers.size {
		data = copyBuffers.Get()[:len(p)]
	} else {
		data = make([]byte, len(p))
	}
	copy(data, p)
	if b.splitChunk == nil {
		b.splitChunk, b.chunkDone = b.splitData, b.settled
	}
	b.chunks++
	b.x.hs.reserveChunk(b.x.st, store.ServerToClient, &chunk{data: data, split: b.splitChunk, done: b.chunkDone})
}

// splitData splits SSE bytes that reserve took into the frames of the
// events they complete. It runs in the flush that records them, under
// the session's lock, once per chunk and in the order of the chunks.
func (b *recordingBody) splitData(data []byte) []*store.Frame {
	fs := b.spare[:0]
	b.spare = nil
	if b.split.Carried() > bigCarry {
		// A big event under way: the splitter copies data into the one
		// buffer it keeps the event in (sse.Splitter.Feed), which a copy
		// of data of its own would only double.
		return b.splitRead(fs, data, 0, false)
	}
	// The events data holds whole keep a copy of it as their bytes
	// (sse.Splitter.FeedOwned): one allocation per read, not one per
	// event; data goes back to its pool.
	own := bytes.Clone(data)
	if !b.runs || !b.x.st.Kind.EventRuns() {
		return b.splitRead(fs, own, 0, true)
	}
	if k := b.split.BlockEnd(own); k > 0 {
		// The read ends a block begun before it (or is the stream's
		// first): the splitter gets that block, and what follows may
		// take the path below.
		fs = b.splitRead(fs, own[:k], sserun.UpTo(own[:k]), true)
		own = own[k:]
	}
	// Where the first byte that may keep an event out of a run lies is
	// found once for the read, for the blocks below and for splitRead.
	up := sserun.UpTo(own)
	if b.split.AtBlockStart() {
		// The read's first blocks may be of the one shape a run takes
		// that needs no parse (the usual case of a busy stream): they go
		// in a run as they are, and the splitter gets the rest, such as
		// an answer.
		end, n := sserun.Blocks(own[:up], b.split.Max)
		if n > 0 && end <= maxRunBytes && !b.x.hs.red.mayChange(own[:end]) {
			fs = append(fs, newRun(own[:end:end], n))
			own, up = own[end:], up-end
		}
	}
	return b.splitRead(fs, own, up, true)
}

// splitRead feeds own, bytes of a read that b keeps, to the splitter and
// appends the frames of the events it completes to fs: runs of those that
// may go in one (see runCheck), a frame of its own for each other. up is
// sserun.UpTo(own) when b takes runs on this stream, and unused otherwise.
// Without owned, own is bytes b does not keep (up is 0): the events get
// copies of their bytes.
func (b *recordingBody) splitRead(fs []*store.Frame, own []byte, up int, owned bool) []*store.Frame {
	if len(own) == 0 {
		return fs
	}
	if owned {
		b.events = b.split.FeedOwned(b.takeEvents(), own)
	} else {
		b.events = b.split.Feed(b.takeEvents(), own)
	}
	var rc runCheck
	if b.runs && len(b.events) > 0 && owned {
		rc = runCheck{kind: b.x.st.Kind, red: b.x.hs.red}
		if startsAt(b.events[0].Raw, own) && !rc.red.mayChange(own) {
			// The events are own from its start, one after another.
			rc.clean = up
		}
	}
	var frames []store.Frame // one allocation for the read's frames of single events, if any
	for i := 0; i < len(b.events); {
		if n := rc.runLen(b.events[i:]); n > 0 {
			fs = append(fs, runFrame(b.events[i:i+n], own))
			rc.skip(b.events[i : i+n])
			i += n
			continue
		}
		if frames == nil {
			frames = make([]store.Frame, 0, len(b.events)-i) // never grows: frames[k] stays put
		}
		frames = append(frames, store.Frame{})
		fs = append(fs, b.frame(&frames[len(frames)-1], b.events[i]))
		rc.skip(b.events[i : i+1])
		i++
	}
	clear(b.events)
	return fs
}

// runCheck says which events of a read go in runs of events
// (store.Frame.Events): those sserun.Event accepts, on a stream that
// takes runs, that the session's redaction leaves as they are. The zero
// runCheck puts none in runs (a sink that does not take them).
type runCheck struct {
	kind store.StreamKind
	red  *Redactor
	// clean is how many bytes from the start of the read hold nothing
	// that keeps an event out of a run (sserun.UpTo) when its
	// events are the read's bytes one after another and the redaction
	// changes none of them, and 0 otherwise: an event that lies there
	// needs no search of its own. at is where in the read the next event
	// to check starts.
	clean, at int
}

// runLen returns how many of evs, from the first, go in one run; 0 when
// the first of evs goes in a frame of its own.
func (rc *runCheck) runLen(evs []sse.Event) int {
	if !rc.kind.EventRuns() {
		return 0
	}
	n, size := 0, 0
	for _, ev := range evs {
		clean := rc.at+size+len(ev.Raw) <= rc.clean
		if size+len(ev.Raw) > maxRunBytes || !sserun.Fields(ev) ||
			!clean && (!sserun.Bytes(ev.Raw) || rc.red.changes(ev.Data)) {
			break
		}
		n++
		size += len(ev.Raw)
	}
	return n
}

// skip moves past evs, which were put in frames.
func (rc *runCheck) skip(evs []sse.Event) {
	for _, ev := range evs {
		rc.at += len(ev.Raw)
	}
}

// startsAt reports whether b starts where read does, in memory: an
// event that sse.Splitter.FeedOwned returned from read as it is.
func startsAt(b, read []byte) bool { return len(b) > 0 && len(read) > 0 && &b[0] == &read[0] }

// bigCarry is the length of the block under way above which the bytes of
// a read are fed to the SSE splitter without a copy of their own (see
// splitData): a big event's.
const bigCarry = 64 << 10

// maxRunBytes bounds the bytes of one run of events; store.DB takes up
// to 64 KiB. A read fills at most a copy buffer, far less.
const maxRunBytes = 48 << 10

// runFrame returns the frame of the run of events evs: one frame for them
// all, whose bytes are their blocks, in order. read is the read evs were
// split from: when their blocks are all of it (the usual case of a busy
// stream), it is the run's bytes as it is.
func runFrame(evs []sse.Event, read []byte) *store.Frame {
	size := 0
	for _, ev := range evs {
		size += len(ev.Raw)
	}
	raw := read
	if last := evs[len(evs)-1].Raw; size != len(read) || !startsAt(evs[0].Raw, read) || &last[len(last)-1] != &read[len(read)-1] {
		raw = make([]byte, 0, size)
		for _, ev := range evs {
			raw = append(raw, ev.Raw...)
		}
	}
	return newRun(raw, len(evs))
}

// newRun returns the frame of a run of n events whose blocks are raw.
func newRun(raw []byte, n int) *store.Frame {
	return &store.Frame{Raw: raw, SSE: true, Retry: -1, Events: n}
}

// settled takes back the frames of a chunk once they are recorded, for
// settle to note what they answered.
func (b *recordingBody) settled(fs []*store.Frame) {
	b.reserved = append(b.reserved, fs...)
	clear(fs)
	b.spare = fs[:0]
}

// takeEvents returns b.events emptied, from eventSlices the first time.
func (b *recordingBody) takeEvents() []sse.Event {
	if b.events == nil {
		if v, ok := eventSlices.Get().(*[]sse.Event); ok {
			b.events = *v
		}
	}
	return b.events[:0]
}

// putEvents gives b.events back to eventSlices, once b splits no more.
func (b *recordingBody) putEvents() {
	if b.events != nil && cap(b.events) <= 1024 {
		ev := b.events[:cap(b.events)]
		clear(ev) // let go of the events' bytes
		ev = ev[:0]
		eventSlices.Put(&ev)
	}
	b.events = nil
}

// settle records the reserved events and notes what they answered.
func (b *recordingBody) settle() {
	if b.chunks == 0 && len(b.reserved) == 0 {
		return
	}
	b.chunks = 0
	b.x.hs.flush(b.ctx)
	for i, f := range b.reserved {
		b.noteEvent(f)
		b.reserved[i] = nil
	}
	b.reserved = b.reserved[:0]
}

// frame makes f the frame of event ev, not yet derived, and returns it.
// An endpoint URL is stored redacted, like every URL (the client still
// gets it as sent). The frame shares ev's memory, which no one changes.
func (b *recordingBody) frame(f *store.Frame, ev sse.Event) *store.Frame {
	*f = store.Frame{Raw: ev.Raw, SSE: true, Retry: ev.Retry, Comment: ev.Comment,
		EventID: ev.ID, HasEventID: ev.HasID, Event: ev.Type, Oversize: ev.Size}
	if ev.HasData {
		f.Data = ev.Data
		if f.Data == nil {
			f.Data = []byte{}
		}
	}
	if ev.Type == "endpoint" {
		if red := b.h.red.URL(string(ev.Data)); red != string(ev.Data) {
			rev := ev.WithData([]byte(red))
			f.Raw, f.Data = rev.Raw, rev.Data
		}
	}
	return f
}

// noteEvent remembers which stream carried a recorded event's id, for a
// stream that resumes from it, and crosses off the requests it answers.
func (b *recordingBody) noteEvent(f *store.Frame) {
	if f.HasEventID && f.EventID != "" {
		b.x.hs.mu.Lock()
		b.x.hs.noteEventID(f.EventID, b.x)
		b.x.hs.mu.Unlock()
	}
	b.answeredFrame(f)
}

// feed splits SSE bytes and records each complete event.
func (b *recordingBody) feed(p []byte) error {
	b.events = b.split.Feed(b.takeEvents(), p)
	for _, ev := range b.events {
		if err := b.event(ev); err != nil {
			return err
		}
	}
	return nil
}

func (b *recordingBody) event(ev sse.Event) error {
	x := b.x
	f := b.frame(new(store.Frame), ev)
	if b.holding && !ev.Comment {
		b.holding = false
		if err := b.endpoint(ev); err != nil {
			return err
		}
	}
	x.hs.append(b.ctx, x.st, store.ServerToClient, f)
	b.noteEvent(f)
	return nil
}

// answeredFrame crosses off the request ids a recorded frame answers,
// from its derived fields, without parsing its bytes again.
func (b *recordingBody) answeredFrame(f *store.Frame) {
	if f.Kind.IsResponse() {
		delete(b.x.reqIDs, f.ID)
	}
	for _, m := range f.Members {
		if m.Kind.IsResponse() {
			delete(b.x.reqIDs, m.ID)
		}
	}
}

// endpoint handles the first event of a GET that opened a conversation: an
// HTTP+SSE endpoint event is rewritten to point back through the proxy;
// anything else means the transport is Streamable HTTP after all.
func (b *recordingBody) endpoint(ev sse.Event) error {
	x := b.x
	hs := x.hs
	transport := store.LegacySSE
	if ev.Type != "endpoint" {
		transport, x.st.Kind = store.StreamableHTTP, store.GetStream
	}
	hs.session.mu.Lock()
	if hs.sess.Transport != transport {
		hs.sess.Transport = transport
		if !hs.failed {
			hs.fail(hs.sink.UpdateSession(b.ctx, &hs.sess))
		}
	}
	hs.session.mu.Unlock()
	if ev.Type != "endpoint" {
		return nil
	}
	base := *b.h.Upstream
	target, err := base.Parse(string(ev.Data))
	if err != nil {
		return fmt.Errorf("endpoint event %q is not a URL: %w", ev.Data, err)
	}
	if target.Scheme != base.Scheme || target.Host != base.Host {
		b.h.log.Error("the server's endpoint event points to another origin than its SSE stream; mcpvcr proxies one origin and will not follow it",
			"endpoint", b.h.red.URL(target.String()), "stream", b.h.red.URL(base.String()))
		return fmt.Errorf("endpoint %s is on another origin than the SSE stream %s: record with --upstream pointing at that origin", b.h.red.URL(target.String()), b.h.red.URL(base.String()))
	}
	b.h.mu.Lock()
	b.h.byEndpoint[target.RequestURI()] = hs
	hs.endpoints = append(hs.endpoints, target.RequestURI())
	b.h.mu.Unlock()
	if string(ev.Data) == target.RequestURI() || !isAbsolute(string(ev.Data)) {
		return nil // relative: the client resolves it against the proxy already
	}
	// An absolute URL: point it at the proxy, keeping path and query.
	proxied := url.URL{Scheme: "http", Host: x.host, Path: target.Path, RawPath: target.RawPath, RawQuery: target.RawQuery}
	rewritten := ev.WithData([]byte(proxied.String()))
	// Replace the held bytes of this event (the first one) in b.out.
	b.out = append(append([]byte(nil), rewritten.Raw...), b.out[len(ev.Raw):]...)
	return nil
}

func isAbsolute(s string) bool {
	u, err := url.Parse(s)
	return err == nil && u.IsAbs()
}

// finish records how the stream ended; err is the upstream's read error.
func (b *recordingBody) finish(err error) {
	if b.finished {
		return
	}
	b.finished = true
	b.settle()
	x := b.x
	if b.sse {
		if ev, ok := b.split.End(); ok {
			_ = b.event(ev)
		}
	} else if b.size > 0 {
		f := &store.Frame{Raw: b.buf}
		if b.size > int64(len(b.buf)) {
			f.Oversize = b.size
		}
		x.hs.append(b.ctx, x.st, store.ServerToClient, f)
		b.answeredFrame(f)
	}
	end := store.EndComplete
	switch {
	case err != nil && x.client != nil && x.client.Err() != nil:
		// The client went away, which cancelled the upstream request.
		end, err = b.h.abortEnd(), nil
	case err != nil:
		end = store.EndUpstreamError
	case len(x.reqIDs) > 0 && x.st.Status < 300 && x.st.Status != http.StatusAccepted:
		// The answer was owed on this stream (a 202 sends it elsewhere:
		// the HTTP+SSE stream or the GET stream).
		end = store.EndServerClosed
	}
	x.hs.closeStream(b.ctx, x.st, end, err)
	b.h.rememberPending(x)
	b.putEvents()
}

// Close closes the upstream body. Closing before the end means the client
// went away (or the proxy gave up on it).
func (b *recordingBody) Close() error {
	b.mu.Lock()
	if b.atEOF {
		b.finish(nil) // the upstream had ended it
	}
	if !b.finished {
		b.finished = true
		b.settle()
		if b.sse {
			if ev, ok := b.split.End(); ok {
				_ = b.event(ev)
			}
		}
		b.x.hs.closeStream(b.ctx, b.x.st, b.h.abortEnd(), nil)
		b.h.rememberPending(b.x)
		b.putEvents()
	}
	b.mu.Unlock()
	return b.rc.Close()
}
