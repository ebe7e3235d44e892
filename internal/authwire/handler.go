package authwire

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/mcpvcr/mcpvcr/internal/mcpwire"
	"github.com/mcpvcr/mcpvcr/internal/replayindex"
	"github.com/mcpvcr/mcpvcr/internal/termtext"
	"github.com/mcpvcr/mcpvcr/store"
)

// Handler is the OAuth dance beside a replayed MCP server: it answers
// the plain HTTP exchanges of the recordings (protected-resource and
// authorization-server metadata, registration, token, authorization) as
// recorded, and hands every other request to Next, its WWW-Authenticate
// challenges naming this server (ChallengeWriter).
//
// A client of an OAuth-protected server gets the recorded 401 from the
// MCP endpoint, then the recorded protected-resource metadata (resource
// naming the replay server, every authorization server fronted at
// FrontPrefix paths), the recorded authorization-server metadata (its
// endpoints pointing back here), registration and token answers. The
// authorization endpoint redirects straight back to the client's
// redirect URI (see AuthorizeBack). Tokens were stored as placeholders;
// the client presents the placeholder it was handed and the MCP
// matching, which never compares credential values, accepts it.
//
// An exchange is matched from a pool across every recorded session by
// ExchangeKey: among equal recorded exchanges the k-th live request gets
// the k-th, then the last again. A request to a well-known or fronted
// path that nothing recorded answers is answered 404 and noted (see
// Unmatched); any other request is MCP, for Next.
//
// Make one with NewHandler or LoadHandler. A Handler is safe for
// concurrent use.
type Handler struct {
	// Next serves every request that is not an exchange: the MCP replay.
	Next   http.Handler
	logger *slog.Logger
	ix     replayindex.Exchanges
	load   func(ctx context.Context, id int64) (*store.Recording, error)

	mu     sync.Mutex                 // guards uses, missed and recs
	uses   map[string]int             // exchange key -> live requests of it
	missed []string                   // "METHOD /path" of live exchanges nothing recorded answered
	recs   map[int64]*store.Recording // sessions read for exchanges
}

// oauthTable is the cassette's cache table of the exchanges, and
// oauthVersion names its layout.
const (
	oauthTable   = "oauth exchanges"
	oauthVersion = "o1"
	rowExchange  = "exchange"
)

// NewHandler returns a Handler answering from recs, held in memory, in
// front of next. logger, if not nil, hears about exchanges nothing
// recorded answers.
func NewHandler(next http.Handler, recs []*store.Recording, logger *slog.Logger) *Handler {
	byID := map[int64]*store.Recording{}
	var rows []replayindex.Row
	for _, rec := range recs {
		byID[rec.Session.ID] = rec
		rows = appendRows(rows, rec)
	}
	h := newHandler(next, replayindex.MemExchanges(rows), logger)
	h.load = func(_ context.Context, id int64) (*store.Recording, error) {
		if rec := byID[id]; rec != nil {
			return rec, nil
		}
		return nil, fmt.Errorf("no session %d", id)
	}
	return h
}

// LoadHandler returns a Handler answering from sessions ids of db, in
// front of next. It reads the index of their exchanges stored in db, or
// builds it (one session at a time; of a cassette without exchanges,
// from its session rows alone) and stores it when db can be written and
// every session has ended, so that the next replay reads only the
// sessions of the exchanges it answers and starts in a time that does
// not grow with the cassette. The caller keeps db open while the
// Handler is in use. logger, if not nil, hears about exchanges nothing
// recorded answers and an index that could not be stored.
func LoadHandler(ctx context.Context, next http.Handler, db *store.DB, ids []int64, logger *slog.Logger) (*Handler, error) {
	name := oauthVersion + " " + replayindex.Name("oauth", ids)
	ix, ok, err := replayindex.OpenExchanges(ctx, db, oauthTable, name)
	if err != nil {
		return nil, err
	}
	if !ok {
		rows, complete, err := buildRows(ctx, db, ids)
		if err != nil {
			return nil, err
		}
		ix = replayindex.MemExchanges(rows)
		if complete {
			if err := replayindex.PutExchanges(ctx, db, oauthTable, name, rows); err != nil && logger != nil {
				logger.Info("the OAuth exchange index could not be stored in the cassette; it will be built again next time", "err", err)
			}
		}
	}
	h := newHandler(next, ix, logger)
	h.load = func(ctx context.Context, id int64) (*store.Recording, error) { return db.Recording(ctx, id) }
	return h, nil
}

