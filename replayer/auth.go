package replayer

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/mcpvcr/mcpvcr/internal/authwire"
	"github.com/mcpvcr/mcpvcr/store"
)

// Replay of plain HTTP exchanges: the OAuth dance beside MCP.
//
// A client of an OAuth-protected server gets the recorded 401 with
// WWW-Authenticate from the MCP endpoint (resource_metadata rewritten to
// name the replay server), then the recorded protected-resource metadata
// (resource naming the replay server, every authorization server fronted
// at authwire.FrontPrefix paths), the recorded authorization-server
// metadata (its endpoints pointing back here), registration and token
// answers. The authorization endpoint redirects straight back to the
// client's redirect URI with the live state and the recorded code (and
// RFC 9207 iss, naming the replay server's fronted issuer, where the
// recording had one). Tokens were stored as placeholders; the
// client presents the placeholder it was handed and the MCP matching,
// which never compares credential values, accepts it.
//
// An exchange is matched from a pool across every recorded session: by
// method, path and the request's parameters other than those that differ
// from run to run (state, PKCE values, codes, secrets, the resource URL,
// the redirect URI). Among equal recorded exchanges the k-th live request
// gets the k-th, then the last again.

// exchangeState is what a replay server tracks of plain HTTP exchanges.
// The zero value is ready to use.
type exchangeState struct {
	mu     sync.Mutex            // guards used and missed
	used   map[*store.Stream]int // recorded exchange -> live requests it answered
	uses   map[string]int        // exchange key -> live requests of it (reading a Source)
	missed []string              // "METHOD /path" of live exchanges nothing recorded answered
}

// serveExchange answers a plain HTTP exchange (a request to a well-known
// or fronted path) from the recordings; it reports false for any other
// request, which is MCP.
func (s *Server) serveExchange(w http.ResponseWriter, r *http.Request, body []byte) bool {
	wellKnown := authwire.IsExchange(r.URL.Path)
	if !wellKnown && r.Method != http.MethodGet {
		return false
	}
	origin := "http://" + r.Host
	rec, st := s.findExchange(r, body)
	if !wellKnown && st == nil {
		// Not an exchange the recorder saw (a custom location of
		// protected-resource metadata, named by a challenge, is one):
		// MCP.
		return false
	}
	if st == nil {
		s.logger().Warn("no recorded OAuth exchange matches", "method", r.Method, "url", r.URL.RequestURI())
		ex := &s.http().exchanges
		ex.mu.Lock()
		ex.missed = append(ex.missed, r.Method+" "+r.URL.Path)
		ex.mu.Unlock()
		b, _ := json.Marshal(map[string]string{"error": "invalid_request",
			"error_description": "mcpvcr replay: nothing recorded for " + r.Method + " " + r.URL.Path})
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write(b)
		return true
	}
	front, isFront := authwire.ParseFront(r.URL.Path)
	switch {
	case isFront && front.Endpoint == "authorization_endpoint":
		s.authorizeBack(w, r, rec, st, origin+authwire.FrontPrefix+front.ID)
		return true
	case authwire.DefaultEndpoints[r.URL.Path] == "authorization_endpoint":
		// 2025-03-26: the server's origin is the authorization server.
		s.authorizeBack(w, r, rec, st, origin)
		return true
	}
	var out []byte
	for _, f := range rec.serverFrames()[st.ID] {
		out = append(out, f.Raw...)
	}
	if st.Status == http.StatusOK {
		out = authwire.ReplayAnswer(out, r.URL.Path, origin, st.ResponseHeader.Get("Mcpvcr-Rewritten"), rec.Session.Upstream)
	}
	h := w.Header()
	for k, vs := range st.ResponseHeader {
		// Mcpvcr-* are the recorder's notes (what it rewrote), never sent.
		if !isHop(k) && !strings.HasPrefix(k, "Mcpvcr-") {
			h[k] = append([]string(nil), vs...)
		}
	}
	w.WriteHeader(st.Status)
	_, _ = w.Write(out)
	return true
}

