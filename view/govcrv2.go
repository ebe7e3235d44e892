package view

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"gopkg.in/dnaeon/go-vcr.v2/cassette"

	"github.com/mcpvcr/mcpvcr/internal/outfile"
	"github.com/mcpvcr/mcpvcr/store"
)

// GoVCRError says why a session cannot be written as a go-vcr cassette.
type GoVCRError struct {
	Session int64
	// Stream is the stream that go-vcr cannot replay, 0 when the whole
	// session is the reason.
	Stream int64
	Reason string
}

// Error names the session, the stream and the reason.
func (e *GoVCRError) Error() string {
	if e.Stream != 0 {
		return fmt.Sprintf("session %d cannot be a go-vcr cassette: stream %d %s", e.Session, e.Stream, e.Reason)
	}
	return fmt.Sprintf("session %d cannot be a go-vcr cassette: %s", e.Session, e.Reason)
}

// HTTPExchange is one recorded HTTP exchange as a whole request and a
// whole answer: what a go-vcr cassette holds as an interaction.
type HTTPExchange struct {
	// Stream is the recorded stream.
	Stream int64
	Method string
	// URL is absolute: the base URL and the path and query exactly as the
	// client sent them.
	URL            string
	RequestHeader  http.Header // as recorded (redacted); never nil
	RequestBody    []byte
	Status         int
	ResponseHeader http.Header // as recorded (redacted); never nil
	// ResponseBody is the JSON answer, or an SSE answer's raw event-stream
	// text, every event as recorded.
	ResponseBody []byte
	// Duration is the whole exchange's, from the request to the end of
	// the answer.
	Duration time.Duration
}

