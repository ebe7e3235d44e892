package store

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

	"gopkg.in/dnaeon/go-vcr.v2/cassette"

	"github.com/mcpvcr/mcpvcr/internal/outfile"
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

// WriteGoVCR writes rec, a Streamable HTTP session, as a go-vcr v2 cassette
// (format version 1) at path, through go-vcr's own cassette package, so the
// file is what go-vcr itself writes: a path ending in .yaml is what
// recorder.New(strings.TrimSuffix(path, ".yaml")) loads.
//
// Each HTTP exchange becomes one interaction, in the order the requests
// started. The URL is baseURL (the scheme and host the client addressed; if
// empty, the session's upstream's) with the path and query exactly as the
// client sent them (a redacted query value as its placeholder); headers are
// the recorded (redacted) ones; an SSE answer
// is its raw event-stream text, every event as recorded. go-vcr answers
// with whole bodies, so what only a live stream can do is refused with a
// *GoVCRError saying why: a standalone GET stream or a subscriptions/listen
// stream that carried messages, a resumed stream, a stream that ended early
// or was cancelled. A GET stream that carried none (keep-alive comments
// aside) is written as 405, which tells the client the server offers no
// such stream. stdio and HTTP+SSE sessions are refused too.
//
// Fidelity is request and response only: no event timing (an interaction's
// duration is its whole exchange's) and no stream breaks.
//
// The file is created 0600 and written whole or not at all (see
// internal/outfile): a refused session leaves no file behind.
func WriteGoVCR(rec *Recording, path, baseURL string) error {
	f, err := outfile.Create(path)
	if err != nil {
		return err
	}
	defer f.Abort()
	if err := EncodeGoVCR(f, rec, baseURL); err != nil {
		return err
	}
	if err := f.Commit(); err != nil {
		return fmt.Errorf("write go-vcr cassette %s: %w", filepath.Base(path), err)
	}
	return nil
}

// saveGoVCR writes rec as a go-vcr cassette at path, through go-vcr's own
// cassette package.
func saveGoVCR(rec *Recording, path, baseURL string) error {
	s := rec.Session
	switch s.Transport {
	case StreamableHTTP:
	case LegacySSE:
		return &GoVCRError{Session: s.ID, Reason: "it is an HTTP+SSE (2024-11-05) session, whose answers all arrive on its GET stream; go-vcr buffers whole bodies and cannot stream them"}
	default:
		return &GoVCRError{Session: s.ID, Reason: fmt.Sprintf("it was recorded over %s; go-vcr replays HTTP only", s.Transport)}
	}
	if baseURL == "" {
		u, err := url.Parse(s.Upstream)
		if err != nil || u.Scheme == "" || u.Host == "" {
			return fmt.Errorf("session %d: upstream %q gives no base URL: %w", s.ID, s.Upstream, errBaseURL)
		}
		baseURL = u.Scheme + "://" + u.Host
	}
	baseURL = strings.TrimSuffix(baseURL, "/")

	frames := map[int64][]*Frame{}
	for i := range rec.Frames {
		f := &rec.Frames[i]
		frames[f.StreamID] = append(frames[f.StreamID], f)
	}
	streams := slices.Clone(rec.Streams)
	slices.SortStableFunc(streams, func(a, b Stream) int {
		if a.Opened != b.Opened {
			return int(a.Opened - b.Opened)
		}
		return int(a.ID - b.ID)
	})

	name := strings.TrimSuffix(path, ".yaml")
	c := cassette.New(name)
	c.File = path
	for _, st := range streams {
		i, err := interaction(s.ID, &st, frames[st.ID], baseURL)
		if err != nil {
			return err
		}
		c.AddInteraction(i)
	}
	if len(c.Interactions) == 0 {
		return &GoVCRError{Session: s.ID, Reason: "it has no HTTP exchanges"}
	}
	if err := c.Save(); err != nil {
		return fmt.Errorf("write go-vcr cassette %s: %w", filepath.Base(path), err)
	}
	return nil
}

var errBaseURL = errors.New("not an absolute URL")

// interaction turns one recorded exchange into a go-vcr interaction.
func interaction(session int64, st *Stream, fs []*Frame, baseURL string) (*cassette.Interaction, error) {
	refuse := func(format string, args ...any) error {
		return &GoVCRError{Session: session, Stream: st.ID, Reason: fmt.Sprintf(format, args...)}
	}
	var req, resp bytes.Buffer
	var messages []*Frame // server messages, for the reasons
	for _, f := range fs {
		if f.Direction == ClientToServer {
			req.Write(f.Raw)
			continue
		}
		resp.Write(f.Raw)
		if !f.Comment {
			messages = append(messages, f)
		}
	}
	i := &cassette.Interaction{
		Request: cassette.Request{
			Body:    req.String(),
			Headers: st.RequestHeader.Clone(),
			URL:     baseURL + st.URL,
			Method:  st.Method,
		},
		Response: cassette.Response{
			Body:    resp.String(),
			Headers: st.ResponseHeader.Clone(),
			Status:  fmt.Sprintf("%d %s", st.Status, http.StatusText(st.Status)),
			Code:    st.Status,
		},
	}
	if i.Request.Headers == nil {
		i.Request.Headers = http.Header{}
	}
	if i.Response.Headers == nil {
		i.Response.Headers = http.Header{}
	}
	if st.Closed > st.Opened {
		i.Response.Duration = st.Closed - st.Opened
	}
	switch st.Kind {
	case GetStream:
		if len(messages) > 0 {
			return nil, refuse("(the standalone GET stream) carried %d server message(s), the first %s at seq %d; go-vcr buffers whole bodies and cannot deliver them while the session goes on", len(messages), describe(messages[0]), messages[0].Seq)
		}
		if st.Status == http.StatusOK {
			// It carried nothing: a server without the stream is the same
			// to the client.
			i.Response = cassette.Response{
				Headers: http.Header{"Allow": {"POST, DELETE"}},
				Status:  "405 Method Not Allowed",
				Code:    http.StatusMethodNotAllowed,
			}
		}
		return i, nil
	case ResumeStream:
		return nil, refuse("resumes stream %d (Last-Event-ID %q); go-vcr cannot replay a stream break", st.ResumesID, st.LastEventID)
	case ListenStream:
		if len(messages) > 0 {
			return nil, refuse("(a subscriptions/listen stream) carried %d server message(s); go-vcr buffers whole bodies and cannot stream them", len(messages))
		}
	}
	if st.End != EndComplete {
		return nil, refuse("(%s %s) ended %s; go-vcr replays only whole answers, no stream breaks or cancellations", st.Method, st.URL, st.End)
	}
	return i, nil
}

// describe names a frame for a reason: its method, or its kind.
func describe(f *Frame) string {
	if f.Method != "" {
		return f.Method
	}
	return f.Kind.String()
}

// EncodeGoVCR writes rec as WriteGoVCR does, to w instead of a file: the
// cassette is written to a temporary directory, through go-vcr's own
// cassette package, then copied to w and removed.
func EncodeGoVCR(w io.Writer, rec *Recording, baseURL string) error {
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
