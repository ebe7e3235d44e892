package probe

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"

	"github.com/mcpvcr/mcpvcr/replayer"
	"github.com/mcpvcr/mcpvcr/store"
)

// empty-cursor and repeated-cursor: the first page of a list (tools,
// prompts, resources, resource templates) asked for without a cursor is
// answered with the recorded result and a nextCursor of the probe's.
//
// empty-cursor sends nextCursor "": in 2026-07-28 that is a cursor, and
// the client asks again with cursor ""; before 2026-07-28 it ends the
// list, and the client does not ask again. The page asked for is answered
// with the recorded result and no nextCursor, in both eras.
//
// repeated-cursor sends a cursor; the page asked for with it is answered
// with the same cursor again, which ends the list: the client does not
// send it a third time (any later page asked for with it ends the list
// for a client that loops).

const (
	secPagination       = "docs/specification/2026-07-28/server/utilities/pagination.mdx"
	secPaginationLegacy = "docs/specification/2025-11-25/server/utilities/pagination.mdx"
	// repeatCursor is the cursor repeated-cursor sends.
	repeatCursor = "mcpvcr-probe-repeat"
	// maxPages bounds the pages a probe answers itself: past it, the
	// client that still asks is left to replay.
	maxPages = 5
)

var listMethods = []string{"tools/list", "prompts/list", "resources/list", "resources/templates/list"}

func init() {
	// Over HTTP+SSE a page the probe answers would have to go on the
	// session's stream: repeated-cursor, which must answer one, is not
	// drawn there; empty-cursor answers one only to a client that asks
	// with "" in a legacy revision, which the rule forbids.
	specs[EmptyCursor] = &spec{
		name:    "empty-cursor",
		allowed: func(string, store.Transport) bool { return true },
		rule: func(rev string) (string, string, Level) {
			if legacy(rev) {
				return `before 2026-07-28 an empty nextCursor ends the list: no page is asked for with cursor ""`, secPaginationLegacy, Warning
			}
			return `in 2026-07-28 an empty nextCursor is a cursor: the next page is asked for with cursor ""`, secPagination, Warning
		},
		place:  placeCursor(""),
		follow: followCursor,
		judge:  judgeEmptyCursor,
	}
	specs[RepeatedCursor] = &spec{
		name:    "repeated-cursor",
		allowed: func(_ string, tr store.Transport) bool { return tr != store.LegacySSE },
		rule: func(string) (string, string, Level) {
			return "a nextCursor equal to the cursor just sent ends the list: it is not sent again", secPagination, Warning
		},
		place:  placeCursor(repeatCursor),
		follow: followCursor,
		judge:  judgeRepeatedCursor,
	}
	where[EmptyCursor] = "a first page of a list (tools, prompts, resources, templates)"
	where[RepeatedCursor] = "a first page of a list over Streamable HTTP or stdio"
}

// cursor returns the cursor r asks for, and whether it names one.
func cursor(r *request) (string, bool) {
	raw, ok := member(r.msg.Params, "cursor")
	if !ok {
		return "", false
	}
	var s string
	return s, json.Unmarshal(raw, &s) == nil
}

// isList reports whether r is a list request of the client.
func isList(r *request) bool {
	return r.sent() && r.msg.HasID() && slices.Contains(listMethods, r.msg.Method)
}

// placeCursor places a cursor probe sending next at a first page.
func placeCursor(next string) func(*replayer.Point, *store.Recording, *request) (*Probe, replayer.Action) {
	return func(p *replayer.Point, rec *store.Recording, req *request) (*Probe, replayer.Action) {
		if _, ok := cursor(req); ok || !isList(req) {
			return nil, replayer.Action{}
		}
		res, rf := recordedResult(rec, req.msg.Method)
		if res == nil {
			return nil, replayer.Action{}
		}
		pr := &Probe{cursor: next, What: fmt.Sprintf("answered the recorded result with nextCursor %q", next)}
		if !p.Pooled && (rf.SSE || p.Request == nil) {
			// A legacy session (or stdio) answers as recorded, the event
			// (the line) rewritten on its way (see Hook.before): a page answered here would
			// leave the recorded request unserved, and replay would
			// hold what the recording ordered after it.
			pr.live, pr.event = p.Session, rf
			return pr, replayer.Action{}
		}
		return pr, page(req, res, &next)
	}
}

