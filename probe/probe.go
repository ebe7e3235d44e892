package probe

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/internal/termtext"
	"github.com/mcpvcr/mcpvcr/replayer"
	"github.com/mcpvcr/mcpvcr/store"
)

// Kind is a kind of probe.
type Kind int

// The kinds of probe, in the order they are tried at a request.
const (
	// HeaderMismatch answers a 2026-07-28 tools/call 400 with -32020:
	// the client must list tools again, then retry the call at most once.
	HeaderMismatch Kind = iota + 1
	// EmptyCursor answers a first list request with nextCursor "": in
	// 2026-07-28 a cursor (asked again), in the legacy revisions the end.
	EmptyCursor
	// RepeatedCursor answers a list request with a cursor, then the
	// request for it with the same cursor again: the client must stop.
	RepeatedCursor
	// Session404 answers a legacy Streamable HTTP session's tools/call
	// 404: the client must initialize a new session, then send the call
	// again.
	Session404
	// StringID sends a legacy server request recorded with a number id
	// with that number as a string: the answer must carry it exactly.
	StringID
	// VersionRetry answers a 2026-07-28 server/discover 400 with -32022:
	// the client retries with a version from data.supported, no loop.
	VersionRetry
	// UnknownResultType answers a 2026-07-28 first list page with a
	// resultType no revision defines: the client does not take it as a
	// finished page (it does not follow its nextCursor).
	UnknownResultType
	// Batch sends a 2025-03-26 server request in a JSON-RPC batch with a
	// ping: the client answers both.
	Batch
	// StreamClosed answers a 2026-07-28 tools/call with an event stream
	// that ends before its response: the client fails or retries at
	// once, within the Hook's Patience.
	StreamClosed
	// ListenEnded answers a 2026-07-28 subscriptions/listen with a stream
	// the server ends (its final result): the client opens it again.
	ListenEnded
)

// Level is how much a failing verdict weighs: an Error breaks a MUST,
// a Warning a SHOULD (or a rule no revision states in words).
type Level int

// The levels.
const (
	Error Level = iota
	Warning
)

// String returns "error" or "warning".
func (l Level) String() string {
	if l == Warning {
		return "warning"
	}
	return "error"
}

// spec is one kind of probe: its name, where it may be placed, the rule
// it judges, how it changes an answer and how it judges.
type spec struct {
	name string
	// allowed reports whether the kind may be placed in a session of
	// revision rev over transport tr.
	allowed func(rev string, tr store.Transport) bool
	// rule is the rule at rev: its words, the specification section and
	// its level.
	rule func(rev string) (words, section string, level Level)
	// place places the probe at req, the live request at p, returning
	// nil when req is no place for it.
	place func(p *replayer.Point, rec *store.Recording, req *request) (*Probe, replayer.Action)
	// follow answers req, a request after pr was placed, when pr has to
	// (a page the probe's cursor asked for); false leaves it to replay.
	follow func(pr *Probe, rec *store.Recording, req *request) (replayer.Action, bool)
	// judge judges pr by after, the client's requests after it.
	judge func(pr *Probe, after []*request) (string, Verdict)
}

var specs = map[Kind]*spec{}

// Kinds returns every kind, in order.
func Kinds() []Kind {
	return []Kind{HeaderMismatch, EmptyCursor, RepeatedCursor, Session404, StringID, VersionRetry,
		UnknownResultType, Batch, StreamClosed, ListenEnded}
}

// String returns the kind's name, as --probe takes it.
func (k Kind) String() string {
	if s := specs[k]; s != nil {
		return s.name
	}
	return fmt.Sprintf("probe(%d)", int(k))
}

// Allowed reports whether k may be placed in a session of revision rev
// over transport tr.
func (k Kind) Allowed(rev string, tr store.Transport) bool {
	s := specs[k]
	return s != nil && s.allowed(rev, tr)
}

// ParseKinds reads a comma-separated list of kind names ("" or "all":
// every kind).
func ParseKinds(list string) ([]Kind, error) {
	if list == "" || list == "all" {
		return Kinds(), nil
	}
	var out []Kind
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		found := false
		for _, k := range Kinds() {
			if k.String() == name {
				out, found = append(out, k), true
				break
			}
		}
		if !found {
			var names []string
			for _, k := range Kinds() {
				names = append(names, k.String())
			}
			return nil, fmt.Errorf("no probe %q (the probes: %s)", name, strings.Join(names, ", "))
		}
	}
	return out, nil
}