// buildRows returns the rows of the exchanges of sessions ids of db,
// reading one session at a time (none when db holds no exchange), and
// whether every session has ended.
func buildRows(ctx context.Context, db *store.DB, ids []int64) ([]replayindex.Row, bool, error) {
	sum, err := db.SummarizeHTTP(ctx)
	if err != nil {
		return nil, false, err
	}
	if sum.Exchanges == 0 {
		ss, err := db.Sessions(ctx)
		if err != nil {
			return nil, false, err
		}
		ended := map[int64]bool{}
		for _, s := range ss {
			ended[s.ID] = !s.EndedAt.IsZero()
		}
		complete := true
		for _, id := range ids {
			complete = complete && ended[id]
		}
		return nil, complete, nil
	}
	var rows []replayindex.Row
	complete := true
	for _, id := range ids {
		rec, err := db.Recording(ctx, id)
		if err != nil {
			return nil, false, err
		}
		complete = complete && !rec.Session.EndedAt.IsZero()
		rows = appendRows(rows, rec)
	}
	return rows, complete, nil
}

func newHandler(next http.Handler, ix replayindex.Exchanges, logger *slog.Logger) *Handler {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Handler{Next: next, logger: logger, ix: ix, uses: map[string]int{}, recs: map[int64]*store.Recording{}}
}

// appendRows appends a row for each plain HTTP exchange of rec.
func appendRows(rows []replayindex.Row, rec *store.Recording) []replayindex.Row {
	for i := range rec.Streams {
		st := &rec.Streams[i]
		if st.Kind != store.HTTPStream {
			continue
		}
		u, err := url.Parse(st.URL)
		if err != nil {
			continue
		}
		var c2s []byte
		for j := range rec.Frames {
			if f := &rec.Frames[j]; f.StreamID == st.ID && f.Direction == store.ClientToServer {
				c2s = append(c2s, f.Raw...)
			}
		}
		key := ExchangeKey(st.Method, u.Path, u.RawQuery, st.RequestHeader.Get("Content-Type"), c2s)
		rows = append(rows, replayindex.Row{Kind: rowExchange, Key: key, Ord: int64(len(rows)), Session: rec.Session.ID, Stream: st.ID})
	}
	return rows
}

// ServeHTTP answers r as recorded when it is an exchange, and hands it
// to Next otherwise.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.serveExchange(w, r) {
		return
	}
	h.Next.ServeHTTP(&ChallengeWriter{ResponseWriter: w, Origin: "http://" + r.Host}, r)
}

// serveExchange answers r when it is a plain HTTP exchange (a request to
// a well-known or fronted path, or a GET a recorded exchange answers);
// it reports false for any other request, which is MCP.
func (h *Handler) serveExchange(w http.ResponseWriter, r *http.Request) bool {
	wellKnown := IsExchange(r.URL.Path)
	if !wellKnown && r.Method != http.MethodGet {
		return false
	}
	var body []byte
	if r.Body != nil {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return true // the client went away
		}
		body = b
		r.Body = io.NopCloser(bytes.NewReader(body)) // for Next
	}
	rec, st := h.find(r, body)
	if !wellKnown && st == nil {
		// Not an exchange the recorder saw (a custom location of
		// protected-resource metadata, named by a challenge, is one):
		// MCP.
		return false
	}
	if st == nil {
		h.logger.Warn("no recorded OAuth exchange matches", "method", r.Method, "url", r.URL.RequestURI())
		h.mu.Lock()
		h.missed = append(h.missed, r.Method+" "+r.URL.Path)
		h.mu.Unlock()
		b, _ := json.Marshal(map[string]string{"error": "invalid_request",
			"error_description": "mcpvcr replay: nothing recorded for " + r.Method + " " + r.URL.Path})
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write(b)
		return true
	}
	origin := "http://" + r.Host
	front, isFront := ParseFront(r.URL.Path)
	switch {
	case isFront && front.Endpoint == "authorization_endpoint":
		authorizeBack(w, r, rec, st, origin+FrontPrefix+front.ID)
		return true
	case DefaultEndpoints[r.URL.Path] == "authorization_endpoint":
		// 2025-03-26: the server's origin is the authorization server.
		authorizeBack(w, r, rec, st, origin)
		return true
	}
	var out []byte
	for i := range rec.Frames {
		if f := &rec.Frames[i]; f.StreamID == st.ID && f.Direction == store.ServerToClient {
			out = append(out, f.Raw...)
		}
	}
	if st.Status == http.StatusOK {
		out = ReplayAnswer(out, r.URL.Path, origin, st.ResponseHeader.Get("Mcpvcr-Rewritten"), rec.Session.Upstream)
	}
	hd := w.Header()
	for k, vs := range st.ResponseHeader {
		// Mcpvcr-* are the recorder's notes (what it rewrote), never sent.
		if !mcpwire.HopHeader(k) && !strings.HasPrefix(k, "Mcpvcr-") {
			hd[k] = append([]string(nil), vs...)
		}
	}
	w.WriteHeader(st.Status)
	_, _ = w.Write(out)
	return true
}

