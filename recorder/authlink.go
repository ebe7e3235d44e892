package recorder

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"
)

// Which session an OAuth exchange belongs to.
//
// Several clients may go through their OAuth dance through one proxy at
// once. Each exchange is recorded in the session of the client that made
// it, found by what links the steps of one dance, never by which session
// was refused last:
//
//   - the client_id a registration answer handed out, in the
//     authorization and token requests that name it (pre-registered ids
//     are shared by clients, so they link nothing);
//   - the state and the PKCE code_challenge of an authorization request,
//     the code its answer carried, and the code_verifier whose S256 hash
//     is that challenge, in the token request;
//   - the access and refresh tokens a token answer handed out, in the
//     MCP requests that present them (the retried initialize joins the
//     session it was refused in) and in refresh grants;
//   - weakest, the connection: a request on the connection that carried
//     a session's refusal or an exchange of its dance (clients in other
//     processes never share connections; clients in one process may,
//     through a shared pool).
//
// Metadata requests and a first registration on a fresh connection link
// nothing: they go to the oldest refused session whose dance has not
// made that request yet, so that clients refused together each get one
// of each.

// Kinds of link values.
const (
	linkClientID  = "client_id"
	linkState     = "state"
	linkChallenge = "code_challenge"
	linkCode      = "code"
	linkToken     = "access_token"
	linkRefresh   = "refresh_token"
	linkConn      = "conn"
)

// authLinks ties OAuth values to the sessions they were seen in. The
// zero value is ready to use; safe for concurrent use.
type authLinks struct {
	mu sync.Mutex // guards bound and waiting
	// bound maps kind + "\x00" + value to its session. The values stay in
	// memory only.
	bound map[string]*httpSession
	// waiting are the sessions refused for want of authorization whose
	// client has not come back with a token yet, oldest first, with the
	// exchange paths their dance has made.
	waiting []*waitingDance
}

type waitingDance struct {
	hs   *httpSession
	seen map[string]bool
}

// linkKey is one value of a request that may link it to a session.
type linkKey struct{ kind, value string }

// requestKeys returns the values of an OAuth request that may link it to
// its session, strongest first.
func requestKeys(r *http.Request, body []byte) []linkKey {
	params := r.URL.Query()
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == "application/x-www-form-urlencoded" {
		if f, err := url.ParseQuery(string(body)); err == nil {
			for k, vs := range f {
				params[k] = append(params[k], vs...)
			}
		}
	}
	var keys []linkKey
	add := func(kind, v string) {
		if v != "" {
			keys = append(keys, linkKey{kind, v})
		}
	}
	add(linkCode, params.Get("code"))
	if v := params.Get("code_verifier"); v != "" {
		sum := sha256.Sum256([]byte(v))
		add(linkChallenge, base64.RawURLEncoding.EncodeToString(sum[:]))
	}
	add(linkChallenge, params.Get("code_challenge"))
	add(linkRefresh, params.Get("refresh_token"))
	add(linkState, params.Get("state"))
	add(linkClientID, params.Get("client_id"))
	if id, _, ok := r.BasicAuth(); ok {
		id, _ = url.QueryUnescape(id)
		add(linkClientID, id)
	}
	add(linkConn, r.RemoteAddr)
	return keys
}

// lookup returns the session the first bound key names.
func (l *authLinks) lookup(keys []linkKey) *httpSession {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, k := range keys {
		if hs := l.bound[k.kind+"\x00"+k.value]; hs != nil {
			return hs
		}
	}
	return nil
}