// lineMethod is the method of a request that came as a stdio line.
const lineMethod = "line"

// request is one live client request as probes see it.
type request struct {
	method string // the HTTP method, or lineMethod
	sid    string // its Mcp-Session-Id, "" for none
	body   []byte
	msg    jsonrpc.Message
	at     time.Time // when it arrived, on replay's clock
	routed bool      // AtRequest was called for it
	// routedBody, when set, is the body replay read instead of body.
	routedBody []byte
}

// sent reports whether r is a message the client sent (a POST, or a
// line over stdio), not a GET or DELETE of HTTP.
func (r *request) sent() bool { return r.method == http.MethodPost || r.method == lineMethod }

// describe names r for the report.
func (r *request) describe() string {
	d := r.method
	if r.msg.Method != "" {
		d += " " + r.msg.Method
	}
	if name := str(r.msg.Params, "name"); name != "" && r.msg.Method == "tools/call" {
		d += " " + name
	}
	if c, ok := cursor(r); ok {
		d += fmt.Sprintf(" (cursor %q)", c)
	}
	if r.msg.Method == "initialize" && r.sid == "" {
		d += " (a new session)"
	}
	return d
}

// Probe is one probe placed: where, what it changed and the rule it
// judges.
type Probe struct {
	Kind Kind
	// Session is the recorded session replayed from; Revision and
	// Transport are its.
	Session   int64
	Revision  string
	Transport store.Transport
	// Rule is the rule's words, Section the specification section, Level
	// what a failing verdict weighs.
	Rule    string
	Section string
	Level   Level
	// Request names the live request it answered; What says how.
	Request string
	What    string

	at     int      // index in Hook.reqs of the request it answered
	req    *request // that request
	sid    string   // the live session id, legacy
	cursor string   // the cursor the probe sent
	pages  int      // pages it answered since
	// live and event, when event is set: the recorded answer event of
	// the live session live still to be rewritten (a legacy first page).
	live     *replayer.Session
	event    *store.Frame
	again    int           // identical calls the recording has after the probed one
	patience time.Duration // the Hook's Patience when it was placed
}

// Verdict is how a client fared under one probe.
type Verdict int

// The verdicts.
const (
	VerdictPass        Verdict = iota + 1 // the client did what the rule asks
	VerdictFail                           // it did not
	VerdictNotObserved                    // the wire does not show what it did
)

// String returns the verdict as the report prints it.
func (v Verdict) String() string {
	switch v {
	case VerdictPass:
		return "pass"
	case VerdictFail:
		return "fail"
	case VerdictNotObserved:
		return "not observed"
	}
	return "unknown"
}

// Result is a probe and what the client did next.
type Result struct {
	Probe
	Did     string
	Verdict Verdict
}

// Hook is probe replay: a replayer.Hook that places the probes of Kinds
// and notes what the client does. It is safe for concurrent use.
type Hook struct {
	Kinds  []Kind
	Logger *slog.Logger
	// Patience is how long after stream-closed's stream ended the
	// client's next request may come and still show that it saw the end
	// (measured on replay's clock). If zero, DefaultPatience.
	Patience time.Duration

	mu     sync.Mutex
	reqs   []*request
	probes []*Probe
	placed map[Kind]bool
}

// New returns a Hook placing kinds (every kind when none), logging each
// probe placed to logger (nil: nowhere).
func New(kinds []Kind, logger *slog.Logger) *Hook {
	if len(kinds) == 0 {
		kinds = Kinds()
	}
	return &Hook{Kinds: kinds, Logger: logger, placed: map[Kind]bool{}}
}

// Act notes each client request and places probes at requests.
func (h *Hook) Act(p *replayer.Point) replayer.Action {
	if p.Request == nil { // stdio
		switch p.Where {
		case replayer.AtReceive:
			return h.receive(p)
		case replayer.AtBefore:
			return h.before(p)
		}
		return replayer.Action{}
	}
	switch p.Where {
	case replayer.AtArrive:
		return h.note(p)
	case replayer.AtRequest:
		return h.request(p)
	case replayer.AtBefore:
		return h.before(p)
	}
	return replayer.Action{}
}

