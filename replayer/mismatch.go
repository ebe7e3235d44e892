package replayer

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/internal/match"
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

// closestAmong returns the mismatch report for live across every
// candidate: the closest recorded frame of any of them, by session and
// seq, with its diff and the rule that would match it.
func closestAmong(cands []*engine, live jsonrpc.Message) *Mismatch {
	var best *engine
	bi, bs := -1, match.Score{}
	for _, e := range cands {
		if i, sc := e.closestIndex(live); i >= 0 && (best == nil || sc.Better(bs)) {
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
func (e *engine) closestIndex(live jsonrpc.Message) (int, match.Score) {
	var want any
	best, bestScore := -1, match.Score{}
	for i := range e.frames {
		if fr := &e.frames[i]; fr.C2S {
			if score := e.mt.Closeness(fr.Msg, live, e.done.has(i), &want); best < 0 || score.Better(bestScore) {
				best, bestScore = i, score
			}
		}
	}
	if best < 0 || !bestScore.Near() {
		return -1, match.Score{}
	}
	return best, bestScore
}

// mismatchAt reports live against e's recorded client frame i.
func (e *engine) mismatchAt(live jsonrpc.Message, i int) *Mismatch {
	fr := &e.frames[i]
	mm := &Mismatch{Live: live.Raw, Closest: fr.F, Session: e.rec.Session.ID}
	mm.Diff = e.mt.Diff(fr.Msg, live)
	mm.Hint = e.mt.Hint(live, fr.Msg)
	mm.Rules, mm.Tolerant = e.mt.HintRules(live, fr.Msg)
	if mm.Diff == "" && e.done.has(i) {
		mm.Reason = fmt.Sprintf("matches recorded seq %d, which this client already sent", fr.F.Seq)
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
	if fr.Asks >= 0 {
		method = e.frames[fr.Asks].Msg.Method
	}
	at, diff := e.mt.AnswerDiff(method, fr.Msg, live)
	what := "answer to " + method
	if method == "" {
		what = "answer to a server request"
	}
	mm := &Mismatch{Live: live.Raw, Closest: fr.F, Session: e.rec.Session.ID,
		Reason: fmt.Sprintf("%s differs at %s; replay went on as recorded after seq %d", what, strings.Join(at, ", "), fr.F.Seq)}
	mm.Diff = diff
	mm.Rules, mm.Tolerant = e.mt.AnswerRules(method, fr.Msg, live)
	mm.Hint = match.HintText(mm.Rules, mm.Tolerant)
	return mm
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
