package store

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"time"
	"unicode/utf8"
)

// The JSONL text form: a header line, then for each session its session
// line, its stream lines and its frame lines. Every line is one JSON
// object whose first key is "type" and whose keys come in a fixed order.
// IDs are numbered from 1 within each file, so that exporting what was
// imported gives the same bytes. Bytes that are valid UTF-8 are written as
// JSON strings ("raw"), others in base64 ("raw_b64"). Empty fields are
// left out.

// exportVersion is the version of the JSONL format this build writes and
// the newest it reads.
const exportVersion = 1

const headerType = "mcpvcr"

type headerRecord struct {
	Type    string `json:"type"`
	Version int    `json:"version"`
}

type sessionRecord struct {
	Type          string            `json:"type"`
	ID            int64             `json:"id"`
	Name          string            `json:"name,omitempty"`
	Transport     string            `json:"transport"`
	Revision      string            `json:"revision,omitempty"`
	Era           string            `json:"era,omitempty"`
	Upstream      string            `json:"upstream,omitempty"`
	ExternalID    string            `json:"external_id,omitempty"`
	StartedAt     string            `json:"started_at,omitempty"`
	EndedAt       string            `json:"ended_at,omitempty"`
	ExitCode      int               `json:"exit_code"`
	Labels        map[string]string `json:"labels,omitempty"`
	Note          string            `json:"note,omitempty"`
	ClientInfo    string            `json:"client_info,omitempty"`
	ClientInfoB64 string            `json:"client_info_b64,omitempty"`
	ServerInfo    string            `json:"server_info,omitempty"`
	ServerInfoB64 string            `json:"server_info_b64,omitempty"`
}

type streamRecord struct {
	Type           string      `json:"type"`
	ID             int64       `json:"id"`
	Session        int64       `json:"session"`
	Kind           string      `json:"kind"`
	Method         string      `json:"method,omitempty"`
	URL            string      `json:"url,omitempty"`
	Status         int         `json:"status,omitempty"`
	Resumes        int64       `json:"resumes,omitempty"`
	LastEventID    string      `json:"last_event_id,omitempty"`
	OpenedNS       int64       `json:"opened_ns,omitempty"`
	ClosedNS       int64       `json:"closed_ns,omitempty"`
	End            string      `json:"end"`
	Err            string      `json:"err,omitempty"`
	RequestHeader  http.Header `json:"request_header,omitempty"`
	ResponseHeader http.Header `json:"response_header,omitempty"`
}

// frameRecord is one frame. Kind, RPCID, Method and Malformed are written
// for people reading the file; Import derives them again from the bytes.
type frameRecord struct {
	Type      string  `json:"type"`
	Session   int64   `json:"session"`
	Seq       int64   `json:"seq"`
	Stream    int64   `json:"stream,omitempty"`
	Dir       string  `json:"dir"`
	OffsetNS  int64   `json:"offset_ns,omitempty"`
	Kind      string  `json:"kind,omitempty"`
	RPCID     string  `json:"rpc_id,omitempty"`
	Method    string  `json:"method,omitempty"`
	Malformed bool    `json:"malformed,omitempty"`
	SSE       bool    `json:"sse,omitempty"`
	EventID   *string `json:"event_id,omitempty"` // present when the event had an id line
	Event     string  `json:"event,omitempty"`
	Retry     *int    `json:"retry,omitempty"`
	Comment   bool    `json:"comment,omitempty"`
	Raw       string  `json:"raw,omitempty"`
	RawB64    string  `json:"raw_b64,omitempty"`
	Data      *string `json:"data,omitempty"` // an SSE event's data; elsewhere only when it is not raw
	DataB64   string  `json:"data_b64,omitempty"`
	// Oversize is the frame's true length when raw holds only its first
	// bytes (see Frame.Oversize).
	Oversize int64 `json:"oversize,omitempty"`
}

// Export writes the sessions with the given IDs (all sessions when none
// are given) as JSONL to w, sessions by ID, streams by ID, frames by seq.
// The output depends only on what is stored. It reads one snapshot of
// the committed data. A missing session is an error wrapping ErrNotFound.
func (d *DB) Export(ctx context.Context, w io.Writer, sessionIDs ...int64) error {
	return d.export(ctx, w, nil, sessionIDs)
}