// followCursor answers the pages asked for with pr's cursor: the same
// cursor again the first time for repeated-cursor, else the recorded
// result with no nextCursor.
func followCursor(pr *Probe, rec *store.Recording, req *request) (replayer.Action, bool) {
	c, ok := cursor(req)
	if !ok || c != pr.cursor || !isList(req) || req.msg.Method != pr.req.msg.Method || pr.pages >= maxPages ||
		(pr.sid != "" && req.sid != pr.sid) || pr.Transport == store.LegacySSE {
		return replayer.Action{}, false
	}
	res, _ := recordedResult(rec, req.msg.Method)
	if res == nil {
		return replayer.Action{}, false
	}
	pr.pages++
	if pr.Kind == RepeatedCursor && pr.pages == 1 {
		return page(req, res, &pr.cursor), true
	}
	return page(req, res, nil), true
}

func judgeEmptyCursor(pr *Probe, after []*request) (string, Verdict) {
	var other *request
	for _, r := range after {
		if !r.msg.HasID() || !r.sent() {
			continue
		}
		c, has := cursor(r)
		same := isList(r) && r.msg.Method == pr.req.msg.Method
		switch {
		case same && has && c == "" && legacy(pr.Revision):
			return `asked again with cursor "" (` + r.describe() + `), which ends the list before 2026-07-28`, VerdictFail
		case same && has && c == "":
			return `asked for the next page with cursor ""`, VerdictPass
		case same && !legacy(pr.Revision):
			return `listed again without the cursor "" it was given (` + r.describe() + `)`, VerdictFail
		case other == nil:
			other = r
		}
	}
	switch {
	case other == nil:
		return "sent nothing more", VerdictNotObserved
	case legacy(pr.Revision):
		return "took the list as ended and went on (next: " + other.describe() + ")", VerdictPass
	}
	return `took the list as ended instead of asking with cursor "" (next: ` + other.describe() + ")", VerdictFail
}

func judgeRepeatedCursor(pr *Probe, after []*request) (string, Verdict) {
	n := 0
	for _, r := range after {
		if c, ok := cursor(r); ok && c == pr.cursor && isList(r) && r.msg.Method == pr.req.msg.Method {
			n++
		}
	}
	switch n {
	case 0:
		return "did not ask for the next page (the repeated cursor was never met)", VerdictNotObserved
	case 1:
		return "asked for the next page, then stopped at the repeated cursor", VerdictPass
	}
	return fmt.Sprintf("sent the repeated cursor again (%d pages asked for with it)", n), VerdictFail
}

// recordedResult returns the result the recording answered its first
// request of method with, and its frame; nil when none.
func recordedResult(rec *store.Recording, method string) (json.RawMessage, *store.Frame) {
	id := ""
	for i := range rec.Frames {
		f := &rec.Frames[i]
		switch {
		case id == "" && f.Direction == store.ClientToServer && f.Method == method && f.ID != "":
			id = f.ID
		case id != "" && f.Direction == store.ServerToClient && f.ID == id:
			if m := parseFrame(f); m.Result != nil {
				return m.Result, f
			}
		}
	}
	return nil, nil
}

// rewrite returns, for the recorded event of pr's first page about to
// go at p, the event with pr's nextCursor and the live id; false when p
// is not that event.
func rewrite(pr *Probe, p *replayer.Point) ([]byte, bool) {
	f := p.Frame
	if pr.event == nil || f == nil || p.Session != pr.live || f.Direction != store.ServerToClient || f.Kind != store.KindResult || f.ID != pr.event.ID {
		return nil, false
	}
	res := parseFrame(f).Result
	pr.event = nil
	body := page(pr.req, res, &pr.cursor).Body
	if pr.Kind == UnknownResultType {
		body = unknownPage(pr.req, res).Body
	}
	if p.Request == nil {
		return body, true // a stdio line
	}
	return event(f, body), true
}

// page answers req with result, its nextCursor set to next (removed when
// next is nil).
func page(req *request, result json.RawMessage, next *string) replayer.Action {
	return answerWith(req, result, func(m map[string]json.RawMessage) {
		delete(m, "nextCursor")
		if next != nil {
			m["nextCursor"], _ = json.Marshal(*next)
		}
	})
}

// answerWith answers req with result, its members changed by edit.
func answerWith(req *request, result json.RawMessage, edit func(map[string]json.RawMessage)) replayer.Action {
	var m map[string]json.RawMessage
	if json.Unmarshal(result, &m) != nil || m == nil {
		m = map[string]json.RawMessage{}
	}
	edit(m)
	res, _ := json.Marshal(m)
	body, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  json.RawMessage `json:"result"`
	}{"2.0", req.msg.ID, res})
	return replayer.Action{Status: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}}, Body: body}
}