// bind ties value to hs.
func (l *authLinks) bind(hs *httpSession, kind, value string) {
	if value == "" {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.bound == nil {
		l.bound = map[string]*httpSession{}
	}
	l.bound[kind+"\x00"+value] = hs
}

// bindAuthorize ties an authorization request's state and challenge to
// hs.
func (l *authLinks) bindAuthorize(hs *httpSession, keys []linkKey) {
	for _, k := range keys {
		if k.kind == linkState || k.kind == linkChallenge {
			l.bind(hs, k.kind, k.value)
		}
	}
}

// bindAnswer ties what a registration or token answer handed out to hs.
func (l *authLinks) bindAnswer(hs *httpSession, body []byte) {
	var a struct {
		ClientID     string `json:"client_id"`
		AccessToken  string `json:"access_token"`
		RefreshToken string `json:"refresh_token"`
	}
	if json.Unmarshal(body, &a) != nil {
		return
	}
	l.bind(hs, linkClientID, a.ClientID)
	l.bind(hs, linkToken, a.AccessToken)
	l.bind(hs, linkRefresh, a.RefreshToken)
}

// refused notes that hs was refused for want of authorization: a dance
// begins (again, for step-up).
func (l *authLinks) refused(hs *httpSession) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, d := range l.waiting {
		if d.hs == hs {
			d.seen = map[string]bool{}
			return
		}
	}
	l.waiting = append(l.waiting, &waitingDance{hs: hs, seen: map[string]bool{}})
}

// authorized notes that hs was answered with a token: its dance is over.
func (l *authLinks) authorized(hs *httpSession) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, d := range l.waiting {
		if d.hs == hs {
			l.waiting = append(l.waiting[:i], l.waiting[i+1:]...)
			return
		}
	}
}

// next returns the oldest waiting session whose dance has not made a
// request to path yet, and notes that it has; nil when none is waiting.
// When every one has, the newest gets it (a client asking again).
func (l *authLinks) next(path string) *httpSession {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.waiting) == 0 {
		return nil
	}
	for _, d := range l.waiting {
		if !d.seen[path] {
			d.seen[path] = true
			return d.hs
		}
	}
	return l.waiting[len(l.waiting)-1].hs
}

// claim notes that hs's dance makes a request to path and reports true,
// if hs is waiting and its dance has not made one yet: a connection's
// link counts only for the request its client is due to make.
func (l *authLinks) claim(hs *httpSession, path string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, d := range l.waiting {
		if d.hs == hs && !d.seen[path] {
			d.seen[path] = true
			return true
		}
	}
	return false
}

// seen notes that hs's dance made a request to path.
func (l *authLinks) seen(hs *httpSession, path string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, d := range l.waiting {
		if d.hs == hs {
			d.seen[path] = true
		}
	}
}

// exchangeSession returns the session a plain HTTP exchange to path
// belongs to: the one its link values name, else the oldest refused
// session whose dance has not made it yet, else the latest conversation,
// else a new session that the client's first MCP request will join.
func (h *HTTP) exchangeSession(ctx context.Context, path string, keys []linkKey) *httpSession {
	var conn []linkKey
	if n := len(keys); n > 0 && keys[n-1].kind == linkConn {
		keys, conn = keys[:n-1], keys[n-1:]
	}
	if hs := h.links.lookup(keys); hs != nil {
		h.links.seen(hs, path)
		return hs
	}
	if hs := h.links.lookup(conn); hs != nil && h.links.claim(hs, path) {
		return hs
	}
	if hs := h.links.next(path); hs != nil {
		return hs
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.lastRefused != nil {
		return h.lastRefused
	}
	return h.latest(ctx)
}

// retrySession returns the session an initialize without a session id
// continues when it presents a token an OAuth exchange of that session
// handed out: the client retrying the request it was refused.
func (h *HTTP) retrySession(r *http.Request) *httpSession {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return nil
	}
	hs := h.links.lookup([]linkKey{{linkToken, strings.TrimSpace(token)}})
	if hs == nil || !hs.joinable() {
		return nil
	}
	return hs
}

// newClient reports whether an initialize r, carrying no credentials,
// comes from another client than the one hs was refused for: that one
// comes back with a token.
func newClient(r *http.Request, hs *httpSession) bool {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return hs.refused && r.Header.Get("Authorization") == ""
}
