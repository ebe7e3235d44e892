// Package match says how a live client frame compares with a recorded
// one: the matching rules (Match: tolerant or exact, --ignore paths,
// redacted and scrubbed values), the match keys replay indexes and looks
// frames up by, and the hints a mismatch report gives (which rule would
// have matched). Package replayer matches by it; its exported names are
// replayer's (replayer.Match, replayer.Rule, replayer.StoredMatch).
package match

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/internal/jsonval"
	"github.com/mcpvcr/mcpvcr/internal/mcpwire"
	"github.com/mcpvcr/mcpvcr/internal/redact"
	"github.com/mcpvcr/mcpvcr/internal/rules"
	"github.com/mcpvcr/mcpvcr/store"
)

// Match says how a live client frame is compared with recorded ones. The
// zero Match is the tolerant default: JSON-RPC ids, progress tokens and
// trace context never count; clientInfo (the initialize params' and the
// 2026-07-28 _meta client info) is ignored, absent params equal {}, numbers
// compare by value and object keys in any order.
type Match struct {
	// Exact compares the JSON values of method and params as recorded:
	// nothing but ids, progress tokens and trace context is ignored, and
	// absent params differ from {}.
	Exact bool
	// Ignore removes more from a client message before it is compared.
	// Rules apply in both modes.
	Ignore []Rule
	// Redact names more JSON members (on top of redact.DefaultNames) whose string
	// values are never compared, in both modes: the recorder stores them
	// as placeholders, so a client sending the real value still matches.
	// Names compare case-insensitively and without '_' and '-'.
	Redact []string
	// Scrubbed also leaves out of the comparison what mcpvcr scrub
	// replaces in any string (e-mail addresses, home directories' user
	// names, long random-looking tokens, placeholders), so that a scrubbed
	// session still matches the client that recorded it. Replay sets it
	// for sessions labelled store.LabelScrubbed.
	Scrubbed bool
}

// defaultNames is redact.DefaultNames as a set.
var defaultNames = redact.New(true)

// mask leaves out of v what mt does not compare: secret members' values,
// the ids and times of tasks (maskTasks) and, for scrubbed sessions, what
// scrub replaced.
func (mt Match) mask(v any) any {
	v = maskTasks(mt.names().Mask(v))
	if mt.Scrubbed {
		v = redact.MaskStrings(v)
	}
	return v
}

// maskTasks leaves out of v, which matching compares, what a task's
// creator mints: in a task (an object with taskId and status) its
// taskId, createdAt and lastUpdatedAt, and the taskId of a related-task
// _meta. A live client's task ids are mapped, not compared, as request
// ids are; its tasks' times are the replay's.
func maskTasks(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if _, id := x["taskId"]; id {
			if _, st := x["status"]; st {
				delete(x, "taskId")
				delete(x, "createdAt")
				delete(x, "lastUpdatedAt")
			}
		}
		for k, c := range x {
			if k == "io.modelcontextprotocol/related-task" {
				if m, ok := c.(map[string]any); ok {
					delete(m, "taskId")
				}
			}
			x[k] = maskTasks(c)
		}
	case []any:
		for i := range x {
			x[i] = maskTasks(x[i])
		}
	}
	return v
}

// maskPollState leaves out of v, a client's answer to a server request of
// method, the state of the task when the request was a poll (tasks/get):
// its status and statusMessage. What a poll finds is timing, the live
// client's task and the server's clock, not the conversation: a poll that
// finds the live task done where the recorded one was still working (or
// the other way round) is no difference. What the task ends with is
// compared, in the client's answer to tasks/result.
func maskPollState(method string, v any) any {
	if m, ok := v.(map[string]any); ok && method == "tasks/get" {
		delete(m, "status")
		delete(m, "statusMessage")
	}
	return v
}

// names returns the JSON members whose values mt does not compare.
func (mt Match) names() redact.Names {
	if len(mt.Redact) == 0 {
		return defaultNames
	}
	return redact.New(true, mt.Redact...)
}

// Rule is a matching rule that ignores part of a client message.
type Rule interface {
	// Apply removes what the rule ignores from msg, a client request or
	// notification decoded as {"method": …, "params": …}, or a client's
	// answer to a server request as {"method": <the server request's>,
	// "result": …} or {…, "error": …} (numbers as json.Number).
	Apply(msg map[string]any)
	// String is the rule as a user writes it, for messages.
	String() string
}

// String describes the mode for messages.
func (m Match) String() string {
	mode := "tolerant"
	if m.Exact {
		mode = "exact"
	}
	for _, r := range m.Ignore {
		mode += " --ignore " + r.String()
	}
	for _, n := range m.Redact {
		mode += " --redact-json " + n
	}
	if m.Scrubbed {
		mode += " (scrubbed)"
	}
	return mode
}