// Rescue is Export of what can still be read of a damaged cassette: it
// passes over each pack of frames whose bytes do not decode, and returns
// what it passed over (a line per pack, naming its session and frames).
// The export then lacks those frames, which an import keeps as a gap.
func (d *DB) Rescue(ctx context.Context, w io.Writer, sessionIDs ...int64) (skipped []string, err error) {
	err = d.export(ctx, w, func(err error) { skipped = append(skipped, err.Error()) }, sessionIDs)
	return skipped, err
}

func (d *DB) export(ctx context.Context, w io.Writer, skip func(error), sessionIDs []int64) error {
	err := d.readFrames(ctx, func(rt readTx) error {
		ids := slices.Compact(slices.Sorted(slices.Values(sessionIDs)))
		if len(ids) == 0 {
			ss, err := sessions(ctx, rt.Tx)
			if err != nil {
				return err
			}
			for _, s := range ss {
				ids = append(ids, s.ID)
			}
		}
		bw := bufio.NewWriterSize(w, 1<<16)
		x := exporter{tx: rt, has: d.tables(), skip: skip, enc: json.NewEncoder(bw)}
		x.enc.SetEscapeHTML(false)
		if err := x.enc.Encode(headerRecord{Type: headerType, Version: exportVersion}); err != nil {
			return err
		}
		for i, id := range ids {
			if err := x.session(ctx, id, int64(i+1)); err != nil {
				return err
			}
		}
		return bw.Flush()
	})
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	return nil
}

type exporter struct {
	tx         readTx
	has        tables      // the tables the file has of those added lately
	skip       func(error) // see eachFrameSkipping; nil to fail on a damaged pack
	enc        *json.Encoder
	lastStream int64 // the last stream number given in the file
}

func (x *exporter) session(ctx context.Context, id, fileID int64) error {
	s, err := session(ctx, x.tx.Tx, id)
	if err != nil {
		return err
	}
	rec := sessionRecord{
		Type: sessionType, ID: fileID, Name: s.Name, Transport: s.Transport.String(),
		Revision: s.Revision, Era: string(s.Era), Upstream: s.Upstream, ExternalID: s.ExternalID,
		StartedAt: formatTime(s.StartedAt), EndedAt: formatTime(s.EndedAt), ExitCode: s.ExitCode,
		Labels: s.Labels, Note: s.Note,
	}
	rec.ClientInfo, rec.ClientInfoB64 = textOrBase64(s.ClientInfo)
	rec.ServerInfo, rec.ServerInfoB64 = textOrBase64(s.ServerInfo)
	if err := x.enc.Encode(rec); err != nil {
		return err
	}
	sts, err := streams(ctx, x.tx.Tx, id)
	if err != nil {
		return err
	}
	fileStream := map[int64]int64{}
	for _, st := range sts {
		x.lastStream++
		fileStream[st.ID] = x.lastStream
		rec := streamRecord{
			Type: streamType, ID: x.lastStream, Session: fileID, Kind: st.Kind.String(),
			Method: st.Method, URL: st.URL, Status: st.Status, LastEventID: st.LastEventID,
			OpenedNS: int64(st.Opened), ClosedNS: int64(st.Closed), End: st.End.String(), Err: st.Err,
			RequestHeader: st.RequestHeader, ResponseHeader: st.ResponseHeader,
		}
		if st.ResumesID != 0 {
			if rec.Resumes = fileStream[st.ResumesID]; rec.Resumes == 0 {
				return fmt.Errorf("stream %d resumes stream %d, which is not an earlier stream of session %d", st.ID, st.ResumesID, id)
			}
		}
		if err := x.enc.Encode(rec); err != nil {
			return err
		}
	}
	return eachFrameSkipping(ctx, x.tx, x.has, id, x.skip, func(f *Frame) error {
		rec := frameRecord{
			Type: frameType, Session: fileID, Seq: f.Seq, Dir: f.Direction.String(),
			OffsetNS: int64(f.Offset), RPCID: f.ID, Method: f.Method, Malformed: f.Malformed,
			SSE: f.SSE, Event: f.Event, Comment: f.Comment, Oversize: f.Oversize,
		}
		if f.StreamID != 0 {
			if rec.Stream = fileStream[f.StreamID]; rec.Stream == 0 {
				return fmt.Errorf("frame %d: stream %d is not a stream of session %d", f.Seq, f.StreamID, id)
			}
		}
		if !f.Comment && (f.Kind != KindInvalid || f.Malformed) {
			rec.Kind = f.Kind.String()
		}
		if f.HasEventID || f.EventID != "" {
			rec.EventID = &f.EventID
		}
		if f.SSE && f.Retry >= 0 {
			rec.Retry = &f.Retry
		}
		rec.Raw, rec.RawB64 = textOrBase64(f.Raw)
		if f.SSE && len(f.Data) > 0 || !f.SSE && !bytes.Equal(f.Data, f.Raw) {
			text, b64 := textOrBase64(f.Data)
			if b64 == "" {
				rec.Data = &text
			}
			rec.DataB64 = b64
		}
		return x.enc.Encode(rec)
	})
}

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

