package replayer

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/internal/jsonval"
	"github.com/mcpvcr/mcpvcr/internal/mcpwire"
	"github.com/mcpvcr/mcpvcr/internal/redact"
	"github.com/mcpvcr/mcpvcr/store"
)

// MatchIgnoreLabel is the session label that stores --ignore matching
// rules with a recording, one path per line; replay applies them.
const MatchIgnoreLabel = store.LabelMatchIgnore

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
	// Redact names more JSON members (on top of RedactedJSON) whose string
	// values are never compared, in both modes: the recorder stores them
	// as placeholders, so a client sending the real value still matches.
	// Names compare case-insensitively and without '_' and '-'.
	Redact []string
	// Scrubbed also leaves out of the comparison what mcpvcr scrub
	// replaces in any string (e-mail addresses, home directories' user
	// names, long random-looking tokens, placeholders), so that a scrubbed
	// session still matches the client that recorded it. Replay sets it
	// for sessions labelled ScrubLabel.
	Scrubbed bool
}

// ScrubLabel is the session label mcpvcr scrub sets.
const ScrubLabel = store.LabelScrubbed

// RedactedJSON are the JSON members whose string values replay never
// compares (the recorder's defaults): password, secret, api_key, token,
// access_token, refresh_token, client_secret, authorization, private_key,
// passphrase, passwd, pin, credential: redact.DefaultNames, the one list.
var RedactedJSON []string = redact.DefaultNames

// RedactLabel is the session label under which the recorder stores the
// JSON member names it redacted beyond RedactedJSON, one per line;
// replay ignores those values too.
const RedactLabel = store.LabelRedactJSON

// defaultNames is RedactedJSON as a set.
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
func (mt Match) normalized(method string, raw json.RawMessage) any {
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
func (mt Match) hint(live, rec jsonrpc.Message) string {
	if live.Kind == rec.Kind && live.Method == rec.Method {
		if id := identityPath[live.Method]; id != "" && identityOf(live) != identityOf(rec) {
			// No rule may change what is asked: ignoring the tool's name
			// would answer one tool's call with another's result.
			return fmt.Sprintf("it asks for another %s than the recorded one (%s): no matching rule should ignore %s", identityNoun[live.Method], id, id)
		}
	}
	return hintText(mt.hintRules(live, rec))
}

// hintText says which rules would match: the tolerant default, or the
// --ignore rules; "" when none would.
func hintText(rules []string, tolerant bool) string {
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
func (mt Match) hintRules(live, rec jsonrpc.Message) (rules []string, tolerant bool) {
	if live.Kind != rec.Kind || live.Method != rec.Method || identityPath[live.Method] != "" && identityOf(live) != identityOf(rec) {
		return nil, false // no rule may change what is asked
	}
	if mt.Exact {
		tol := Match{Ignore: mt.Ignore}
		if tol.keyOf(live.Kind, live.Method, tol.normalized(live.Method, live.Params)) == tol.keyOf(rec.Kind, rec.Method, tol.normalized(rec.Method, rec.Params)) {
			return nil, true
		}
	}
	paths := jsonval.Paths(mt.normalized(rec.Method, rec.Params), mt.normalized(live.Method, live.Params), "params", 4)
	for _, p := range slices.Compact(paths) {
		rules = append(rules, live.Method+":"+p)
	}
	return rules, false
}

// answerRules returns what hintRules returns for requests, for a
// client's answer live to a server request of method whose recorded
// answer is rec: the --ignore rules (method:path) that would let live
// match, or tolerant when the default tolerant matching would.
func (mt Match) answerRules(method string, rec, live jsonrpc.Message) (rules []string, tolerant bool) {
	if mt.Exact {
		tol := Match{Ignore: mt.Ignore, Redact: mt.Redact, Scrubbed: mt.Scrubbed}
		if tol.answerKey(method, rec) == tol.answerKey(method, live) {
			return nil, true
		}
	}
	if method == "" {
		return nil, false
	}
	for _, p := range slices.Compact(jsonval.Paths(mt.answerValue(method, rec), mt.answerValue(method, live), "", 4)) {
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
func (mt Match) matchKey(m jsonrpc.Message, rids map[string]string) (string, []string) {
	switch m.Kind {
	case jsonrpc.KindBatch:
		var keys []string
		for _, mem := range m.Members {
			k, _ := mt.matchKey(mem, rids)
			keys = append(keys, k)
		}
		slices.Sort(keys)
		return "batch", keys
	case jsonrpc.KindResult, jsonrpc.KindError:
		return "response " + string(m.ID), nil
	case jsonrpc.KindRequest, jsonrpc.KindNotification:
		params := mt.normalized(m.Method, m.Params)
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
func (mt Match) answerKey(method string, m jsonrpc.Message) string {
	return jsonval.Key(mt.answerValue(method, m))
}

// answerValue is what a client's answer m to a server request of method
// says, as compared under mt: {"result": …} or {"error": …} with the
// values no mode compares (secrets, volatile _meta) masked, numbers by
// value in tolerant mode, and the user's rules applied to it as to the
// message {"method": method, "result": …}: a rule scoped to the server's
// method, such as elicitation/create:result.content, loosens its answers
// only. Nothing else is ignored: an answer's content is what a server
// acts on.
func (mt Match) answerValue(method string, m jsonrpc.Message) map[string]any {
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
func (mt Match) requestKey(m jsonrpc.Message) string {
	k, members := mt.matchKey(m, nil)
	return k + " " + strings.Join(members, "\x00")
}
