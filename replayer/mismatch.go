package replayer

import (
	"fmt"
	"strings"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/internal/match"
)

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
