// Package redact holds the one rule of which JSON members carry secrets,
// shared by the recorder (which stores their string values as
// placeholders) and the replayer (which ignores those values when it
// matches a live client frame with a recorded one, so that a client
// sending the real value still matches).
package redact

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
)

// DefaultNames are the JSON member names whose string values are stored
// as placeholders by default, at any depth of any frame. Names compare
// as Norm writes them.
var DefaultNames = []string{
	"password", "secret", "api_key", "apiKey", "token", "access_token", "refresh_token",
	"client_secret", "authorization", "private_key", "passphrase", "passwd", "pin", "credential",
}

// Off as the only line of the session label store.LabelRedactJSON says
// the recording redacted no JSON members.
const Off = "off"

// Masked is the value a redacted member has when replay compares frames.
const Masked = "REDACTED"

// placeholderRE matches the placeholders the recorder writes.
var placeholderRE = regexp.MustCompile(`^REDACTED-[0-9a-f]{12}$`)

// IsPlaceholder reports whether s is a placeholder the recorder wrote: it
// is kept as it is, so that redacting twice changes nothing.
func IsPlaceholder(s string) bool { return len(s) == 21 && placeholderRE.MatchString(s) }

// Norm returns a member name as names compare: lower case, without '_'
// and '-' (so api_key, apiKey and API-KEY are one name).
func Norm(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		if r != '_' && r != '-' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Names is a set of member names to redact. The zero Names redacts
// nothing; use New.
type Names struct {
	set map[string]bool
	// seen has the bit hashName(name) of every name in set: mayHold
	// looks a key up in set only when its bit is there, which most
	// keys' is not.
	seen *[hashBits / 64]uint64
}

// hashBits is the size of Names.seen: with a few dozen names, a key
// that is none of them sets one of their bits about one time in a
// hundred.
const hashBits = 2048

// hashStep folds b into the hash h of a normalized name.
func hashStep(h uint32, b byte) uint32 { return (h ^ uint32(b)) * 16777619 }

// hashSeed starts the hash of a name.
const hashSeed = 2166136261

// hashName is the hash of a normalized name, as mayHold computes it: its
// bytes last to first.
func hashName(s string) uint32 {
	h := uint32(hashSeed)
	for i := len(s) - 1; i >= 0; i-- {
		h = hashStep(h, s[i])
	}
	return h
}

// add adds the normalized name s.
func (n *Names) add(s string) {
	n.set[s] = true
	h := hashName(s) % hashBits
	n.seen[h/64] |= 1 << (h % 64)
}

// New returns DefaultNames plus extra (unless defaults is false).
func New(defaults bool, extra ...string) Names {
	n := Names{set: map[string]bool{}, seen: new([hashBits / 64]uint64)}
	if defaults {
		for _, s := range DefaultNames {
			n.add(Norm(s))
		}
	}
	for _, s := range extra {
		s = Norm(strings.TrimSpace(s))
		if s == "" || s == Off {
			continue
		}
		n.add(s)
	}
	return n
}

// Empty reports whether n redacts nothing.
func (n Names) Empty() bool { return len(n.set) == 0 }

// Has reports whether the member name key (as written in JSON, escapes
// and all) is one of n.
func (n Names) Has(key []byte) bool {
	if len(n.set) == 0 {
		return false
	}
	name := string(key)
	if bytes.IndexByte(key, '\\') >= 0 {
		if json.Unmarshal(append(append([]byte{'"'}, key...), '"'), &name) != nil {
			return false
		}
	}
	return n.set[Norm(name)]
}

// HasName reports whether name (decoded) is one of n.
func (n Names) HasName(name string) bool { return n.set[Norm(name)] }

// MayHold reports whether raw may hold a member n names, by the cheap
// scan JSON starts with (see mayHold): when it reports false, JSON
// changes nothing in raw. raw may be any text, several JSON values and
// what lies between them: it is false only if no colon in raw follows a
// quoted name of n, so a JSON value that is one piece of raw holds none.
func (n Names) MayHold(raw []byte) bool { return len(n.set) > 0 && n.mayHold(raw) }

// mayHold reports whether raw may hold a member n names: a cheap scan
// over the member names (what precedes each colon), so that most frames
// are not walked. It errs on the side of a walk: a name with escapes, or
// longer than 64 bytes, may hold one.
func (n Names) mayHold(raw []byte) bool {
	var buf [64]byte
	for i := 0; i < len(raw); {
		j := bytes.IndexByte(raw[i:], ':')
		if j < 0 {
			return false
		}
		c := i + j
		i = c + 1
		k := c - 1
		for k >= 0 && (raw[k] == ' ' || raw[k] == '\t' || raw[k] == '\r' || raw[k] == '\n') {
			k--
		}
		if k <= 0 || raw[k] != '"' {
			continue
		}
		// Walk the name back to its opening quote, normalizing it into
		// the end of buf and hashing it last byte first, as hashName.
		at, h := len(buf), uint32(hashSeed)
		start := k - 1
		for ; start >= 0; start-- {
			b := raw[start]
			switch {
			case b == '"':
			case b == '\\' || b >= 0x80:
				return true // an escape, or Unicode, which Norm lowers too
			case b == '_' || b == '-':
				continue
			case at == 0:
				return true // longer than buf
			case 'A' <= b && b <= 'Z':
				b += 'a' - 'A'
				fallthrough
			default:
				at--
				buf[at] = b
				h = hashStep(h, b)
				continue
			}
			break
		}
		if start < 0 {
			continue
		}
		if start > 0 && raw[start-1] == '\\' {
			return true // the quote is escaped: a string's text
		}
		if h %= hashBits; n.seen[h/64]&(1<<(h%64)) != 0 && n.set[string(buf[at:])] {
			return true
		}
	}
	return false
}

// maxEmbed bounds how deep JSON held in a string (in a string...) is
// redacted.
const maxEmbed = 4

// JSON returns raw with the string value of every member n names, at any
// depth, replaced by the JSON string of replace(value); every other byte
// is kept exactly. A string that holds a JSON object or array (a tool
// result's text mirroring its structured content, say) is redacted the
// same way and written back as a string (re-escaped) when it changed.
// replace returning ok false keeps the value. It returns raw itself and 0
// when nothing was replaced, or when raw is not one JSON value (a
// malformed frame is left as it is).
func (n Names) JSON(raw []byte, replace func(string) (string, bool)) ([]byte, int) {
	return n.json(raw, replace, 0)
}

func (n Names) json(raw []byte, replace func(string) (string, bool), depth int) ([]byte, int) {
	if len(n.set) == 0 || !n.mayHold(raw) {
		return raw, 0
	}
	type span struct {
		start, end int
		with       []byte
	}
	var spans []span
	count := 0
	err := jsonrpc.Strings(raw, func(key []byte, start, end int) {
		secret := key != nil && n.Has(key)
		if !secret && (depth >= maxEmbed || !embedsJSON(raw[start:end])) {
			return
		}
		var v string
		if json.Unmarshal(raw[start:end], &v) != nil {
			return
		}
		var r string
		if secret {
			var ok bool
			if r, ok = replace(v); !ok {
				return
			}
			count++
		} else {
			inner, c := n.json([]byte(v), replace, depth+1)
			if c == 0 {
				return
			}
			r, count = string(inner), count+c
		}
		spans = append(spans, span{start, end, marshalString(r)})
	})
	if err != nil || len(spans) == 0 {
		return raw, 0
	}
	size := len(raw)
	for _, s := range spans {
		size += len(s.with) - (s.end - s.start)
	}
	out := make([]byte, 0, size)
	last := 0
	for _, s := range spans {
		out = append(append(out, raw[last:s.start]...), s.with...)
		last = s.end
	}
	return append(out, raw[last:]...), count
}

// embedsJSON reports whether lit, a JSON string literal, may hold a JSON
// object or array holding a member: it starts with { or [ and has an
// escaped quote.
func embedsJSON(lit []byte) bool {
	i := 1
	for i < len(lit) && (lit[i] == ' ' || lit[i] == '\\' && i+1 < len(lit) && (lit[i+1] == 'n' || lit[i+1] == 't' || lit[i+1] == 'r')) {
		if lit[i] == '\\' {
			i++
		}
		i++
	}
	return i < len(lit) && (lit[i] == '{' || lit[i] == '[') && bytes.Contains(lit, []byte(`\"`))
}

// marshalString writes s as a JSON string, without HTML escapes.
func marshalString(s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return bytes.TrimRight(buf.Bytes(), "\n")
}

// Mask replaces, in v (JSON decoded into any), the string value of every
// member n names with Masked, at any depth, and a string that holds JSON
// with such a member by the masked JSON's canonical text. It changes v in
// place and returns it.
func (n Names) Mask(v any) any {
	v, _ = n.mask(v, 0)
	return v
}

func (n Names) mask(v any, depth int) (any, bool) {
	if len(n.set) == 0 {
		return v, false
	}
	changed := false
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if _, ok := e.(string); ok && n.set[Norm(k)] {
				x[k], changed = Masked, true
				continue
			}
			var c bool
			x[k], c = n.mask(e, depth)
			changed = changed || c
		}
	case []any:
		for i, e := range x {
			var c bool
			x[i], c = n.mask(e, depth)
			changed = changed || c
		}
	case string:
		t := strings.TrimSpace(x)
		if depth >= maxEmbed || len(t) < 2 || (t[0] != '{' && t[0] != '[') || !strings.Contains(t, `"`) {
			return v, false
		}
		d := json.NewDecoder(strings.NewReader(t))
		d.UseNumber()
		var inner any
		if d.Decode(&inner) != nil || d.More() {
			return v, false
		}
		if inner, c := n.mask(inner, depth+1); c {
			return jsonrpc.Key(inner), true
		}
	}
	return v, changed
}
