package recorder

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"hash"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/mcpvcr/mcpvcr/internal/authwire"
	"github.com/mcpvcr/mcpvcr/internal/redact"
)

// DefaultRedactedHeaders are the headers whose values are never stored.
var DefaultRedactedHeaders = []string{
	"Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie",
	"X-Api-Key", "Api-Key", "X-Auth-Token", "X-Access-Token",
}

// DefaultRedactedQuery are the query parameters whose values are never
// stored.
var DefaultRedactedQuery = []string{
	"token", "access_token", "refresh_token", "id_token", "api_key", "apikey", "key",
	"secret", "client_secret", "password", "auth", "sig", "signature", "code", "code_verifier",
}

// Redactor replaces credentials with stable placeholders before anything
// is stored. The same value always gets the same placeholder within one
// Redactor, so recorded requests that carried the same token still look
// alike; the placeholder reveals nothing of the value. What is forwarded
// is never redacted. The zero value redacts the defaults and is safe for
// concurrent use.
type Redactor struct {
	// Headers and Query name more header and query parameter names to
	// redact, on top of the defaults. Names compare case-insensitively.
	// Set them (and the defaults) before the Redactor is first used: it
	// remembers what it decided for each header name.
	Headers []string
	Query   []string
	// JSON names more JSON member names whose string values are stored as
	// placeholders in frames, on top of DefaultRedactedJSON.
	JSON []string
	// NoJSON stores frames as sent: no JSON member is redacted (headers,
	// URLs and OAuth bodies still are).
	NoJSON bool

	once      sync.Once
	key       []byte
	macs      sync.Pool // hash.Hash: HMACs keyed with key, for placeholder
	namesOnce sync.Once
	names     redact.Names
	// secret remembers what header decided for each header name, up to
	// maxSecretNames of them: the headers of one client's requests have
	// the same few names every time, and deciding a name (the lists, the
	// suffixes, the secret words) was most of Header's time.
	secretMu sync.RWMutex
	secret   map[string]bool
}

// maxSecretNames bounds Redactor's memory of header names, so that a
// client that sends new names all the time cannot grow it.
const maxSecretNames = 256

// secretWords mark a header or parameter name as a credential.
var secretWords = []string{"token", "secret", "password", "passwd", "apikey", "api-key", "api_key", "credential"}

// Placeholder returns the placeholder r stores in place of v: the same
// for the same v, within r.
func (r *Redactor) Placeholder(v string) string { return r.placeholder(v) }

func (r *Redactor) placeholder(v string) string {
	r.once.Do(func() {
		r.key = make([]byte, 32)
		_, _ = rand.Read(r.key)
	})
	m, _ := r.macs.Get().(hash.Hash)
	if m == nil {
		m = hmac.New(sha256.New, r.key)
	} else {
		m.Reset()
	}
	m.Write([]byte(v))
	var sum [sha256.Size]byte
	p := "REDACTED-" + hex.EncodeToString(m.Sum(sum[:0])[:6])
	r.macs.Put(m)
	return p
}

// header reports whether the values of header name are stored redacted.
func (r *Redactor) header(name string) bool {
	r.secretMu.RLock()
	secret, known := r.secret[name]
	r.secretMu.RUnlock()
	if known {
		return secret
	}
	secret = r.decideHeader(name)
	r.secretMu.Lock()
	if r.secret == nil {
		r.secret = map[string]bool{}
	}
	if len(r.secret) < maxSecretNames {
		r.secret[name] = secret
	}
	r.secretMu.Unlock()
	return secret
}

// decideHeader is header without the memory of names.
func (r *Redactor) decideHeader(name string) bool {
	if secretHeaderSuffix(name) {
		return true
	}
	for _, h := range DefaultRedactedHeaders {
		if strings.EqualFold(h, name) {
			return true
		}
	}
	for _, h := range r.Headers {
		if strings.EqualFold(h, name) {
			return true
		}
	}
	return looksSecret(name) || secretHeaderWord(name)
}

