// Package scrub rewrites a copy of a cassette for sharing: credentials and
// secret JSON members as the recorder redacts them (for cassettes recorded
// with fewer rules), plus e-mail addresses, home directories' user names
// and long random-looking tokens in every string, each as a stable
// placeholder (the same for the same value within the copy). The copy
// still replays to the client that recorded it: it is labelled, and
// replay then masks the same patterns when it matches.
//
// Protocol identifiers are kept as they are, so that the copy's streams
// and frames still agree: JSON-RPC ids, request ids and progress tokens,
// SSE event ids, Mcp-Session-Id and Last-Event-ID.
package scrub

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/internal/redact"
	"github.com/mcpvcr/mcpvcr/internal/sse"
	"github.com/mcpvcr/mcpvcr/recorder"
	"github.com/mcpvcr/mcpvcr/store"
)

// Kinds of replacement, as Report counts them.
const (
	KindMember = "json-member" // a secret-named JSON member's value
	KindHeader = "header"      // a credential header's value
	KindURL    = "url"         // a credential in a URL (query parameter, password)
	KindEmail  = "email"       // an e-mail address
	KindHome   = "home-path"   // a home directory's user name
	KindToken  = "token"       // a long random-looking token
)

// Report counts what Cassette replaced, by kind; it never holds a value.
type Report struct {
	Sessions int
	Counts   map[string]int
}

// Kinds returns the kinds Report counts, in a fixed order.
func Kinds() []string {
	return []string{KindMember, KindHeader, KindURL, KindEmail, KindHome, KindToken}
}

// Options adds to the defaults.
type Options struct {
	// Redactor redacts headers, URLs and JSON members (its JSON names are
	// added to the defaults). If nil, the defaults.
	Redactor *recorder.Redactor
}

// Cassette writes a scrubbed copy of every session of in into out, which
// should be empty, and reports what it replaced.
func Cassette(ctx context.Context, in, out *store.DB, opt Options) (Report, error) {
	s := &scrubber{red: opt.Redactor, counts: map[string]int{}}
	if s.red == nil {
		s.red = &recorder.Redactor{}
	}
	s.names = redact.New(true, s.red.JSON...)
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(in.Export(ctx, pw)) }()
	defer pr.Close()
	qr, qw := io.Pipe()
	go func() { qw.CloseWithError(s.lines(pr, qw)) }()
	defer qr.Close()
	ids, err := out.Import(ctx, qr)
	if err != nil {
		return Report{}, err
	}
	return Report{Sessions: len(ids), Counts: s.counts}, nil
}

type scrubber struct {
	red    *recorder.Redactor
	names  redact.Names
	counts map[string]int // only the goroutine of lines writes it
}

// lines scrubs each JSONL line of r into w.
func (s *scrubber) lines(r io.Reader, w io.Writer) error {
	br := bufio.NewReaderSize(r, 1<<16)
	bw := bufio.NewWriterSize(w, 1<<16)
	for {
		line, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			out, lerr := s.line(line)
			if lerr != nil {
				return lerr
			}
			if _, werr := bw.Write(append(out, '\n')); werr != nil {
				return werr
			}
		}
		if err == io.EOF {
			return bw.Flush()
		}
		if err != nil {
			return err
		}
	}
}

func (s *scrubber) line(line []byte) ([]byte, error) {
	var rec map[string]json.RawMessage
	if err := json.Unmarshal(line, &rec); err != nil {
		return nil, fmt.Errorf("scrub: read an exported line: %w", err)
	}
	var typ string
	_ = json.Unmarshal(rec["type"], &typ)
	switch typ {
	case "session":
		for _, k := range []string{"name", "upstream", "note"} {
			s.textField(rec, k)
		}
		for _, k := range []string{"client_info", "server_info"} {
			s.jsonField(rec, k)
		}
		labels := map[string]string{}
		if b, ok := rec["labels"]; ok {
			_ = json.Unmarshal(b, &labels)
		}
		labels = maps.Clone(labels)
		labels[redact.ScrubLabel] = "v1"
		rec["labels"] = mustJSON(labels)
	case "stream":
		if u, ok := str(rec, "url"); ok {
			red := s.red.URL(u)
			if red != u {
				s.counts[KindURL]++
			}
			rec["url"] = mustJSON(s.text(red))
		}
		s.textField(rec, "err")
		for _, k := range []string{"request_header", "response_header"} {
			s.headerField(rec, k)
		}
	case "frame":
		if err := s.frame(rec); err != nil {
			return nil, err
		}
	}
	return json.Marshal(rec)
}

