package diff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/internal/jsonval"
	"github.com/mcpvcr/mcpvcr/internal/redact"
	"github.com/mcpvcr/mcpvcr/internal/rules"
	"github.com/mcpvcr/mcpvcr/store"
)

// NoiseLabel is the session label that holds a session's noise mask: the
// paths whose differences Diff and Verify ignore for it, one per line, as
// Verify's learning stores them. Labels travel with the session in JSONL
// exports.
const NoiseLabel = store.LabelNoise

// Noise says which differences do not count. The defaults always apply:
// JSON-RPC ids, progress tokens, cursors (cursor, nextCursor),
// requestState, session, task and elicitation ids, W3C trace context in
// _meta, timestamps (RFC 3339 date and time, also inside longer text) and
// UUIDs are replaced by placeholders before comparing; notifications and
// server requests are compared per method whatever their interleaving; a
// tools, prompts or resources list is compared element by element by
// name (or uri), whatever its order; text content holding a JSON object
// or array is compared as JSON, and a text item that only repeats the
// result's structuredContent is not compared twice. Paths name more.
// The zero Noise holds the defaults only.
type Noise struct {
	// Paths are ignored on top of the defaults.
	Paths []Path
}

// ParseNoise parses the lines of a NoiseLabel value (blank lines and
// lines starting with "//" are skipped).
func ParseNoise(s string) (Noise, error) {
	ps, err := rules.ParseLines(s)
	if err != nil {
		return Noise{}, err
	}
	var n Noise
	for _, p := range ps {
		n.Paths = append(n.Paths, Path{Scope: p.Scope, segs: p.Segs})
	}
	return n, nil
}

// SessionNoise returns the noise mask stored with s.
func SessionNoise(s store.Session) (Noise, error) {
	n, err := ParseNoise(s.Labels[NoiseLabel])
	if err != nil {
		return Noise{}, fmt.Errorf("session %d label %s: %w", s.ID, NoiseLabel, err)
	}
	return n, nil
}

// String returns the paths one per line, the form of a NoiseLabel value.
func (n Noise) String() string {
	var lines []string
	for _, p := range n.Paths {
		lines = append(lines, p.String())
	}
	return strings.Join(lines, "\n")
}

// With returns n with the paths of m added, without duplicates.
func (n Noise) With(m Noise) Noise {
	out := Noise{Paths: slices.Clone(n.Paths)}
	seen := map[string]bool{}
	for _, p := range out.Paths {
		seen[p.String()] = true
	}
	for _, p := range m.Paths {
		if !seen[p.String()] {
			seen[p.String()] = true
			out.Paths = append(out.Paths, p)
		}
	}
	return out
}

// covers reports whether a path of n covers path in exchange sc.
func (n Noise) covers(sc scope, path []pathSeg) bool {
	for _, p := range n.Paths {
		if p.covers(sc, path) {
			return true
		}
	}
	return false
}

// Placeholders that replace volatile values.
const (
	timestampPlaceholder = "<timestamp>"
	uuidPlaceholder      = "<uuid>"
	// mirrorPlaceholder replaces a text item that repeats structuredContent.
	mirrorPlaceholder = "<structuredContent>"
)

var (
	// timestampRE matches an RFC 3339-like date and time; a date alone
	// (a protocol revision, say) is not volatile.
	timestampRE = regexp.MustCompile(`\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?`)
	uuidRE      = regexp.MustCompile(`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`)
)

// volatileKeys are object keys whose string values are opaque tokens that
// differ between runs; only their presence counts.
var volatileKeys = map[string]string{
	"cursor":        "<cursor>",
	"nextCursor":    "<cursor>",
	"requestState":  "<requestState>",
	"requestId":     "<requestId>",
	"sessionId":     "<sessionId>",
	"taskId":        "<taskId>",
	"elicitationId": "<elicitationId>",
}

// secretNames are the JSON members the recorder stores as placeholders
// (a different one in each recording), and redactedPlaceholder what they
// compare as.
var secretNames = redact.New(true)

const redactedPlaceholder = "<redacted>"

// decodeJSON decodes raw keeping numbers as json.Number; nil if raw is
// not JSON.
func decodeJSON(raw []byte) (any, bool) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, false
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil || d.More() {
		return nil, false
	}
	return v, true
}