// secretHeaderWords mark a header name as a credential when one of the
// words its '-' and '_' separate is one of them: X-Custom-Auth,
// Authentication, X-Forwarded-Authorization, X-Goog-Iap-Jwt-Assertion,
// X-Hub-Signature-256, X-Client-Cert. WWW-Authenticate (a challenge,
// which replay needs) has none of them.
var secretHeaderWords = []string{"auth", "authentication", "authorization", "jwt", "signature", "sig", "cert", "certificate", "assertion", "cookie", "credentials", "passcode", "apikey"}

func secretHeaderWord(name string) bool {
	for w := range strings.FieldsFuncSeq(name, func(r rune) bool { return r == '-' || r == '_' }) {
		for _, s := range secretHeaderWords {
			if strings.EqualFold(w, s) {
				return true
			}
		}
	}
	return false
}

func (r *Redactor) param(name string) bool {
	for _, q := range DefaultRedactedQuery {
		if strings.EqualFold(q, name) {
			return true
		}
	}
	for _, q := range r.Query {
		if strings.EqualFold(q, name) {
			return true
		}
	}
	return looksSecret(name)
}

// secretHeaderSuffix reports whether a header name ends in -Key, -Secret
// or -Token (any case, '_' as well as '-'), as Ocp-Apim-Subscription-Key
// and X-Client-Secret do.
func secretHeaderSuffix(name string) bool {
	for _, suf := range []string{"key", "secret", "token"} {
		if len(name) > len(suf) && strings.EqualFold(name[len(name)-len(suf):], suf) {
			if c := name[len(name)-len(suf)-1]; c == '-' || c == '_' {
				return true
			}
		}
	}
	return false
}

func looksSecret(name string) bool {
	var buf [64]byte
	lower, ok := lowerASCII(buf[:0], name)
	if !ok {
		lower = []byte(strings.ToLower(name))
	}
	for _, w := range secretWords {
		if bytes.Contains(lower, []byte(w)) {
			return true
		}
	}
	return false
}

// lowerASCII appends name in lower case to dst, which it does only for an
// ASCII name that fits dst's capacity (ok false otherwise): every header
// of every exchange is looked at, and a lower-case copy on the heap made
// nine allocations an exchange.
func lowerASCII(dst []byte, name string) (lower []byte, ok bool) {
	if len(name) > cap(dst) {
		return nil, false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= utf8.RuneSelf:
			return nil, false
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst, true
}

// Header returns a copy of h with credential values replaced. For
// Authorization-style values the scheme ("Bearer", "Basic") is kept.
func (r *Redactor) Header(h http.Header) http.Header {
	if h == nil {
		return nil
	}
	out := make(http.Header, len(h))
	n := 0
	for _, vs := range h {
		n += len(vs)
	}
	vals := make([]string, 0, n) // one array for the values of every key
	for k, vs := range h {
		if !r.header(k) {
			start := len(vals)
			vals = append(vals, vs...)
			out[k] = vals[start:len(vals):len(vals)]
			continue
		}
		red := make([]string, len(vs))
		for i, v := range vs {
			if _, rest, _ := strings.Cut(v, " "); redact.IsPlaceholder(v) || redact.IsPlaceholder(rest) {
				red[i] = v // stored before (mcpvcr scrub of a recording)
				continue
			}
			if scheme, rest, ok := strings.Cut(v, " "); ok && (strings.EqualFold(k, "Authorization") || strings.EqualFold(k, "Proxy-Authorization")) {
				red[i] = scheme + " " + r.placeholder(rest)
			} else {
				red[i] = r.placeholder(v)
			}
		}
		out[k] = red
	}
	return out
}

// URL returns raw with credential query values and any userinfo password
// replaced. A raw URL that does not parse is returned whole as a
// placeholder, since it cannot be inspected.
func (r *Redactor) URL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return r.placeholder(raw)
	}
	if u.User != nil {
		if pw, has := u.User.Password(); has && !redact.IsPlaceholder(pw) {
			u.User = url.UserPassword(u.User.Username(), r.placeholder(u.User.String()))
		}
	}
	if u.RawQuery != "" {
		parts := strings.Split(u.RawQuery, "&")
		changed := false
		for i, p := range parts {
			k, v, ok := strings.Cut(p, "=")
			name, err := url.QueryUnescape(k)
			if err != nil {
				name = k
			}
			if ok && r.param(name) && !redact.IsPlaceholder(v) {
				parts[i] = k + "=" + r.placeholder(v)
				changed = true
			}
		}
		if changed {
			u.RawQuery = strings.Join(parts, "&")
		}
	}
	return u.String()
}

