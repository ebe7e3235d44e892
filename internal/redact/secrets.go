package redact

import (
	"math"
	"regexp"
	"strings"
)

// The kinds of credential mcpvcr scrub finds by their format, as secret
// scanners (gitleaks, trufflehog) define them, besides KindToken's long
// random-looking runs. Each is replaced by a placeholder, and replay of a
// scrubbed session masks it as a token.
const (
	KindAWSKeyID   = "aws-access-key-id" // AKIA…, ASIA…: 4 letters and 16 more
	KindAWSSecret  = "aws-secret-key"    // 40 base64 characters after an aws…secret/key name
	KindSlack      = "slack-token"       // xoxb-…, xoxp-…, xapp-…: any length
	KindGitHub     = "github-token"      // ghp_, gho_, ghu_, ghs_, ghr_, github_pat_
	KindPrivateKey = "private-key"       // the body of a PEM … PRIVATE KEY block
	KindJWT        = "jwt"               // eyJ….eyJ….signature
	KindGoogleKey  = "google-api-key"    // AIza and 35 more
	KindStripe     = "stripe-key"        // sk_live_…, rk_test_…
	KindOAuthCode  = "oauth-code"        // code=… in a redirect URL or form
	KindKeyword    = "keyword-secret"    // the value after password:, passphrase=, pin:, token=, secret:, api_key=…
)

// SecretKinds are the kinds of credential found by format, in the order
// they are looked for.
func SecretKinds() []string {
	return []string{KindPrivateKey, KindJWT, KindAWSKeyID, KindAWSSecret, KindSlack, KindGitHub, KindGoogleKey, KindStripe, KindOAuthCode, KindKeyword}
}

// secretRule finds one kind: re's group 1 (or the whole match when re
// has no group) is what is replaced.
type secretRule struct {
	kind string
	re   *regexp.Regexp
	// cheap is a substring every match holds (any case when fold), to
	// skip the expression on most strings.
	cheap []string
	fold  bool
}

var secretRules = []secretRule{
	{KindPrivateKey, regexp.MustCompile(`-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----((?s:.*?))-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----`), []string{"PRIVATE KEY"}, false},
	{KindJWT, regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{6,}\.eyJ[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]*`), []string{"eyJ"}, false},
	{KindAWSKeyID, regexp.MustCompile(`\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA)[A-Z0-9]{16}\b`), []string{"A"}, false},
	{KindAWSSecret, regexp.MustCompile(`(?i)aws[A-Za-z0-9_. -]{0,24}?(?:secret|key)[A-Za-z0-9_. -]{0,24}?["']?\s*[:=]\s*["']?([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)`), []string{"aws"}, true},
	{KindSlack, regexp.MustCompile(`\b(?:xox[abposre]-[0-9A-Za-z-]+|xapp-[0-9]-[0-9A-Za-z-]+)`), []string{"xox", "xapp-"}, false},
	{KindGitHub, regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{16,255}|github_pat_[A-Za-z0-9_]{16,255})`), []string{"gh", "github_pat_"}, false},
	{KindGoogleKey, regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}`), []string{"AIza"}, false},
	{KindStripe, regexp.MustCompile(`\b(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{10,}`), []string{"_live_", "_test_"}, false},
	{KindOAuthCode, regexp.MustCompile(`(?:^|[?&#\s;])code=([^&#\s"'<>;]+)`), []string{"code="}, false},
	// A value after a secret's name and ':' or '=' (quotes allowed, as
	// in JSON held in text or a log line), or after "password is".
	{KindKeyword, regexp.MustCompile(`(?i)(?:\b|_)(?:password|passwd|pwd|passphrase|pass|pin|secret|token|api[_-]?key|access[_-]?key|client[_-]?secret|private[_-]?key)(?:["']?[ \t]*[:=][ \t]*["']?|[ \t]+is[ \t]+)([^\s"',;&<>]*[^\s"',;&<>.!?)\]}])`), []string{"pass", "pwd", "pin", "secret", "token", "key"}, true},
}

// keywordKeep are values after a secret's name that are not secrets.
var keywordKeep = map[string]bool{"true": true, "false": true, "null": true, "none": true, "required": true, "redacted": true}