// find picks the recorded exchange that answers r: the k-th live request
// of a key takes the k-th recorded exchange of it, then the last again.
func (h *Handler) find(r *http.Request, body []byte) (*store.Recording, *store.Stream) {
	want := ExchangeKey(r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Get("Content-Type"), body)
	ctx := r.Context()
	n := 0
	gs, err := h.ix.Groups(ctx, rowExchange, want)
	for _, g := range gs {
		n += g.Count
	}
	if err != nil || n == 0 {
		if err != nil {
			h.logger.Warn("reading the OAuth exchange index failed", "err", err)
		}
		return nil, nil
	}
	h.mu.Lock()
	k := min(h.uses[want], n-1)
	h.uses[want]++
	h.mu.Unlock()
	x, ok, err := h.ix.At(ctx, rowExchange, want, nil, k)
	if err != nil || !ok {
		if err != nil {
			h.logger.Warn("reading the OAuth exchange index failed", "err", err)
		}
		return nil, nil
	}
	rec, err := h.recording(ctx, x.Session)
	if err != nil {
		h.logger.Warn("reading a recorded session failed", "session", x.Session, "err", err)
		return nil, nil
	}
	for i := range rec.Streams {
		if rec.Streams[i].ID == x.Stream {
			return rec, &rec.Streams[i]
		}
	}
	return nil, nil
}

// recording returns session id, read once.
func (h *Handler) recording(ctx context.Context, id int64) (*store.Recording, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if rec := h.recs[id]; rec != nil {
		return rec, nil
	}
	rec, err := h.load(ctx, id)
	if err != nil {
		return nil, err
	}
	h.recs[id] = rec
	return rec, nil
}

// authorizeBack answers the browser's visit to a fronted authorization
// endpoint as the recorded one ended (see AuthorizeBack).
func authorizeBack(w http.ResponseWriter, r *http.Request, rec *store.Recording, st *store.Stream, issuer string) {
	loc, status, ok := AuthorizeBack(r.URL.Query(), st.ResponseHeader, st.Status, issuer, func() string { return recordedCode(rec, st, r.URL.Path) })
	if !ok {
		http.Error(w, "mcpvcr replay: redirect_uri is missing or not absolute", http.StatusBadRequest)
		return
	}
	http.Redirect(w, r, loc, status)
}

// recordedCode is the code the recorded client exchanged at the token
// endpoint after the authorization request st.
func recordedCode(rec *store.Recording, st *store.Stream, authorizePath string) string {
	tokenPath := strings.TrimSuffix(authorizePath, "authorization_endpoint") + "token_endpoint"
	if DefaultEndpoints[authorizePath] != "" {
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

// Unmatched returns "METHOD /path" of each exchange a live client made
// that no recorded exchange answered; it was answered 404.
func (h *Handler) Unmatched() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.missed...)
}

// WriteSummary writes, for people, each exchange no recording answered
// (see Unmatched), escaped for a terminal, and reports whether there was
// none. Write it before the MCP replay's own summary.
func (h *Handler) WriteSummary(out io.Writer) (ok bool) {
	var w strings.Builder
	for _, x := range h.Unmatched() {
		fmt.Fprintf(&w, "replay: unmatched OAuth exchange %s: nothing recorded answers it (answered 404)\n", x)
	}
	io.WriteString(out, termtext.Text(w.String()))
	return w.Len() == 0
}
