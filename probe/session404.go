package probe

import (
	"net/http"

	"github.com/mcpvcr/mcpvcr/replayer"
	"github.com/mcpvcr/mcpvcr/store"
)

// session-404: a tools/call of a legacy Streamable HTTP session (2025-03-26
// and later) is answered 404, as a server answers a session it expired,
// and so is every later request with that session id. The client must
// start a new session (initialize without Mcp-Session-Id) and not use the
// old id again; a client that carries on sends the call again in the new
// session.

const secSession = "docs/specification/2025-11-25/basic/transports.mdx §Session Management"

func init() {
	specs[Session404] = &spec{
		name: "session-404",
		allowed: func(rev string, tr store.Transport) bool {
			return tr == store.StreamableHTTP && legacy(rev) && rev >= "2025-03-26"
		},
		rule: func(string) (string, string, Level) {
			return "a 404 to a request with Mcp-Session-Id MUST be met with a new initialize without it; the call then goes again in the new session", secSession, Error
		},
		place:  placeSession404,
		follow: followSession404,
		judge:  judgeSession404,
	}
	where[Session404] = "a tools/call of a legacy Streamable HTTP session (2025-03-26 to 2025-11-25)"
}

func placeSession404(p *replayer.Point, _ *store.Recording, req *request) (*Probe, replayer.Action) {
	if p.Pooled || p.Session == nil || req.sid == "" || req.method != http.MethodPost || req.msg.Method != "tools/call" || !req.msg.HasID() {
		return nil, replayer.Action{}
	}
	return &Probe{What: "answered 404 (Session not found) instead of the recorded result, and every later request of the session too"}, gone(req)
}

// followSession404 answers every later request of the session 404.
func followSession404(pr *Probe, _ *store.Recording, req *request) (replayer.Action, bool) {
	if req.sid != pr.sid {
		return replayer.Action{}, false
	}
	return gone(req), true
}

func gone(req *request) replayer.Action {
	return errorAction(http.StatusNotFound, req.msg.ID, -32001, "Session not found")
}

func judgeSession404(pr *Probe, after []*request) (string, Verdict) {
	fresh := false
	var other *request
	ck := callKey(pr.req)
	for _, r := range after {
		switch {
		case r.sid == pr.sid && r.method != http.MethodDelete:
			return "used the session id answered 404 again (" + r.describe() + ")", VerdictFail
		case r.sid == "" && r.msg.Method == "initialize":
			fresh = true
		case fresh && r.msg.Method == "tools/call" && callKey(r) == ck:
			return "initialized a new session, then sent the call again in it", VerdictPass
		case other == nil && r.method != http.MethodDelete:
			other = r
		}
	}
	switch {
	case fresh:
		return "initialized a new session but did not send the call again", VerdictPass
	case other != nil:
		return "did not initialize a new session (next: " + other.describe() + ")", VerdictFail
	}
	return "sent nothing more (no new session)", VerdictNotObserved
}