// secrets replaces the credentials of s found by format.
func secrets(s string, replace func(kind, found string) string) string {
	var lower string
	for _, r := range secretRules {
		if !hasAny(s, &lower, r.cheap, r.fold) {
			continue
		}
		s = replaceRule(s, r, replace)
	}
	return s
}

func hasAny(s string, lower *string, subs []string, fold bool) bool {
	if fold && *lower == "" {
		*lower = strings.ToLower(s)
	}
	for _, sub := range subs {
		if fold && strings.Contains(*lower, sub) || !fold && strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

func replaceRule(s string, r secretRule, replace func(kind, found string) string) string {
	locs := r.re.FindAllStringSubmatchIndex(s, -1)
	if locs == nil {
		return s
	}
	var b strings.Builder
	last := 0
	for _, loc := range locs {
		start, end := loc[0], loc[1]
		if len(loc) >= 4 && loc[2] >= 0 {
			start, end = loc[2], loc[3]
		}
		v := s[start:end]
		if v == "" || strings.TrimSpace(v) == "" || IsPlaceholder(strings.TrimSpace(v)) || strings.HasPrefix(v, "{"+KindToken) || strings.Contains(v, "REDACTED-") {
			continue
		}
		if r.kind == KindKeyword && keywordKeep[strings.ToLower(v)] {
			continue
		}
		b.WriteString(s[last:start])
		if r.kind == KindPrivateKey {
			// The body's first and last line breaks stay, so that the
			// block still reads as one.
			lead := len(v) - len(strings.TrimLeft(v, "\r\n\\n"))
			trail := len(v) - len(strings.TrimRight(v, "\r\n\\n"))
			if lead+trail < len(v) {
				b.WriteString(v[:lead])
				b.WriteString(replace(r.kind, v[lead:len(v)-trail]))
				b.WriteString(v[len(v)-trail:])
				last = end
				continue
			}
		}
		b.WriteString(replace(r.kind, v))
		last = end
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// lowerRandom reports whether a run with no upper-case letter looks like
// a key rather than a word or an identifier: letters and digits mixed,
// at least 4 of each, and close to the entropy of random characters. A
// UUID is an identifier and is kept.
func lowerRandom(s string) bool {
	if uuidRE.MatchString(s) {
		return false
	}
	var lower, digit int
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'A' <= c && c <= 'Z':
			return false
		case 'a' <= c && c <= 'z':
			lower++
		case '0' <= c && c <= '9':
			digit++
		}
	}
	return lower >= 4 && digit >= 4 && entropy(s) >= 3.8
}

var uuidRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// entropy is the Shannon entropy of s's bytes, in bits a byte.
func entropy(s string) float64 {
	var n [256]int
	for i := 0; i < len(s); i++ {
		n[s[i]]++
	}
	h := 0.0
	for _, c := range n {
		if c > 0 {
			p := float64(c) / float64(len(s))
			h -= p * math.Log2(p)
		}
	}
	return h
}

// Kinds of value that scrub leaves alone but reports: they may be
// secrets that no format names.
const (
	LeftShortRandom = "short-random-run" // 12 to 23 letters and digits mixed: a short key, a password?
	LeftUUID        = "uuid"             // an identifier, kept
	LeftLongNumber  = "long-number"      // 9 digits or more: an account or card number?
)

// LeftKinds are the kinds Unrecognised reports, in a fixed order.
func LeftKinds() []string { return []string{LeftShortRandom, LeftUUID, LeftLongNumber} }

var (
	leftRunRE = regexp.MustCompile(`[A-Za-z0-9_+/-]{12,}`)
	leftNumRE = regexp.MustCompile(`\b[0-9]{9,}\b`)
)

// Unrecognised calls note for each value of s that Text left alone but
// that may be a secret no format names.
func Unrecognised(s string, note func(kind string)) {
	for _, m := range leftRunRE.FindAllString(s, -1) {
		switch {
		case uuidRE.MatchString(m):
			note(LeftUUID)
		case strings.Contains(m, "REDACTED-") || strings.HasPrefix(m, "user-"):
		case len(m) < 24 && randomLooking(m):
			note(LeftShortRandom)
		}
	}
	for range leftNumRE.FindAllString(s, -1) {
		note(LeftLongNumber)
	}
}