// before rewrites the recorded event at p when a probe placed in a
// legacy session waits for it.
func (h *Hook) before(p *replayer.Point) replayer.Action {
	if p.Frame == nil || p.Session == nil {
		return replayer.Action{}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, pr := range h.probes {
		if b, ok := rewrite(pr, p); ok {
			return replayer.Action{Replace: b}
		}
	}
	if slices.Contains(h.Kinds, StringID) && !h.placed[StringID] {
		if a, ok := h.placeStringID(p); ok {
			return a
		}
	}
	if slices.Contains(h.Kinds, Batch) && !h.placed[Batch] {
		if a, ok := h.placeBatch(p); ok {
			return a
		}
	}
	return replayer.Action{}
}

// note notes the request arrived at p; an answer to a string-id probe's
// request goes on to replay with the recorded id.
func (h *Hook) note(p *replayer.Point) replayer.Action {
	r := &request{method: p.Request.Method, sid: p.Request.Header.Get("Mcp-Session-Id"), body: p.Body, at: p.At}
	if len(p.Body) > 0 {
		r.msg = jsonrpc.Parse(p.Body)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.reqs = append(h.reqs, r)
	if b := h.answerBack(p, r.msg); b != nil {
		r.routedBody = b
		return replayer.Action{Body: b}
	}
	return replayer.Action{}
}

// receive notes the client's line at p (over stdio) and lets the probes
// act on it as on an HTTP request: a string-id answer goes on to replay
// with the recorded id, a page a probe answers is written to the client.
func (h *Hook) receive(p *replayer.Point) replayer.Action {
	r := &request{method: lineMethod, body: p.Body, msg: jsonrpc.Parse(p.Body), at: p.At}
	h.mu.Lock()
	h.reqs = append(h.reqs, r)
	at := len(h.reqs) - 1
	b := h.answerBack(p, r.msg)
	r.routedBody = b
	h.mu.Unlock()
	if b != nil {
		return replayer.Action{Body: b}
	}
	a := h.act(p, at)
	if a.Status != http.StatusOK || a.Body == nil {
		return replayer.Action{} // no other answer fits a line
	}
	return replayer.Action{Send: a.Body}
}

// request lets each probe placed answer the request at p, if it must,
// then places the first kind not yet placed that has its place there.
func (h *Hook) request(p *replayer.Point) replayer.Action {
	h.mu.Lock()
	at := h.findLocked(p)
	h.mu.Unlock()
	return h.act(p, at)
}

// act lets each probe placed answer h.reqs[at], the client's request at
// p, if it must, then places the first kind not yet placed that has its
// place there.
func (h *Hook) act(p *replayer.Point, at int) replayer.Action {
	rec := p.Recording
	if rec == nil {
		rec = p.Session.Recording()
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if at < 0 || rec == nil {
		return replayer.Action{}
	}
	req := h.reqs[at]
	for _, pr := range h.probes {
		if a, ok := specs[pr.Kind].follow(pr, rec, req); ok {
			return a
		}
	}
	s := rec.Session
	for _, k := range h.Kinds {
		sp := specs[k]
		if h.placed[k] || sp == nil || !sp.allowed(s.Revision, s.Transport) {
			continue
		}
		pr, a := sp.place(p, rec, req)
		if pr == nil {
			continue
		}
		pr.Kind, pr.Session, pr.Revision, pr.Transport = k, s.ID, s.Revision, s.Transport
		pr.Rule, pr.Section, pr.Level = sp.rule(s.Revision)
		pr.at, pr.req, pr.sid, pr.patience = at, req, req.sid, h.Patience
		if pr.patience <= 0 {
			pr.patience = DefaultPatience
		}
		pr.Request = req.describe()
		h.placed[k] = true
		h.probes = append(h.probes, pr)
		if h.Logger != nil {
			h.Logger.Info("probe: placed "+k.String(), "session", s.ID, "request", pr.Request, "what", pr.What)
		}
		return a
	}
	return replayer.Action{}
}

// findLocked returns the index of the request noted for p: the latest
// one not yet routed with its body and session id.
func (h *Hook) findLocked(p *replayer.Point) int {
	sid := p.Request.Header.Get("Mcp-Session-Id")
	for i := len(h.reqs) - 1; i >= 0; i-- {
		r := h.reqs[i]
		if !r.routed && r.method == p.Request.Method && r.sid == sid && (bytes.Equal(r.body, p.Body) || r.routedBody != nil && bytes.Equal(r.routedBody, p.Body)) {
			r.routed = true
			return i
		}
	}
	return -1
}

// Results judges every probe placed by what the client did after it.
// Call it once the server has stopped serving. Probes assume one client
// per replay: every request after a probe counts as its client's.
func (h *Hook) Results() []Result {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []Result
	for _, pr := range h.probes {
		did, v := specs[pr.Kind].judge(pr, h.reqs[pr.at+1:])
		out = append(out, Result{Probe: *pr, Did: did, Verdict: v})
	}
	return out
}

// NotPlaced returns the kinds asked for that found no place.
func (h *Hook) NotPlaced() []Kind {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []Kind
	for _, k := range h.Kinds {
		if !h.placed[k] {
			out = append(out, k)
		}
	}
	return out
}

// Write writes, for people, each probe placed: the session, the request
// it answered and how, the rule with its section, what the client did
// next and the verdict; then the kinds that found no place, and command,
// the command line that replays this run. It reports whether no probe of
// level Error failed (a failing Warning is reported, not counted).
func (h *Hook) Write(out io.Writer, command string) (ok bool) {
	var w strings.Builder
	defer func() { io.WriteString(out, termtext.Text(w.String())) }()
	ok = true
	counts := map[Verdict]int{}
	res := h.Results()
	for i, r := range res {
		v := r.Verdict.String()
		if r.Verdict == VerdictFail && r.Level == Warning {
			v += " (warning)"
		}
		fmt.Fprintf(&w, "probe: %d. session %d (%s, %s), %s at %s: %s\n", i+1, r.Session, r.Revision, r.Transport, r.Kind, r.Request, r.What)
		fmt.Fprintf(&w, "probe:    rule: %s (%s)\n", r.Rule, r.Section)
		fmt.Fprintf(&w, "probe:    the client %s: %s\n", r.Did, v)
		counts[r.Verdict]++
		ok = ok && !(r.Verdict == VerdictFail && r.Level == Error)
	}
	for _, k := range h.NotPlaced() {
		fmt.Fprintf(&w, "probe: not placed: %s (%s)\n", k, where[k])
	}
	fmt.Fprintf(&w, "probe: %s placed (%d pass, %d fail, %d not observed)\n", termtext.Count(len(res), "probe"),
		counts[VerdictPass], counts[VerdictFail], counts[VerdictNotObserved])
	if command != "" {
		fmt.Fprintf(&w, "probe: replay this run: %s\n", command)
	}
	return ok
}

// where says, for the report, where each kind can be placed.
var where = map[Kind]string{}

// errorAction answers with status and a JSON-RPC error of code for id.
func errorAction(status int, id json.RawMessage, code int, msg string) replayer.Action {
	return replayer.Action{Status: status, Header: http.Header{"Content-Type": {"application/json"}},
		Body: jsonrpc.ErrorResponse(id, code, msg, nil)}
}

// str returns the string member key of the JSON object raw, "" when
// absent or not a string.
func str(raw json.RawMessage, key string) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return ""
	}
	var s string
	if json.Unmarshal(m[key], &s) != nil {
		return ""
	}
	return s
}

// member returns member key of the JSON object raw, and whether it is
// there.
func member(raw json.RawMessage, key string) (json.RawMessage, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil, false
	}
	v, ok := m[key]
	return v, ok
}

// key returns a comparable form of the JSON value raw ("" when absent).
func key(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	v, ok := jsonrpc.Decode(raw)
	if !ok {
		return string(raw)
	}
	return jsonrpc.Key(v)
}

// legacy reports whether rev is a revision of the initialize era.
func legacy(rev string) bool { return rev < "2026-07-28" }

// modernHTTP reports whether a session is 2026-07-28 over Streamable HTTP.
func modernHTTP(rev string, tr store.Transport) bool {
	return tr == store.StreamableHTTP && !legacy(rev)
}

// parseFrame returns the JSON-RPC message of a recorded frame.
func parseFrame(f *store.Frame) jsonrpc.Message { return jsonrpc.Parse(f.Data) }
