package replayer

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/internal/jsonval"
	"github.com/mcpvcr/mcpvcr/store"
)

// NoMatchCode is the JSON-RPC error code of the answer to a request that
// matches no recorded request. It lies in the implementation-defined range
// that no MCP revision gives a meaning to.
const NoMatchCode = -32019

// Mismatch is a live client frame that matched no recorded frame.
type Mismatch struct {
	// Live is the frame the client sent.
	Live []byte
	// Closest is the recorded client frame most like it, nil if none.
	Closest *store.Frame
	// Diff shows how Live differs from Closest (-recorded +live).
	Diff string
	// Reason says why, for checks that are not about matching.
	Reason string
	// Hint names the matching rule that would have matched Closest, if
	// one would.
	Hint string
	// Rules are the rules of Hint in the --ignore syntax, such as
	// "initialize:params.capabilities.extensions"; Tolerant says that the
	// default tolerant matching would match instead of exact matching.
	// Callers that speak another language (Go, in mcpvcrtest) render the
	// hint from them.
	Rules    []string
	Tolerant bool
	// Session is the recorded session that holds Closest, 0 if none.
	Session int64
}

// Error describes the mismatch on one line.
func (m *Mismatch) Error() string {
	live := jsonrpc.Parse(m.Live)
	what := live.Kind.String()
	if live.Kind == jsonrpc.KindEmpty {
		what = "request without body"
	}
	if live.Method != "" {
		what += " " + live.Method
	}
	if m.Reason != "" {
		return fmt.Sprintf("%s: %s", what, m.Reason)
	}
	if m.Closest == nil {
		return fmt.Sprintf("%s: no recorded frame matches", what)
	}
	where := fmt.Sprintf("seq %d", m.Closest.Seq)
	if m.Session != 0 {
		where = fmt.Sprintf("session %d seq %d", m.Session, m.Closest.Seq)
	}
	return fmt.Sprintf("%s: no recorded frame matches; closest is %s (%s %s)", what, where, m.Closest.Kind, m.Closest.Method)
}

// closestScore ranks a recorded client frame as the closest to a live
// one: the same kind, the same method, the same identity (the tool,
// prompt or resource asked for), not yet matched, then the fewest
// differing paths. Higher is closer.
type closestScore struct {
	base, diffs int
}

func (a closestScore) better(b closestScore) bool {
	return a.base > b.base || (a.base == b.base && a.diffs < b.diffs)
}

// closestAmong returns the mismatch report for live across every
// candidate: the closest recorded frame of any of them, by session and
// seq, with its diff and the rule that would match it.
func closestAmong(cands []*engine, live jsonrpc.Message) *Mismatch {
	var best *engine
	bi, bs := -1, closestScore{}
	for _, e := range cands {
		if i, sc := e.closestIndex(live); i >= 0 && (best == nil || sc.better(bs)) {
			best, bi, bs = e, i, sc
		}
	}
	if best == nil {
		return cands[0].closest(live)
	}
	return best.mismatchAt(live, bi)
}

// closest returns the mismatch report for live against e's recording.
func (e *engine) closest(live jsonrpc.Message) *Mismatch {
	i, _ := e.closestIndex(live)
	if i < 0 {
		return &Mismatch{Live: live.Raw}
	}
	return e.mismatchAt(live, i)
}

// closestIndex returns the index of e's recorded client frame closest to
// live and its score; -1 when none is close (not even the same method).
func (e *engine) closestIndex(live jsonrpc.Message) (int, closestScore) {
	var want any
	best, bestScore := -1, closestScore{}
	for i := range e.frames {
		fr := &e.frames[i]
		if !fr.c2s {
			continue
		}
		score := closestScore{base: 1}
		if fr.msg.Kind == live.Kind {
			score.base += 2
		}
		if fr.msg.Method == live.Method && live.Method != "" {
			score.base += 8
			if identityOf(fr.msg) == identityOf(live) {
				score.base += 4
			}
			if want == nil {
				want = e.mt.normalized(live.Method, live.Params)
			}
			score.diffs = len(jsonval.Paths(e.mt.normalized(fr.msg.Method, fr.msg.Params), want, "params", 64))
		}
		if !e.done.has(i) {
			score.base++
		}
		if best < 0 || score.better(bestScore) {
			best, bestScore = i, score
		}
	}
	if best < 0 || bestScore.base < 9 {
		return -1, closestScore{}
	}
	return best, bestScore
}