// HTTPExchanges returns rec, a Streamable HTTP session, as whole exchanges
// in the order the requests started, for formats that hold whole bodies
// (go-vcr cassettes). URLs are baseURL (the scheme and host the client
// addressed; if empty, the session's upstream's) with the path and query
// exactly as the client sent them (a redacted query value as its
// placeholder). What only a live stream can do is refused with a
// *GoVCRError saying why: a standalone GET stream or a
// subscriptions/listen stream that carried messages, a resumed stream, a
// stream that ended early or was cancelled. A GET stream that carried none
// (keep-alive comments aside) becomes a 405, which tells the client the
// server offers no such stream. stdio and HTTP+SSE sessions are refused
// too, and so is a session with no HTTP exchange.
func HTTPExchanges(rec *store.Recording, baseURL string) ([]HTTPExchange, error) {
	s := rec.Session
	switch s.Transport {
	case store.StreamableHTTP:
	case store.LegacySSE:
		return nil, &GoVCRError{Session: s.ID, Reason: "it is an HTTP+SSE (2024-11-05) session, whose answers all arrive on its GET stream; go-vcr buffers whole bodies and cannot stream them"}
	default:
		return nil, &GoVCRError{Session: s.ID, Reason: fmt.Sprintf("it was recorded over %s; go-vcr replays HTTP only", s.Transport)}
	}
	if baseURL == "" {
		u, err := url.Parse(s.Upstream)
		if err != nil || u.Scheme == "" || u.Host == "" {
			return nil, fmt.Errorf("session %d: upstream %q gives no base URL: %w", s.ID, s.Upstream, errBaseURL)
		}
		baseURL = u.Scheme + "://" + u.Host
	}
	baseURL = strings.TrimSuffix(baseURL, "/")

	frames := map[int64][]*store.Frame{}
	for i := range rec.Frames {
		f := &rec.Frames[i]
		frames[f.StreamID] = append(frames[f.StreamID], f)
	}
	streams := slices.Clone(rec.Streams)
	slices.SortStableFunc(streams, func(a, b store.Stream) int {
		if a.Opened != b.Opened {
			return int(a.Opened - b.Opened)
		}
		return int(a.ID - b.ID)
	})
	var out []HTTPExchange
	for _, st := range streams {
		x, err := exchange(s.ID, &st, frames[st.ID], baseURL)
		if err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	if len(out) == 0 {
		return nil, &GoVCRError{Session: s.ID, Reason: "it has no HTTP exchanges"}
	}
	return out, nil
}

// writeGoVCRv2 writes rec, a Streamable HTTP session, as a go-vcr v2 cassette
// (format version 1) at path, through go-vcr v2's own cassette package, so
// the file is what go-vcr v2 itself writes: a path ending in .yaml is what
// recorder.New(strings.TrimSuffix(path, ".yaml")) loads. (go-vcr v3 and v4
// read only format 2: WriteGoVCR writes it.)
//
// Each exchange of HTTPExchanges becomes one interaction, with the
// recorded (redacted) headers; what HTTPExchanges refuses is refused with
// its *GoVCRError. Fidelity is request and response only: no event timing
// (an interaction's duration is its whole exchange's) and no stream
// breaks.
//
// The file is created 0600 and written whole or not at all (see
// internal/outfile): a refused session leaves no file behind.
func writeGoVCRv2(rec *store.Recording, path, baseURL string) error {
	f, err := outfile.Create(path)
	if err != nil {
		return err
	}
	defer f.Abort()
	if err := encodeGoVCRv2(f, rec, baseURL); err != nil {
		return err
	}
	if err := f.Commit(); err != nil {
		return fmt.Errorf("write go-vcr cassette %s: %w", filepath.Base(path), err)
	}
	return nil
}

// saveGoVCR writes rec as a go-vcr cassette at path, through go-vcr's own
// cassette package.
func saveGoVCR(rec *store.Recording, path, baseURL string) error {
	xs, err := HTTPExchanges(rec, baseURL)
	if err != nil {
		return err
	}
	name := strings.TrimSuffix(path, ".yaml")
	c := cassette.New(name)
	c.File = path
	for _, x := range xs {
		c.AddInteraction(&cassette.Interaction{
			Request: cassette.Request{
				Body:    string(x.RequestBody),
				Headers: x.RequestHeader,
				URL:     x.URL,
				Method:  x.Method,
			},
			Response: cassette.Response{
				Body:     string(x.ResponseBody),
				Headers:  x.ResponseHeader,
				Status:   fmt.Sprintf("%d %s", x.Status, http.StatusText(x.Status)),
				Code:     x.Status,
				Duration: x.Duration,
			},
		})
	}
	if err := c.Save(); err != nil {
		return fmt.Errorf("write go-vcr cassette %s: %w", filepath.Base(path), err)
	}
	return nil
}

var errBaseURL = errors.New("not an absolute URL")

// exchange turns one recorded stream into a whole exchange.
func exchange(session int64, st *store.Stream, fs []*store.Frame, baseURL string) (HTTPExchange, error) {
	refuse := func(format string, args ...any) (HTTPExchange, error) {
		return HTTPExchange{}, &GoVCRError{Session: session, Stream: st.ID, Reason: fmt.Sprintf(format, args...)}
	}
	var req, resp bytes.Buffer
	var messages []*store.Frame // server messages, for the reasons
	for _, f := range fs {
		if f.Direction == store.ClientToServer {
			req.Write(f.Raw)
			continue
		}
		resp.Write(f.Raw)
		if !f.Comment {
			messages = append(messages, f)
		}
	}
	x := HTTPExchange{
		Stream:         st.ID,
		Method:         st.Method,
		URL:            baseURL + st.URL,
		RequestHeader:  st.RequestHeader.Clone(),
		RequestBody:    req.Bytes(),
		Status:         st.Status,
		ResponseHeader: st.ResponseHeader.Clone(),
		ResponseBody:   resp.Bytes(),
	}
	if x.RequestHeader == nil {
		x.RequestHeader = http.Header{}
	}
	if x.ResponseHeader == nil {
		x.ResponseHeader = http.Header{}
	}
	if st.Closed > st.Opened {
		x.Duration = st.Closed - st.Opened
	}
	switch st.Kind {
	case store.GetStream:
		if len(messages) > 0 {
			return refuse("(the standalone GET stream) carried %d server message(s), the first %s at seq %d; go-vcr buffers whole bodies and cannot deliver them while the session goes on", len(messages), describe(messages[0]), messages[0].Seq)
		}
		if st.Status == http.StatusOK {
			// It carried nothing: a server without the stream is the same
			// to the client.
			x.Status = http.StatusMethodNotAllowed
			x.ResponseHeader = http.Header{"Allow": {"POST, DELETE"}}
			x.ResponseBody = nil
			x.Duration = 0
		}
		return x, nil
	case store.ResumeStream:
		return refuse("resumes stream %d (Last-Event-ID %q); go-vcr cannot replay a stream break", st.ResumesID, st.LastEventID)
	case store.ListenStream:
		if len(messages) > 0 {
			return refuse("(a subscriptions/listen stream) carried %d server message(s); go-vcr buffers whole bodies and cannot stream them", len(messages))
		}
	}
	if st.End != store.EndComplete {
		return refuse("(%s %s) ended %s; go-vcr replays only whole answers, no stream breaks or cancellations", st.Method, st.URL, st.End)
	}
	return x, nil
}

// describe names a frame for a reason: its method, or its kind.
func describe(f *store.Frame) string {
	if f.Method != "" {
		return f.Method
	}
	return f.Kind.String()
}

// encodeGoVCRv2 writes rec as writeGoVCRv2 does, to w instead of a file: the
// cassette is written to a temporary directory, through go-vcr's own
// cassette package, then copied to w and removed.
func encodeGoVCRv2(w io.Writer, rec *store.Recording, baseURL string) error {
	dir, err := os.MkdirTemp("", "mcpvcr-export-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "session.yaml")
	if err := saveGoVCR(rec, path, baseURL); err != nil {
		return err
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(w, f)
	return err
}