// Args redacts a command line: values of arguments and flags whose names
// look like credentials.
func (r *Redactor) Args(argv []string) []string {
	out := make([]string, len(argv))
	hideNext := false
	for i, a := range argv {
		switch {
		case hideNext:
			out[i], hideNext = r.placeholder(a), false
		case strings.Contains(a, "://"):
			out[i] = r.URL(a)
		case strings.HasPrefix(a, "-") && strings.Contains(a, "="):
			k, v, _ := strings.Cut(a, "=")
			if secretFlag(k) || r.param(strings.TrimLeft(k, "-")) || r.header(strings.TrimLeft(k, "-")) {
				out[i] = k + "=" + r.placeholder(v)
			} else {
				out[i] = a
			}
		case strings.Contains(a, "="):
			k, v, _ := strings.Cut(a, "=")
			if r.param(strings.TrimLeft(k, "-")) || r.header(strings.TrimLeft(k, "-")) {
				out[i] = k + "=" + r.placeholder(v)
			} else {
				out[i] = a
			}
		case secretFlag(a) || strings.HasPrefix(a, "-") && (r.param(strings.TrimLeft(a, "-")) || r.header(strings.TrimLeft(a, "-"))):
			out[i], hideNext = a, true
		default:
			out[i] = a
		}
	}
	return out
}

// secretFlags are command-line flags whose value is a credential though
// their names do not say "password" or "token": -p VALUE (mysql, psql
// wrappers, sshpass), --pass, --pwd, --passphrase, --pin.
var secretFlags = []string{"-p", "--pass", "-pass", "--pwd", "--passphrase", "-passphrase", "--pin", "--passcode", "--passwd"}

// secretFlag reports whether the argument a (or its name before '=') is
// one of secretFlags.
func secretFlag(a string) bool {
	for _, f := range secretFlags {
		if a == f || len(f) > 2 && strings.EqualFold(a, f) {
			return true
		}
	}
	return false
}

// bodyParam reports whether a body field carries a credential: one of
// authwire.SecretParams or a parameter named by Query. Names like
// token_type or token_endpoint_auth_method are kept: they are not
// secrets, and a replayed token answer needs them.
func (r *Redactor) bodyParam(name string) bool {
	for _, p := range authwire.SecretParams {
		if p == name {
			return true
		}
	}
	for _, q := range r.Query {
		if strings.EqualFold(q, name) {
			return true
		}
	}
	return false
}

// Body returns a copy of an HTTP exchange body with its credentials
// (tokens, codes, client secrets, code_verifier, registration access
// tokens) replaced by placeholders: the string values of those top-level
// members of a JSON object, and those parameters of a form. A token gets
// the same placeholder here as in an Authorization header, so that replay
// can hand it out and recognise it. Other bodies are returned unchanged.
func (r *Redactor) Body(contentType string, body []byte) []byte {
	mt, _, _ := mime.ParseMediaType(contentType)
	switch {
	case mt == "application/x-www-form-urlencoded":
		out := string(body)
		for _, p := range authwire.SecretParams {
			out = authwire.MapForm(out, p, r.placeholder)
		}
		for _, q := range r.Query {
			out = authwire.MapForm(out, q, r.placeholder)
		}
		return []byte(out)
	case strings.HasSuffix(mt, "json") || (mt == "" && bytes.HasPrefix(bytes.TrimSpace(body), []byte("{"))):
		out, err := authwire.EditJSON(body, func(key string, v json.RawMessage) (json.RawMessage, bool) {
			var s string
			if !r.bodyParam(key) || json.Unmarshal(v, &s) != nil {
				return nil, false
			}
			b, _ := json.Marshal(r.placeholder(s))
			return b, true
		})
		if err != nil {
			return body
		}
		return out
	}
	return body
}