// findExchange picks the recorded exchange that answers r.
func (s *Server) findExchange(r *http.Request, body []byte) (*recording, *store.Stream) {
	want := authwire.ExchangeKey(r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Get("Content-Type"), body)
	if a := s.atOnce(); a != nil {
		// From the index: the k-th live request of a key takes the k-th
		// recorded exchange of it, then the last again, as below.
		n := 0
		for _, g := range a.count(rowOAuth, want) {
			n += g.Count
		}
		if n == 0 {
			return nil, nil
		}
		ex := &s.http().exchanges
		ex.mu.Lock()
		if ex.uses == nil {
			ex.uses = map[string]int{}
		}
		k := min(ex.uses[want], n-1)
		ex.uses[want]++
		ex.mu.Unlock()
		rec, st, ok := a.pick(rowOAuth, want, nil, k)
		if !ok {
			return nil, nil
		}
		return rec, st
	}
	type cand struct {
		rec *recording
		st  *store.Stream
	}
	var cands []cand
	for _, rec := range s.recordings() {
		for i := range rec.Streams {
			st := &rec.Streams[i]
			if st.Kind != store.HTTPStream || st.Method != r.Method {
				continue
			}
			u, err := url.Parse(st.URL)
			if err != nil || u.Path != r.URL.Path {
				continue
			}
			var c2s []byte
			for j := range rec.Frames {
				if f := &rec.Frames[j]; f.StreamID == st.ID && f.Direction == store.ClientToServer {
					c2s = append(c2s, f.Raw...)
				}
			}
			if authwire.ExchangeKey(st.Method, u.Path, u.RawQuery, st.RequestHeader.Get("Content-Type"), c2s) == want {
				cands = append(cands, cand{rec, st})
			}
		}
	}
	if len(cands) == 0 {
		return nil, nil
	}
	ex := &s.http().exchanges
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if ex.used == nil {
		ex.used = map[*store.Stream]int{}
	}
	pick := cands[len(cands)-1]
	for _, c := range cands {
		if ex.used[c.st] == 0 {
			pick = c
			break
		}
	}
	ex.used[pick.st]++
	return pick.rec, pick.st
}

// authorizeBack answers the browser's visit to a fronted authorization
// endpoint as the recorded one ended (see authwire.AuthorizeBack): a
// redirect to the client's redirect URI with the live state, and the
// recorded parameters or, when the user had logged in in a browser, the
// code the recorded client went on to exchange.
func (s *Server) authorizeBack(w http.ResponseWriter, r *http.Request, rec *recording, st *store.Stream, issuer string) {
	loc, status, ok := authwire.AuthorizeBack(r.URL.Query(), st.ResponseHeader, st.Status, issuer, func() string { return recordedCode(rec, st, r.URL.Path) })
	if !ok {
		http.Error(w, "mcpvcr replay: redirect_uri is missing or not absolute", http.StatusBadRequest)
		return
	}
	http.Redirect(w, r, loc, status)
}

// recordedCode is the code the recorded client exchanged at the token
// endpoint after the authorization request st.
func recordedCode(rec *recording, st *store.Stream, authorizePath string) string {
	tokenPath := strings.TrimSuffix(authorizePath, "authorization_endpoint") + "token_endpoint"
	if authwire.DefaultEndpoints[authorizePath] != "" {
		tokenPath = "/token"
	}
	for i := range rec.Streams {
		t := &rec.Streams[i]
		if t.Kind != store.HTTPStream || t.Opened < st.Opened || !strings.HasPrefix(t.URL, tokenPath) {
			continue
		}
		for j := range rec.Frames {
			f := &rec.Frames[j]
			if f.StreamID != t.ID || f.Direction != store.ClientToServer {
				continue
			}
			if form, err := url.ParseQuery(string(bytes.TrimSpace(f.Raw))); err == nil && form.Get("code") != "" {
				return form.Get("code")
			}
		}
	}
	return "mcpvcr-replay-code"
}

// UnmatchedExchanges returns "METHOD /path" of each plain HTTP exchange
// (OAuth metadata, registration, token, authorization) a live client
// made that no recorded exchange answered; it was answered 404.
func (s *Server) UnmatchedExchanges() []string {
	ex := &s.http().exchanges
	ex.mu.Lock()
	defer ex.mu.Unlock()
	return append([]string(nil), ex.missed...)
}
