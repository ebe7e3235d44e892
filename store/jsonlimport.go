// Import of a JSONL export: one line read at a time, each record checked
// and written in one transaction.

package store

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// Import reads a JSONL export from r into the cassette as new sessions,
// with new IDs, and returns those IDs in file order. Derived frame fields
// are computed again from the bytes, never taken from the file. Import is
// all or nothing: on any error nothing is imported. Errors name the line.
// Import runs in the writer goroutine, which waits for r meanwhile.
//
// What Import holds of a frame is its line, whose JSON string it decodes
// in place. If r is an io.Seeker too (an *os.File), a long line is
// measured first and read into a buffer of its length; from another
// reader it is read into a growing buffer, which may take twice its
// length while it grows.
func (d *DB) Import(ctx context.Context, r io.Reader) ([]int64, error) {
	im := &importer{
		d:        d,
		r:        bufio.NewReaderSize(r, importBuffer),
		sessions: map[int64]int64{},
		streams:  map[int64]importedStream{},
	}
	if s, ok := r.(io.ReadSeeker); ok {
		if at, err := s.Seek(0, io.SeekCurrent); err == nil {
			im.seeker, im.at = s, at
		}
	}
	run := func(t *txn) error { return im.run(ctx, t) }
	if err := d.exclusive(ctx, op{fn: run}); err != nil {
		return nil, fmt.Errorf("import: %w", err)
	}
	return im.ids, nil
}

// LineError is the error of an import refused for a line of the export
// that does not import: it names the line.
type LineError struct {
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }

func (e *LineError) Unwrap() error { return e.Err }

// importBuffer is the size of import's read buffer, and the length of a
// line above which a seekable file's line is measured before it is read
// (see readLong).
const importBuffer = 64 << 10

type importer struct {
	d        *DB
	r        *bufio.Reader
	seeker   io.ReadSeeker // r's source, if it can seek; nil otherwise
	at       int64         // seeker's offset of the next byte r returns
	buf      []byte        // the line last read, reused
	line     int
	sessions map[int64]int64          // file session id → new id
	streams  map[int64]importedStream // file stream id → new stream
	ids      []int64                  // new session ids, in file order
}

type importedStream struct {
	id, fileSession int64
	kind            StreamKind
}

func (im *importer) run(ctx context.Context, t *txn) error {
	if err := im.header(); err != nil {
		return err
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		line, err := im.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if len(line) == 0 {
			continue
		}
		if err := im.record(t, line); err != nil {
			return &LineError{Line: im.line, Err: plainLineError(err)}
		}
	}
}

// next returns the next line without its line ending, or io.EOF. The
// line is the importer's until the next call.
func (im *importer) next() ([]byte, error) {
	line, err := im.readLine()
	if err == io.EOF && len(line) > 0 {
		err = nil
	}
	if err != nil {
		if err != io.EOF {
			err = fmt.Errorf("line %d: %w", im.line+1, err)
		}
		return nil, err
	}
	im.line++
	return bytes.TrimRight(line, "\r\n"), nil
}

// readLine reads up to and including the next '\n' into im.buf, which it
// returns, with io.EOF at the end of the input.
func (im *importer) readLine() ([]byte, error) {
	if cap(im.buf) > 4*importBuffer {
		im.buf = nil // a long line's buffer is not kept for the next
	}
	frag, err := im.r.ReadSlice('\n')
	im.at += int64(len(frag))
	if err == bufio.ErrBufferFull && im.seeker != nil {
		return im.readLong(frag)
	}
	im.buf = append(im.buf[:0], frag...)
	for err == bufio.ErrBufferFull {
		frag, err = im.r.ReadSlice('\n')
		im.at += int64(len(frag))
		im.buf = append(im.buf, frag...)
	}
	return im.buf, err
}

// readLong reads a line longer than the read buffer, whose first bytes
// are first, from a seekable input: it reads on to the line's end to
// learn its length, then reads the line again, into a buffer of that
// length. A growing buffer would take up to twice the line while it
// grows, and a line may be a frame of tens of megabytes.
func (im *importer) readLong(first []byte) ([]byte, error) {
	start := im.at - int64(len(first))
	for {
		frag, err := im.r.ReadSlice('\n')
		im.at += int64(len(frag))
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil && err != io.EOF {
			return nil, err
		}
		break
	}
	n := im.at - start
	if _, err := im.seeker.Seek(start, io.SeekStart); err != nil {
		return nil, err
	}
	im.r.Reset(im.seeker)
	im.buf = make([]byte, n)
	if _, err := io.ReadFull(im.r, im.buf); err != nil {
		return nil, fmt.Errorf("read a line of %d bytes again: %w", n, err)
	}
	if im.buf[n-1] != '\n' {
		return im.buf, io.EOF
	}
	return im.buf, nil
}

func (im *importer) header() error {
	line, err := im.next()
	if err == io.EOF {
		return fmt.Errorf("%w: empty input", ErrNotExport)
	}
	if err != nil {
		return err
	}
	var h headerRecord
	if err := json.Unmarshal(line, &h); err != nil {
		return fmt.Errorf("%w: line 1: %w", ErrNotExport, plainLineError(err))
	}
	if h.Type != headerType || h.Version < 1 {
		return fmt.Errorf(`%w: line 1: want {"type":%q,"version":%d}`, ErrNotExport, headerType, exportVersion)
	}
	if h.Version > exportVersion {
		return fmt.Errorf("line 1: export format version %d, but this build reads up to %d: %w", h.Version, exportVersion, ErrNewerSchema)
	}
	return nil
}

