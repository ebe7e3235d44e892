package probe

import (
	"encoding/json"
	"fmt"

	"github.com/mcpvcr/mcpvcr/replayer"
	"github.com/mcpvcr/mcpvcr/store"
)

// unknown-result-type: the first page of a list asked for in a
// 2026-07-28 session (an exchange over Streamable HTTP, or stdio) is answered with the recorded
// result, its resultType a value no revision defines and a nextCursor of
// the probe's. In 2026-07-28 a resultType other than "complete" or
// "input_required" (or one an extension defines) is invalid: the answer
// is not a finished result. The wire shows a client that took it as one
// by what it does with it: it asks for the page the nextCursor names. A
// client that asks for the list again without that cursor did not take
// it; one that goes on to something else may have reported an error or
// used the page, which the wire does not tell apart.

const (
	secResultType = "docs/specification/2026-07-28/basic/index.mdx §Responses (resultType)"
	// unknownType is the resultType the probe sends; typeCursor the
	// nextCursor beside it.
	unknownType = "mcpvcr-probe-unknown"
	typeCursor  = "mcpvcr-probe-unknown-type"
)

func init() {
	specs[UnknownResultType] = &spec{
		name:    "unknown-result-type",
		allowed: func(rev string, tr store.Transport) bool { return !legacy(rev) && tr != store.LegacySSE },
		rule: func(string) (string, string, Level) {
			return `a resultType other than "complete" or "input_required" makes the answer invalid: it is not taken as a finished result (its nextCursor is not followed)`, secResultType, Error
		},
		place:  placeResultType,
		follow: followCursor,
		judge:  judgeResultType,
	}
	where[UnknownResultType] = "a first page of a list in a 2026-07-28 session (Streamable HTTP or stdio)"
}

func placeResultType(p *replayer.Point, rec *store.Recording, req *request) (*Probe, replayer.Action) {
	stdio := p.Request == nil
	if _, ok := cursor(req); ok || !p.Pooled && !stdio || !isList(req) {
		return nil, replayer.Action{}
	}
	res, rf := recordedResult(rec, req.msg.Method)
	if res == nil {
		return nil, replayer.Action{}
	}
	pr := &Probe{cursor: typeCursor,
		What: fmt.Sprintf("answered the recorded result with resultType %q and nextCursor %q", unknownType, typeCursor)}
	if stdio {
		// The recorded line is rewritten on its way (Hook.before), so
		// that replay still reads the recorded request.
		pr.live, pr.event = p.Session, rf
		return pr, replayer.Action{}
	}
	return pr, unknownPage(req, res)
}

// unknownPage answers req with result, its resultType unknown and its
// nextCursor the probe's.
func unknownPage(req *request, result json.RawMessage) replayer.Action {
	return answerWith(req, result, func(m map[string]json.RawMessage) {
		m["resultType"], _ = json.Marshal(unknownType)
		m["nextCursor"], _ = json.Marshal(typeCursor)
	})
}

func judgeResultType(pr *Probe, after []*request) (string, Verdict) {
	var other *request
	for _, r := range after {
		if !r.msg.HasID() || !r.sent() {
			continue
		}
		c, has := cursor(r)
		same := isList(r) && r.msg.Method == pr.req.msg.Method
		switch {
		case same && has && c == pr.cursor:
			return fmt.Sprintf("took the answer as a finished page: asked for the page its nextCursor names (%s)", r.describe()), VerdictFail
		case same && !has:
			return "did not take the answer: asked for the list again (" + r.describe() + ")", VerdictPass
		case other == nil:
			other = r
		}
	}
	if other != nil {
		return "went on without its nextCursor (next: " + other.describe() + "); the wire does not show whether it took the page", VerdictNotObserved
	}
	return "sent nothing more", VerdictNotObserved
}