// frame scrubs a frame record's bytes: the data of an SSE event (its
// raw bytes rebuilt around it), else the raw bytes. Bytes that are not
// UTF-8 (stored in base64) are kept.
func (s *scrubber) frame(rec map[string]json.RawMessage) error {
	var sseEvent, comment bool
	_ = json.Unmarshal(rec["sse"], &sseEvent)
	_ = json.Unmarshal(rec["comment"], &comment)
	raw, ok := str(rec, "raw")
	if !ok {
		return nil
	}
	data, hasData := str(rec, "data")
	if sseEvent && !comment {
		if !hasData {
			return nil
		}
		nd := s.body([]byte(data))
		if string(nd) == data {
			return nil
		}
		ev := sse.Event{Raw: []byte(raw), BOM: strings.HasPrefix(raw, "\ufeff")}.WithData(nd)
		setBytes(rec, "raw", ev.Raw)
		setBytes(rec, "data", ev.Data)
		return nil
	}
	nr := s.body([]byte(raw))
	if hasData { // a non-SSE frame whose data differs from raw: keep them apart
		setBytes(rec, "data", s.body([]byte(data)))
	}
	setBytes(rec, "raw", nr)
	return nil
}

// body scrubs a frame's bytes: JSON with its secret members and the
// strings in it, anything else as text.
func (s *scrubber) body(b []byte) []byte {
	if !json.Valid(b) {
		return []byte(s.text(string(b)))
	}
	b, n := s.names.JSON(b, func(v string) (string, bool) {
		if v == "" || redact.IsPlaceholder(v) {
			return "", false
		}
		return s.red.Placeholder(v), true
	})
	s.counts[KindMember] += n
	type span struct {
		start, end int
		with       []byte
	}
	var spans []span
	_ = jsonrpc.Strings(b, func(key []byte, start, end int) {
		switch string(key) {
		case "id", "requestId", "progressToken", "jsonrpc", "method":
			return // protocol identifiers
		}
		var v string
		if json.Unmarshal(b[start:end], &v) != nil {
			return
		}
		if nv := s.text(v); nv != v {
			spans = append(spans, span{start, end, mustJSON(nv)})
		}
	})
	if len(spans) == 0 {
		return b
	}
	out := make([]byte, 0, len(b))
	last := 0
	for _, sp := range spans {
		out = append(append(out, b[last:sp.start]...), sp.with...)
		last = sp.end
	}
	return append(out, b[last:]...)
}

// text replaces e-mail addresses, home directories' user names and
// random-looking tokens in v.
func (s *scrubber) text(v string) string {
	return redact.Text(v, func(kind, found string) string {
		if kind == KindToken && redact.IsPlaceholder(found) {
			return found
		}
		s.counts[kind]++
		ph := s.red.Placeholder(found) // REDACTED-<12 hex>
		switch kind {
		case KindEmail:
			return "redacted-" + ph[len("REDACTED-"):] + "@example.invalid"
		case KindHome:
			return "user-" + ph[len("REDACTED-"):len("REDACTED-")+6]
		}
		return ph
	})
}

func (s *scrubber) textField(rec map[string]json.RawMessage, k string) {
	if v, ok := str(rec, k); ok {
		rec[k] = mustJSON(s.text(v))
	}
}

// jsonField scrubs a field that holds a JSON text as a string.
func (s *scrubber) jsonField(rec map[string]json.RawMessage, k string) {
	if v, ok := str(rec, k); ok {
		rec[k] = mustJSON(string(s.body([]byte(v))))
	}
}

// identifiers are the headers whose values stay as recorded: protocol
// identifiers that the frames and streams must keep agreeing on.
var identifiers = []string{"Mcp-Session-Id", "Last-Event-Id"}

func (s *scrubber) headerField(rec map[string]json.RawMessage, k string) {
	b, ok := rec[k]
	if !ok {
		return
	}
	var h http.Header
	if json.Unmarshal(b, &h) != nil {
		return
	}
	red := s.red.Header(h)
	for name, vs := range red {
		for i, v := range vs {
			if v != h[name][i] {
				s.counts[KindHeader]++
			}
			if !slices.Contains(identifiers, http.CanonicalHeaderKey(name)) {
				vs[i] = s.text(v)
			}
		}
	}
	rec[k] = mustJSON(red)
}

func str(rec map[string]json.RawMessage, k string) (string, bool) {
	b, ok := rec[k]
	if !ok {
		return "", false
	}
	var v string
	if json.Unmarshal(b, &v) != nil {
		return "", false
	}
	return v, true
}

// setBytes stores b under k as the export does: text when it is UTF-8
// (always so here: it was text before scrubbing).
func setBytes(rec map[string]json.RawMessage, k string, b []byte) {
	if !utf8.Valid(b) {
		rec[k+"_b64"] = mustJSON(base64.StdEncoding.EncodeToString(b))
		delete(rec, k)
		return
	}
	rec[k] = mustJSON(string(b))
}

func mustJSON(v any) json.RawMessage {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return bytes.TrimRight(buf.Bytes(), "\n")
}