func (im *importer) record(t *txn, line []byte) error {
	var peek struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(line, &peek); err != nil {
		return err
	}
	switch peek.Type {
	case sessionType:
		var rec sessionRecord
		if err := decodeStrict(line, &rec); err != nil {
			return err
		}
		return im.session(t, &rec)
	case streamType:
		var rec streamRecord
		if err := decodeStrict(line, &rec); err != nil {
			return err
		}
		return im.stream(t, &rec)
	case frameType:
		// A frame's line may be as long as the frame (tens of MB): it is
		// decoded in place, its raw and data straight into bytes, not
		// through a json.Decoder's copy of the line and a string.
		var in frameIn
		if err := json.Unmarshal(line, &in); err != nil {
			return err
		}
		if err := knownKeys(line, frameKeys); err != nil {
			return err
		}
		return im.frame(t, &in)
	}
	return fmt.Errorf("unknown record type %q", peek.Type)
}

// decodeStrict decodes one JSON object, refusing keys it does not know,
// so that a typo in a hand-edited file is not silently ignored.
func decodeStrict(line []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

func (im *importer) session(t *txn, rec *sessionRecord) error {
	if _, dup := im.sessions[rec.ID]; dup {
		return fmt.Errorf("session %d appears twice", rec.ID)
	}
	s := Session{
		Name: rec.Name, Revision: rec.Revision, Era: Era(rec.Era), Upstream: rec.Upstream,
		ExternalID: rec.ExternalID, ExitCode: rec.ExitCode, Labels: rec.Labels, Note: rec.Note,
	}
	var err error
	if s.Transport, err = parseTransport(rec.Transport); err != nil {
		return err
	}
	if s.StartedAt, err = parseTimeText(rec.StartedAt); err != nil {
		return fmt.Errorf("started_at: %w", err)
	}
	if s.EndedAt, err = parseTimeText(rec.EndedAt); err != nil {
		return fmt.Errorf("ended_at: %w", err)
	}
	if s.ClientInfo, err = bytesOf("client_info", rec.ClientInfo, rec.ClientInfoB64); err != nil {
		return err
	}
	if s.ServerInfo, err = bytesOf("server_info", rec.ServerInfo, rec.ServerInfoB64); err != nil {
		return err
	}
	args, err := sessionArgs(&s)
	if err != nil {
		return err
	}
	if args[0], err = im.d.idInTxn(t, im.d.sessionIDs); err != nil {
		return err
	}
	if err := t.putSession(args); err != nil {
		return err
	}
	id := args[0].(int64)
	im.sessions[rec.ID] = id
	im.ids = append(im.ids, id)
	return nil
}

func (im *importer) stream(t *txn, rec *streamRecord) error {
	if _, dup := im.streams[rec.ID]; dup || rec.ID == 0 {
		return fmt.Errorf("stream %d appears twice or has no id", rec.ID)
	}
	sessionID, ok := im.sessions[rec.Session]
	if !ok {
		return fmt.Errorf("stream %d: session %d: %w (sessions must come before their streams)", rec.ID, rec.Session, ErrNotFound)
	}
	st := Stream{
		SessionID: sessionID, Method: rec.Method, URL: rec.URL, Status: rec.Status,
		RequestHeader: rec.RequestHeader, ResponseHeader: rec.ResponseHeader,
		LastEventID: rec.LastEventID, Opened: time.Duration(rec.OpenedNS),
		Closed: time.Duration(rec.ClosedNS), Err: rec.Err,
	}
	var err error
	if st.Kind, err = parseStreamKind(rec.Kind); err != nil {
		return err
	}
	if st.End, err = parseEnd(rec.End); err != nil {
		return err
	}
	if rec.Resumes != 0 {
		r, ok := im.streams[rec.Resumes]
		if !ok || r.fileSession != rec.Session {
			return fmt.Errorf("stream %d resumes stream %d, which is not an earlier stream of session %d", rec.ID, rec.Resumes, rec.Session)
		}
		st.ResumesID = r.id
	}
	args, err := streamArgs(&st)
	if err != nil {
		return err
	}
	if args[0], err = im.d.idInTxn(t, im.d.streamIDs); err != nil {
		return err
	}
	if err := t.putStream(args); err != nil {
		return err
	}
	im.streams[rec.ID] = importedStream{id: args[0].(int64), fileSession: rec.Session, kind: st.Kind}
	return nil
}

func (im *importer) frame(t *txn, in *frameIn) error {
	rec := &in.frameRecord
	sessionID, ok := im.sessions[rec.Session]
	if !ok {
		return fmt.Errorf("frame %d: session %d: %w (sessions must come before their frames)", rec.Seq, rec.Session, ErrNotFound)
	}
	f, err := in.frame()
	if err != nil {
		return err
	}
	f.SessionID = sessionID
	kind := StreamUnknown
	if rec.Stream != 0 {
		st, ok := im.streams[rec.Stream]
		if !ok || st.fileSession != rec.Session {
			return fmt.Errorf("frame %d: stream %d is not a stream of session %d", rec.Seq, rec.Stream, rec.Session)
		}
		f.StreamID, kind = st.id, st.kind
	}
	f.Derive(kind)
	return frameStored(t.putFrame(f), rec)
}
