package view

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v4"
	"gopkg.in/dnaeon/go-vcr.v4/pkg/cassette"

	"github.com/mcpvcr/mcpvcr/internal/outfile"
	"github.com/mcpvcr/mcpvcr/store"
)

// GoVCRFormats are the go-vcr cassette formats WriteGoVCR and EncodeGoVCR
// write: "go-vcr", go-vcr v4's cassette (format version 2, which go-vcr
// v3 reads too), and "go-vcr-v2", go-vcr v2's (format version 1).
var GoVCRFormats = []string{"go-vcr", "go-vcr-v2"}

// WriteGoVCR writes rec, one Streamable HTTP session, as a go-vcr cassette
// in format (one of GoVCRFormats) at path: a path ending in .yaml is what
// go-vcr's recorder.New(strings.TrimSuffix(path, ".yaml"), ...) loads.
// Exchanges are HTTPExchanges's, and what it refuses is refused with
// its *GoVCRError. The file is created 0600.
//
// The go-vcr v4 cassette is written through go-vcr v4's own cassette
// package. Each request is what the Go client's *http.Request held, as
// go-vcr v4 records it: the headers Go's transport adds on the wire
// (Content-Length, Accept-Encoding: gzip, the default User-Agent, Host)
// are left out, and the protocol, host, content length and form are
// filled in, so that go-vcr v4's default matcher, which compares all of
// them, matches the recorded client's requests.
func WriteGoVCR(format string, rec *store.Recording, path, baseURL string) error {
	if format == "go-vcr-v2" {
		return writeGoVCRv2(rec, path, baseURL)
	}
	f, err := outfile.Create(path)
	if err != nil {
		return err
	}
	defer f.Abort()
	if err := EncodeGoVCR(f, format, rec, baseURL); err != nil {
		return err
	}
	if err := f.Commit(); err != nil {
		return fmt.Errorf("write go-vcr cassette %s: %w", filepath.Base(path), err)
	}
	return nil
}

// EncodeGoVCR writes rec to w as WriteGoVCR writes it to a file. Nothing
// is written when rec cannot be a go-vcr cassette.
func EncodeGoVCR(w io.Writer, format string, rec *store.Recording, baseURL string) error {
	switch format {
	case "go-vcr-v2":
		return encodeGoVCRv2(w, rec, baseURL)
	case "go-vcr":
	default:
		return fmt.Errorf("go-vcr format %q is not one of %s", format, strings.Join(GoVCRFormats, ", "))
	}
	xs, err := HTTPExchanges(rec, baseURL)
	if err != nil {
		return err
	}
	c := cassette.New("session")
	c.MarshalFunc = yaml.Marshal // what go-vcr v4's recorder marshals with
	for _, x := range xs {
		i, err := interactionV4(x)
		if err != nil {
			return fmt.Errorf("stream %d: %w", x.Stream, err)
		}
		c.AddInteraction(i)
	}
	return c.SaveWithFS(writerFS{w})
}

// interactionV4 is x as go-vcr v4's recorder captures an exchange of a Go
// client: the request as the client's *http.Request held it.
func interactionV4(x HTTPExchange) (*cassette.Interaction, error) {
	req, err := http.NewRequest(x.Method, x.URL, bytes.NewReader(x.RequestBody))
	if err != nil {
		return nil, err
	}
	h := x.RequestHeader.Clone()
	for _, k := range []string{"Host", "Content-Length", "Connection", "Transfer-Encoding"} {
		h.Del(k)
	}
	// What Go's transport adds when the client did not set it.
	if v := h.Values("Accept-Encoding"); len(v) == 1 && v[0] == "gzip" {
		h.Del("Accept-Encoding")
	}
	if v := h.Values("User-Agent"); len(v) == 1 && strings.HasPrefix(v[0], "Go-http-client/") {
		h.Del("User-Agent")
	}
	req.Header = h
	// The form as go-vcr records it: the query, and a form body.
	if err := req.ParseForm(); err != nil {
		return nil, fmt.Errorf("parse the form: %w", err)
	}
	respLen := int64(-1)
	if v := x.ResponseHeader.Get("Content-Length"); v != "" {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			respLen = n
		}
	} else if len(x.ResponseBody) == 0 && x.Status != http.StatusOK {
		respLen = 0
	}
	return &cassette.Interaction{
		Request: cassette.Request{
			Proto:         "HTTP/1.1",
			ProtoMajor:    1,
			ProtoMinor:    1,
			ContentLength: req.ContentLength,
			Host:          req.Host,
			Body:          string(x.RequestBody),
			Form:          req.Form,
			Headers:       h,
			URL:           x.URL,
			Method:        x.Method,
		},
		Response: cassette.Response{
			Proto:         "HTTP/1.1",
			ProtoMajor:    1,
			ProtoMinor:    1,
			ContentLength: respLen,
			Body:          string(x.ResponseBody),
			Headers:       x.ResponseHeader,
			Status:        fmt.Sprintf("%d %s", x.Status, http.StatusText(x.Status)),
			Code:          x.Status,
			Duration:      x.Duration,
		},
	}, nil
}

// writerFS is the cassette.FS that SaveWithFS writes w through.
type writerFS struct{ w io.Writer }

func (f writerFS) ReadFile(string) ([]byte, error) { return nil, os.ErrNotExist }
func (f writerFS) IsFileExists(string) bool        { return false }
func (f writerFS) WriteFile(_ string, data []byte) error {
	_, err := f.w.Write(data)
	return err
}
