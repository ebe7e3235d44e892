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
	"errors"
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
	KindArg    = "argument"    // a credential flag's value in the server's command line (-p VALUE, --password=VALUE)
)

// Report counts what Cassette replaced, by kind; it never holds a value.
// Left counts the values it left alone that may still be secrets no
// format names (redact.LeftKinds, and LeftNonString), by kind.
type Report struct {
	Sessions int
	Counts   map[string]int
	Left     map[string]int
}

// LeftNonString counts secret-named JSON members whose value is not a
// string (a number, say): they are kept, as replay compares them.
const LeftNonString = "non-string-secret-member"

// Kinds returns the kinds Report counts, in a fixed order: the kinds of
// credential found by format (redact.SecretKinds) among them.
func Kinds() []string {
	return append([]string{KindMember, KindHeader, KindURL, KindArg}, append(redact.SecretKinds(), KindEmail, KindHome, KindToken)...)
}

// LeftKinds returns the kinds Report.Left counts, in a fixed order.
func LeftKinds() []string { return append(redact.LeftKinds(), LeftNonString) }

// Options adds to the defaults.
type Options struct {
	// Redactor redacts headers, URLs and JSON members (its JSON names are
	// added to the defaults). If nil, the defaults.
	Redactor *recorder.Redactor
}

// Cassette writes a scrubbed copy of every session of in into out, which
// should be empty, and reports what it replaced.
func Cassette(ctx context.Context, in, out *store.DB, opt Options) (Report, error) {
	s := &scrubber{red: opt.Redactor, counts: map[string]int{}, left: map[string]int{}}
	if s.red == nil {
		s.red = &recorder.Redactor{}
	}
	s.names = redact.New(true, s.red.JSON...)
	pr, pw := io.Pipe()
	exported := make(chan error, 1)
	go func() {
		err := in.Export(ctx, pw)
		exported <- err
		pw.CloseWithError(err)
	}()
	defer pr.Close()
	qr, qw := io.Pipe()
	go func() { qw.CloseWithError(s.lines(pr, qw)) }()
	defer qr.Close()
	ids, err := out.Import(ctx, qr)
	if err != nil {
		// The import fails on its first line the export could not
		// write; what the export met is the cause to tell (a damaged
		// pack, say), not "import: line 1: export: ...".
		qr.Close()
		pr.Close()
		if xerr := <-exported; xerr != nil && !errors.Is(xerr, io.ErrClosedPipe) {
			if inner := errors.Unwrap(xerr); inner != nil {
				xerr = inner // without store's "export: "
			}
			return Report{}, fmt.Errorf("read the cassette: %w", xerr)
		}
		return Report{}, err
	}
	return Report{Sessions: len(ids), Counts: s.counts, Left: s.left}, nil
}

type scrubber struct {
	red    *recorder.Redactor
	names  redact.Names
	counts map[string]int // only the goroutine of lines writes it
	left   map[string]int // likewise
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
		if u, ok := str(rec, "upstream"); ok && !strings.Contains(u, "://") {
			// A stdio server's command line, stored as its words joined.
			words := strings.Split(u, " ")
			red := s.red.Args(words)
			for i := range red {
				if red[i] != words[i] {
					s.counts[KindArg]++
				}
			}
			rec["upstream"] = mustJSON(strings.Join(red, " "))
		}
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
		labels[store.LabelScrubbed] = "v1"
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
// UTF-8 (exported in base64) are scanned as bytes, as text.
func (s *scrubber) frame(rec map[string]json.RawMessage) error {
	var sseEvent, comment bool
	_ = json.Unmarshal(rec["sse"], &sseEvent)
	_ = json.Unmarshal(rec["comment"], &comment)
	raw, ok := getBytes(rec, "raw")
	if !ok {
		return nil
	}
	data, hasData := getBytes(rec, "data")
	if sseEvent && !comment {
		if !hasData {
			return nil
		}
		nd := s.body(data)
		if bytes.Equal(nd, data) {
			return nil
		}
		ev := sse.Event{Raw: raw, BOM: bytes.HasPrefix(raw, []byte("\ufeff"))}.WithData(nd)
		setBytes(rec, "raw", ev.Raw)
		setBytes(rec, "data", ev.Data)
		return nil
	}
	nr := s.body(raw)
	if hasData { // a non-SSE frame whose data differs from raw: keep them apart
		setBytes(rec, "data", s.body(data))
	}
	setBytes(rec, "raw", nr)
	return nil
}

// getBytes reads the bytes the export stored under k: as text, or in
// base64 under k_b64 when they are not UTF-8.
func getBytes(rec map[string]json.RawMessage, k string) ([]byte, bool) {
	if v, ok := str(rec, k); ok {
		return []byte(v), true
	}
	if v, ok := str(rec, k+"_b64"); ok {
		b, err := base64.StdEncoding.DecodeString(v)
		return b, err == nil
	}
	return nil, false
}

// body scrubs a frame's bytes: JSON with its secret members and the
// strings in it, anything else as text.
func (s *scrubber) body(b []byte) []byte {
	if !json.Valid(b) {
		// Text, or bytes that are not UTF-8: the patterns are matched
		// byte by byte, and the bytes around a match kept.
		return []byte(s.text(string(b)))
	}
	s.nonString(b)
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

// nonString counts the secret-named members of the JSON b whose values
// are not strings: they are left as they are.
func (s *scrubber) nonString(b []byte) {
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				switch e.(type) {
				case string, nil, map[string]any, []any, bool:
				default:
					if s.names.HasName(k) {
						s.left[LeftNonString]++
					}
				}
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	if !s.names.MayHold(b) {
		return
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if d.Decode(&v) == nil {
		walk(v)
	}
}

// text replaces credentials of known formats, e-mail addresses, home
// directories' user names and random-looking tokens in v, and counts
// what it left that may be secret.
func (s *scrubber) text(v string) string {
	out := s.replace(v)
	if out != v || len(v) >= 9 {
		redact.Unrecognised(out, func(kind string) { s.left[kind]++ })
	}
	return out
}

func (s *scrubber) replace(v string) string {
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

// setBytes stores b under k as the export does: text when it is UTF-8,
// else base64 under k_b64.
func setBytes(rec map[string]json.RawMessage, k string, b []byte) {
	if !utf8.Valid(b) {
		rec[k+"_b64"] = mustJSON(base64.StdEncoding.EncodeToString(b))
		delete(rec, k)
		return
	}
	rec[k] = mustJSON(string(b))
	delete(rec, k+"_b64")
}

func mustJSON(v any) json.RawMessage {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return bytes.TrimRight(buf.Bytes(), "\n")
}
