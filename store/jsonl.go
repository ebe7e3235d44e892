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
