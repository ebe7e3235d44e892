package recorder

import (
	"bytes"
	"maps"
	"strings"

	"github.com/mcpvcr/mcpvcr/internal/redact"
	"github.com/mcpvcr/mcpvcr/internal/sse"
	"github.com/mcpvcr/mcpvcr/store"
)

// DefaultRedactedJSON are the JSON member names whose string values are
// stored as placeholders in every recorded frame, at any depth: tool
// arguments such as "password" or "api_key", tokens in results. Names
// compare case-insensitively and without '_' and '-', so apiKey is
// api_key. Replay ignores these values when it matches, so a client that
// sends the real value still matches the recording.
var DefaultRedactedJSON []string = redact.DefaultNames

// RedactLabel is the session label that stores the JSON member names a
// recording redacted on top of DefaultRedactedJSON, one per line ("off"
// when it redacted none), for replay to apply too.
const RedactLabel = store.LabelRedactJSON

// jsonNames returns the JSON member names r redacts.
func (r *Redactor) jsonNames() redact.Names {
	r.namesOnce.Do(func() {
		if r.NoJSON {
			return
		}
		r.names = redact.New(true, r.JSON...)
	})
	return r.names
}

// label sets the redaction label of a session about to be created from
// s: the names r redacts beyond the defaults, or "off".
func (r *Redactor) label(s *store.Session) {
	var v string
	switch {
	case r.NoJSON:
		v = redact.Off
	case len(r.JSON) > 0:
		v = strings.Join(r.JSON, "\n")
	default:
		return
	}
	s.Labels = maps.Clone(s.Labels)
	if s.Labels == nil {
		s.Labels = map[string]string{}
	}
	s.Labels[store.LabelRedactJSON] = v
}

// JSONBody returns body (one JSON text) with the string values of the
// members r redacts replaced by placeholders, the same placeholder for the
// same value as in headers; every other byte is kept. It returns body
// itself when there is nothing to redact.
func (r *Redactor) JSONBody(body []byte) []byte {
	out, _ := r.jsonNames().JSON(body, r.replaceValue)
	return out
}

func (r *Redactor) replaceValue(v string) (string, bool) {
	if v == "" || redact.IsPlaceholder(v) {
		return "", false
	}
	return r.placeholder(v), true
}

// changes reports whether frame would redact an SSE event's data: a
// JSON member data holds is one to redact. A nil Redactor changes
// nothing.
func (r *Redactor) changes(data []byte) bool {
	if r == nil || len(data) == 0 {
		return false
	}
	_, n := r.jsonNames().JSON(data, r.replaceValue)
	return n > 0
}

// mayChange reports whether frame might redact the data of an SSE event
// that b holds whole, each event's data on one line: false means it
// redacts none of them (see redact.Names.MayHold).
func (r *Redactor) mayChange(b []byte) bool {
	return r != nil && r.jsonNames().MayHold(b)
}

// frame redacts f, a derived frame about to be stored: its Data, and its
// Raw (an SSE event is rebuilt around the new data). The slices are
// replaced, never written to: Raw may be what is being forwarded.
func (r *Redactor) frame(f *store.Frame) {
	if f.Comment || len(f.Data) == 0 {
		return
	}
	data, n := r.jsonNames().JSON(f.Data, r.replaceValue)
	if n == 0 {
		return
	}
	if !f.SSE {
		f.Raw, f.Data = data, data
		return
	}
	ev := sse.Event{Raw: f.Raw, BOM: bytes.HasPrefix(f.Raw, []byte("\ufeff"))}.WithData(data)
	f.Raw, f.Data = ev.Raw, ev.Data
}