// builtinIgnore is what tolerant matching leaves out of a message: the
// client's own description of itself, which changes with every client
// build and never changes what a server answers.
func builtinIgnore(method string, params map[string]any) {
	if method == "initialize" {
		delete(params, "clientInfo")
	}
	if meta, ok := params["_meta"].(map[string]any); ok {
		delete(meta, mcpwire.MetaClientInfo)
		if len(meta) == 0 {
			delete(params, "_meta")
		}
	}
}

// normalized returns the value of params compared under mt, before user
// rules: volatile _meta removed; in tolerant mode also what builtinIgnore
// drops, absent params as {} and numbers by value.
func (mt Match) Params(method string, raw json.RawMessage) any {
	v := mt.mask(jsonval.Decode(raw))
	if mt.Exact {
		return v
	}
	if v == nil {
		v = map[string]any{}
	}
	if obj, ok := v.(map[string]any); ok {
		builtinIgnore(method, obj)
	}
	return jsonval.ByValue(v)
}

// keyOf returns the canonical match key of a request or notification.
func (mt Match) keyOf(kind jsonrpc.Kind, method string, params any) string {
	if len(mt.Ignore) > 0 {
		msg := map[string]any{"method": method}
		if params != nil {
			msg["params"] = params
		}
		for _, r := range mt.Ignore {
			r.Apply(msg)
		}
		params = msg["params"]
	}
	return kind.String() + " " + method + " " + jsonval.Key(params)
}

// hint says which matching rule would have let live match rec: the
// tolerant default, or --ignore paths. It returns "" when no rule would.
func (mt Match) Hint(live, rec jsonrpc.Message) string {
	if live.Kind == rec.Kind && live.Method == rec.Method {
		if id := identityPath[live.Method]; id != "" && identityOf(live) != identityOf(rec) {
			// No rule may change what is asked: ignoring the tool's name
			// would answer one tool's call with another's result.
			return fmt.Sprintf("it asks for another %s than the recorded one (%s): no matching rule should ignore %s", identityNoun[live.Method], id, id)
		}
	}
	return HintText(mt.HintRules(live, rec))
}

// hintText says which rules would match: the tolerant default, or the
// --ignore rules; "" when none would.
func HintText(rules []string, tolerant bool) string {
	if tolerant {
		return "the default tolerant matching (drop --match exact) would match it"
	}
	if len(rules) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("--ignore would match it:")
	for _, r := range rules {
		fmt.Fprintf(&b, " --ignore '%s'", r)
	}
	return b.String()
}

// hintRules returns the rules hint names: the --ignore rules
// (METHOD:PATH) that would let live match rec, or tolerant when the
// default tolerant matching would.
func (mt Match) HintRules(live, rec jsonrpc.Message) (rules []string, tolerant bool) {
	if live.Kind != rec.Kind || live.Method != rec.Method || identityPath[live.Method] != "" && identityOf(live) != identityOf(rec) {
		return nil, false // no rule may change what is asked
	}
	if mt.Exact {
		tol := Match{Ignore: mt.Ignore}
		if tol.keyOf(live.Kind, live.Method, tol.Params(live.Method, live.Params)) == tol.keyOf(rec.Kind, rec.Method, tol.Params(rec.Method, rec.Params)) {
			return nil, true
		}
	}
	paths := jsonval.Paths(mt.Params(rec.Method, rec.Params), mt.Params(live.Method, live.Params), "params", 4)
	for _, p := range slices.Compact(paths) {
		rules = append(rules, live.Method+":"+p)
	}
	return rules, false
}

// answerRules returns what hintRules returns for requests, for a
// client's answer live to a server request of method whose recorded
// answer is rec: the --ignore rules (method:path) that would let live
// match, or tolerant when the default tolerant matching would.
func (mt Match) AnswerRules(method string, rec, live jsonrpc.Message) (rules []string, tolerant bool) {
	if mt.Exact {
		tol := Match{Ignore: mt.Ignore, Redact: mt.Redact, Scrubbed: mt.Scrubbed}
		if tol.AnswerKey(method, rec) == tol.AnswerKey(method, live) {
			return nil, true
		}
	}
	if method == "" {
		return nil, false
	}
	for _, p := range slices.Compact(jsonval.Paths(mt.AnswerValue(method, rec), mt.AnswerValue(method, live), "", 4)) {
		rules = append(rules, method+":"+p)
	}
	return rules, false
}

// identityPath is, per method, the param that says what a request asks
// for: which tool, prompt or resource. A rule that ignores it (or the
// method) would answer one question with another's answer.
var identityPath = map[string]string{
	"tools/call":            "params.name",
	"prompts/get":           "params.name",
	"resources/read":        "params.uri",
	"resources/subscribe":   "params.uri",
	"resources/unsubscribe": "params.uri",
}