// Key returns the canonical text of raw after the default noise rules
// (see Compare): two JSON values that differ only by noise have the same
// Key. Bytes that are not JSON are their own key.
func Key(raw []byte) string { return jsonrpc.Key(normalize(raw)) }

// normalize decodes raw and applies the default noise rules; it returns
// the raw text as a string when raw is not JSON.
func normalize(raw []byte) any {
	v, ok := decodeJSON(raw)
	if !ok {
		return string(bytes.TrimSpace(raw))
	}
	return normalizeValue(v)
}

// keyedList is a JSON array whose elements are objects identified by a
// field (see keyedFields), compared by that identity rather than by
// position. Keys are "field=value".
type keyedList map[string]any

func normalizeValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return normalizeObject(x)
	case []any:
		for i := range x {
			x[i] = normalizeValue(x[i])
		}
		if kl, ok := keyed(x); ok {
			return kl
		}
		return x
	case string:
		return scrub(x)
	case json.Number:
		if f, err := strconv.ParseFloat(string(x), 64); err == nil {
			return f
		}
		return string(x)
	}
	return v
}

func normalizeObject(m map[string]any) any {
	jsonval.DropVolatileMeta(m)
	for k, v := range m {
		if _, isStr := v.(string); isStr && secretNames.HasName(k) {
			// Stored as a placeholder of its recording's own: never
			// compared.
			m[k] = redactedPlaceholder
			continue
		}
		if ph, ok := volatileKeys[k]; ok {
			if _, isStr := v.(string); isStr {
				m[k] = ph
				continue
			}
		}
		if s, ok := v.(string); ok && k == "text" {
			if j, ok := embeddedJSON(s); ok {
				m[k] = normalizeValue(j)
				continue
			}
		}
		m[k] = normalizeValue(v)
	}
	markMirrors(m)
	return m
}

// scrub replaces timestamps and UUIDs inside s with placeholders.
func scrub(s string) string {
	if len(s) >= 16 && strings.ContainsAny(s, ":") {
		s = timestampRE.ReplaceAllString(s, timestampPlaceholder)
	}
	if len(s) >= 36 {
		s = uuidRE.ReplaceAllString(s, uuidPlaceholder)
	}
	return s
}

// embeddedJSON parses s when it holds a JSON object or array.
func embeddedJSON(s string) (any, bool) {
	t := strings.TrimSpace(s)
	if len(t) < 2 || (t[0] != '{' && t[0] != '[') {
		return nil, false
	}
	return decodeJSON([]byte(t))
}

// markMirrors replaces the text of content items that repeat the
// object's structuredContent (a tool result's backward-compatible text)
// with a placeholder, so that a change is reported once.
func markMirrors(m map[string]any) {
	sc, ok := m["structuredContent"]
	if !ok {
		return
	}
	content, ok := m["content"].([]any)
	if !ok {
		return
	}
	want := jsonrpc.Key(sc)
	for _, item := range content {
		it, ok := item.(map[string]any)
		if !ok || it["type"] != "text" {
			continue
		}
		if t, isObj := it["text"].(map[string]any); isObj && jsonrpc.Key(t) == want {
			it["text"] = mirrorPlaceholder
		}
	}
}

// keyed turns a list of objects that all carry a distinct identifying
// field into a keyedList.
func keyed(list []any) (keyedList, bool) {
	if len(list) == 0 {
		return nil, false
	}
	for _, field := range keyedFields {
		kl := keyedList{}
		for _, e := range list {
			obj, ok := e.(map[string]any)
			if !ok {
				return nil, false
			}
			id, ok := obj[field].(string)
			if !ok {
				break
			}
			k := field + "=" + id
			if _, dup := kl[k]; dup || strings.ContainsAny(id, "]") {
				break
			}
			kl[k] = obj
		}
		if len(kl) == len(list) {
			return kl, true
		}
	}
	return nil, false
}

// denormalize turns keyed lists back into arrays (in key order), for
// showing values.
func denormalize(v any) any {
	switch x := v.(type) {
	case keyedList:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		out := make([]any, 0, len(x))
		for _, k := range keys {
			out = append(out, denormalize(x[k]))
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = denormalize(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = denormalize(e)
		}
		return out
	}
	return v
}