// frame decodes what rec stores of a frame: everything but its session
// and stream, which the file numbers its own way, and the fields Derive
// fills.
func (rec *frameRecord) frame() (*Frame, error) {
	var data []byte
	if rec.Data != nil {
		data = []byte(*rec.Data)
	}
	return rec.build([]byte(rec.Raw), data, rec.Data != nil)
}

// frameIn is a frame's line as import reads it: raw and data kept as the
// line holds them (lineString), shadowing frameRecord's strings, and
// decoded in the line's own bytes by frame.
type frameIn struct {
	frameRecord
	Raw  lineString  `json:"raw,omitempty"`
	Data *lineString `json:"data,omitempty"`
}

// frame is frameRecord.frame for the line in holds, which it decodes
// raw and data into: the frame's bytes alias the line, which must not
// change while the frame is in use, and must not be read as JSON again.
func (in *frameIn) frame() (*Frame, error) {
	raw, err := decodeJSONString(in.Raw, true)
	if err != nil {
		return nil, fmt.Errorf("raw: %w", err)
	}
	var data []byte
	if in.Data != nil {
		if data, err = decodeJSONString(*in.Data, true); err != nil {
			return nil, fmt.Errorf("data: %w", err)
		}
	}
	return in.build(raw, data, in.Data != nil)
}

// build makes rec's frame, with raw and data the text forms of those
// members (data present, perhaps empty, when dataSet).
func (rec *frameRecord) build(raw, data []byte, dataSet bool) (*Frame, error) {
	f := &Frame{
		Seq: rec.Seq, Offset: time.Duration(rec.OffsetNS),
		SSE: rec.SSE, Event: rec.Event, Retry: -1, Comment: rec.Comment,
	}
	if rec.Seq <= 0 {
		return nil, invalid("seq %d (seqs start at 1)", rec.Seq)
	}
	var err error
	if f.Direction, err = parseDirection(rec.Dir); err != nil {
		return nil, err
	}
	if rec.EventID != nil {
		f.EventID, f.HasEventID = *rec.EventID, true
	}
	if rec.Retry != nil {
		f.Retry = *rec.Retry
	}
	if f.Raw, err = textOrB64("raw", raw, rec.RawB64); err != nil {
		return nil, err
	}
	if rec.Oversize != 0 && rec.Oversize <= int64(len(f.Raw)) {
		return nil, invalid("oversize %d (the true length of a frame cut short, more than its %d bytes of raw)", rec.Oversize, len(f.Raw))
	}
	f.Oversize = rec.Oversize
	if dataSet && rec.DataB64 != "" {
		return nil, errors.New("both data and data_b64 are set")
	}
	if f.Data, err = textOrB64("data", data, rec.DataB64); err != nil {
		return nil, err
	}
	if f.Data == nil && dataSet {
		f.Data = []byte{} // present but empty: not the raw bytes
	}
	return f, nil
}

// textOrB64 is bytesOf for text already in bytes, which it returns as
// they are.
func textOrB64(name string, text []byte, b64 string) ([]byte, error) {
	if len(text) > 0 && b64 == "" {
		return text, nil
	}
	return bytesOf(name, string(text), b64)
}

// textOrBase64 returns b as text if it is valid UTF-8, else as base64.
func textOrBase64(b []byte) (text, b64 string) {
	if utf8.Valid(b) {
		return string(b), ""
	}
	return "", base64.StdEncoding.EncodeToString(b)
}

// bytesOf is the inverse of textOrBase64; name is the text key. Empty is
// nil.
func bytesOf(name, text, b64 string) ([]byte, error) {
	switch {
	case text != "" && b64 != "":
		return nil, fmt.Errorf("both %s and %s_b64 are set", name, name)
	case b64 != "":
		b, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			return nil, fmt.Errorf("%s_b64: %w", name, err)
		}
		return b, nil
	case text != "":
		return []byte(text), nil
	}
	return nil, nil
}

func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func parseTimeText(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	return time.Parse(time.RFC3339Nano, s)
}