// mismatchAt reports live against e's recorded client frame i.
func (e *engine) mismatchAt(live jsonrpc.Message, i int) *Mismatch {
	fr := &e.frames[i]
	mm := &Mismatch{Live: live.Raw, Closest: fr.f, Session: e.rec.Session.ID}
	mm.Diff = jsonval.Text(e.mt.normalized(fr.msg.Method, fr.msg.Params), e.mt.normalized(live.Method, live.Params), "params", 12)
	mm.Hint = e.mt.hint(live, fr.msg)
	mm.Rules, mm.Tolerant = e.mt.hintRules(live, fr.msg)
	if mm.Diff == "" && e.done.has(i) {
		mm.Reason = fmt.Sprintf("matches recorded seq %d, which this client already sent", fr.f.Seq)
	}
	return mm
}

// answerMismatch reports live, a client's answer to a server request,
// against e's recorded answer i, which it matched by id only (loosely):
// what the client answered differs from what the recorded client did,
// under e's matching rules. Replay goes on as recorded (the server got
// the recorded answer, so it sends what it sent next), and the caller
// counts live as unmatched. The reason names the differing paths with
// both values; Diff has them all; Hint the rule that would match.
func (e *engine) answerMismatch(live jsonrpc.Message, i int) *Mismatch {
	fr := &e.frames[i]
	method := ""
	if fr.asks >= 0 {
		method = e.frames[fr.asks].msg.Method
	}
	rec, got := e.mt.answerValue(method, fr.msg), e.mt.answerValue(method, live)
	const shown = 3
	var at []string
	for n, d := range jsonval.Diffs(map[string]any(rec), map[string]any(got), "", shown+1) {
		if n == shown {
			at = append(at, "…")
			break
		}
		at = append(at, fmt.Sprintf("%s: %s (recorded %s)", d.Path, shortJSON(d.B, d.BIn), shortJSON(d.A, d.AIn)))
	}
	what := "answer to " + method
	if method == "" {
		what = "answer to a server request"
	}
	mm := &Mismatch{Live: live.Raw, Closest: fr.f, Session: e.rec.Session.ID,
		Reason: fmt.Sprintf("%s differs at %s; replay went on as recorded after seq %d", what, strings.Join(at, ", "), fr.f.Seq)}
	mm.Diff = jsonval.Text(map[string]any(rec), map[string]any(got), "", 12)
	mm.Rules, mm.Tolerant = e.mt.answerRules(method, fr.msg, live)
	mm.Hint = hintText(mm.Rules, mm.Tolerant)
	return mm
}

// shortJSON is jsonval.Shown cut shorter, for a one-line reason.
func shortJSON(v any, there bool) string {
	s := jsonval.Shown(v, there)
	if r := []rune(s); len(r) > 60 {
		return string(r[:60]) + "…"
	}
	return s
}

// noMatchAnswer is the JSON-RPC error sent for an unmatched request: its
// data names the closest recorded frame, the diff and the hint.
func noMatchAnswer(id json.RawMessage, mm *Mismatch) []byte {
	type closest struct {
		Seq    int64           `json:"seq"`
		Method string          `json:"method,omitempty"`
		Frame  json.RawMessage `json:"frame,omitempty"`
	}
	data := struct {
		Closest *closest `json:"closest,omitempty"`
		Diff    string   `json:"diff,omitempty"`
		Hint    string   `json:"hint,omitempty"`
	}{Diff: mm.Diff, Hint: mm.Hint}
	if mm.Closest != nil {
		data.Closest = &closest{Seq: mm.Closest.Seq, Method: mm.Closest.Method}
		if json.Valid(mm.Closest.Data) {
			data.Closest.Frame = json.RawMessage(strings.TrimSpace(string(mm.Closest.Data)))
		}
	}
	return jsonrpc.ErrorResponse(id, NoMatchCode, "mcpvcr: "+mm.Error(), data)
}

// noMatchReply is the answer to an unmatched client frame: an error for a
// request, an array of errors (one per request) for a batch holding
// requests, nil when nothing is owed.
func noMatchReply(live jsonrpc.Message, mm *Mismatch) []byte {
	return jsonrpc.ReplyEach(live, func(id json.RawMessage) []byte { return noMatchAnswer(id, mm) })
}