var identityNoun = map[string]string{
	"tools/call": "tool", "prompts/get": "prompt",
	"resources/read": "resource", "resources/subscribe": "resource", "resources/unsubscribe": "resource",
}

// identityOf returns what m asks for: its method and, for the methods
// of identityPath, the value of that param.
func identityOf(m jsonrpc.Message) string {
	p := identityPath[m.Method]
	if p == "" {
		return m.Method
	}
	var params map[string]json.RawMessage
	_ = json.Unmarshal(m.Params, &params)
	return m.Method + " " + string(params[strings.TrimPrefix(p, "params.")])
}

// IdentityRules returns the Ignore rules that would ignore what a request
// asks for: the method, or the tool, prompt or resource it names (as
// "method:path"). Replay with such a rule may answer a request with the
// answer to another.
func (mt Match) IdentityRules() []string {
	var out []string
	for _, r := range mt.Ignore {
		for _, method := range []string{"tools/call", "prompts/get", "resources/read", "resources/subscribe", "resources/unsubscribe"} {
			msg := map[string]any{"method": method, "params": map[string]any{"name": "x", "uri": "x", "arguments": map[string]any{}}}
			r.Apply(msg)
			params, _ := msg["params"].(map[string]any)
			key := strings.TrimPrefix(identityPath[method], "params.")
			if msg["method"] != method || params == nil || params[key] != "x" {
				out = append(out, r.String())
				break
			}
		}
	}
	return out
}

// matchKey returns the canonical match key of a client message under mt
// (a batch's is "batch" and its members' sorted keys), translating a
// cancelled request's live id to the recorded one through rids (nil when
// building keys of recorded frames). It is the one way replay computes a
// request's match key: the conversations (engine.match) and the
// 2026-07-28 exchange pool (requestKey) both use it.
func (mt Match) Key(m jsonrpc.Message, rids map[string]string) (string, []string) {
	switch m.Kind {
	case jsonrpc.KindBatch:
		var keys []string
		for _, mem := range m.Members {
			k, _ := mt.Key(mem, rids)
			keys = append(keys, k)
		}
		slices.Sort(keys)
		return "batch", keys
	case jsonrpc.KindResult, jsonrpc.KindError:
		return "response " + string(m.ID), nil
	case jsonrpc.KindRequest, jsonrpc.KindNotification:
		params := mt.Params(m.Method, m.Params)
		if m.Method == "notifications/cancelled" && rids != nil {
			if obj, ok := params.(map[string]any); ok {
				if rec, ok := rids[string(mcpwire.CancelledRequestID(m.Params))]; ok {
					obj["requestId"] = json.RawMessage(rec)
				}
			}
		}
		return mt.keyOf(m.Kind, m.Method, params), nil
	}
	return "raw " + string(m.Raw), nil
}

// answerKey is the key of what a client's answer to a server request of
// method says under mt (see answerValue).
func (mt Match) AnswerKey(method string, m jsonrpc.Message) string {
	return jsonval.Key(mt.AnswerValue(method, m))
}

// answerValue is what a client's answer m to a server request of method
// says, as compared under mt: {"result": …} or {"error": …} with the
// values no mode compares (secrets, volatile _meta) masked, numbers by
// value in tolerant mode, and the user's rules applied to it as to the
// message {"method": method, "result": …}: a rule scoped to the server's
// method, such as elicitation/create:result.content, loosens its answers
// only. Nothing else is ignored: an answer's content is what a server
// acts on.
func (mt Match) AnswerValue(method string, m jsonrpc.Message) map[string]any {
	member, raw := "result", m.Result
	if m.Kind == jsonrpc.KindError {
		member, raw = "error", m.Error
	}
	v := maskPollState(method, mt.mask(jsonval.Decode(raw)))
	if !mt.Exact {
		v = jsonval.ByValue(v)
	}
	msg := map[string]any{"method": method, member: v}
	for _, r := range mt.Ignore {
		r.Apply(msg)
	}
	delete(msg, "method")
	return msg
}

// requestKey is the match key of a whole request body under mt, as one
// string: what the exchange pool compares.
func (mt Match) RequestKey(m jsonrpc.Message) string {
	k, members := mt.Key(m, nil)
	return k + " " + strings.Join(members, "\x00")
}

// Sessions names the sessions a replay serves, whose stored rules
// Stored reads: sessions IDs of DB (every session when IDs is
// empty), or, when DB is nil, Recordings as loaded.
type Sessions struct {
	DB         *store.DB
	IDs        []int64
	Recordings []*store.Recording
}

// Stored returns mt with the rules a replay of sessions s matches
// by: ignore (paths in the syntax of mcpvcr verify --ignore, one or more
// a line: the caller's own), then the sessions' store.LabelMatchIgnore paths,
// each path once in that order; the JSON members the recorder redacted
// beyond redact.DefaultNames (store.LabelRedactJSON), each once; and Scrubbed if any
// session carries store.LabelScrubbed. A path that does not parse is an error
// wrapping the path error (errors.Is ErrBadPath of package diff); an
// error reading DB is returned as it is.
func Stored(ctx context.Context, mt Match, ignore []string, s Sessions) (Match, error) {
	values := func(label string) ([]string, error) {
		if s.DB != nil {
			return s.DB.LabelValues(ctx, label, s.IDs...)
		}
		var vs []string
		for _, r := range s.Recordings {
			if v := r.Session.Labels[label]; v != "" {
				vs = append(vs, v)
			}
		}
		return vs, nil
	}
	stored, err := values(store.LabelMatchIgnore)
	if err != nil {
		return mt, err
	}
	paths, err := rules.ParseLines(strings.Join(append(slices.Clone(ignore), stored...), "\n"))
	if err != nil {
		return mt, err
	}
	seen := map[string]bool{}
	for _, r := range mt.Ignore {
		seen[r.String()] = true
	}
	for _, p := range paths {
		if !seen[p.String()] {
			seen[p.String()] = true
			mt.Ignore = append(mt.Ignore, p)
		}
	}
	names, err := values(store.LabelRedactJSON)
	if err != nil {
		return mt, err
	}
	for _, v := range names {
		for _, name := range strings.Split(v, "\n") {
			if name = strings.TrimSpace(name); name != "" && name != "off" && !slices.Contains(mt.Redact, name) {
				mt.Redact = append(mt.Redact, name)
			}
		}
	}
	scrubbed, err := values(store.LabelScrubbed)
	if err != nil {
		return mt, err
	}
	if len(scrubbed) > 0 {
		mt.Scrubbed = true
	}
	return mt, nil
}

// Score ranks a recorded client message as the closest to a live one:
// the same kind, the same method, the same question (the tool, prompt or
// resource asked for), not yet matched, then the fewest differing paths.
type Score struct {
	base, diffs int
}

// Better reports whether a is closer than b.
func (a Score) Better(b Score) bool {
	return a.base > b.base || (a.base == b.base && a.diffs < b.diffs)
}

// Near reports whether a is close enough to name: the same method at least.
func (a Score) Near() bool { return a.base >= 9 }

// Closeness scores rec, a recorded client message, as the closest to
// live; matched says rec was matched already. want holds live's params as
// mt compares them once the first message of live's method computed them.
func (mt Match) Closeness(rec, live jsonrpc.Message, matched bool, want *any) Score {
	score := Score{base: 1}
	if rec.Kind == live.Kind {
		score.base += 2
	}
	if rec.Method == live.Method && live.Method != "" {
		score.base += 8
		if identityOf(rec) == identityOf(live) {
			score.base += 4
		}
		if *want == nil {
			*want = mt.Params(live.Method, live.Params)
		}
		score.diffs = len(jsonval.Paths(mt.Params(rec.Method, rec.Params), *want, "params", 64))
	}
	if !matched {
		score.base++
	}
	return score
}

// Diff is the text of how live's params differ from rec's under mt.
func (mt Match) Diff(rec, live jsonrpc.Message) string {
	return jsonval.Text(mt.Params(rec.Method, rec.Params), mt.Params(live.Method, live.Params), "params", 12)
}

// AnswerDiff says how live, a client's answer to a server request of
// method, differs from rec, the recorded client's, under mt: the first
// differing paths with both values, for a one-line reason, and the whole
// diff.
func (mt Match) AnswerDiff(method string, rec, live jsonrpc.Message) (at []string, diff string) {
	a, b := mt.AnswerValue(method, rec), mt.AnswerValue(method, live)
	const shown = 3
	for n, d := range jsonval.Diffs(map[string]any(a), map[string]any(b), "", shown+1) {
		if n == shown {
			at = append(at, "…")
			break
		}
		at = append(at, fmt.Sprintf("%s: %s (recorded %s)", d.Path, shortJSON(d.B, d.BIn), shortJSON(d.A, d.AIn)))
	}
	return at, jsonval.Text(map[string]any(a), map[string]any(b), "", 12)
}

// shortJSON is jsonval.Shown cut shorter, for a one-line reason.
func shortJSON(v any, there bool) string {
	s := jsonval.Shown(v, there)
	if r := []rune(s); len(r) > 60 {
		return string(r[:60]) + "…"
	}
	return s
}
