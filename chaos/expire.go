package chaos

import (
	"net/http"

	"github.com/mcpvcr/mcpvcr/store"
)

// expire: the session expires (404) at a request; the client must start
// a new one (a resume-404 is judged the same way once it has resumed).

func sitesExpire(rec *store.Recording, st *store.Stream, base Fault, evs []*store.Frame, requests int, cancelled map[int64]*store.Frame) []Fault {
	var out []Fault
	if st.Kind == store.PostStream && requests >= 3 {
		out = append(out, Fault{Kind: base.Kind, Request: requests})
	}
	return out
}

func judgeExpire(inj *injection, after, mine []chaosAction) (string, Verdict) {
	return judgeGone(inj, after, "")
}

// judgeGone judges what a client did after a 404 told it its session is
// gone (an expiry, a resumption answered 404): it must start a new
// session, initialize without Mcp-Session-Id, and not use the old id
// again. after are the client's requests (see ofClient). A request with
// the old id counts as using it again only when it came on a connection
// that had been answered 404 for the session before: one on another
// connection may have been under way before the client read the 404 (a
// GET stream it was opening, say), and is not its reaction. A new
// session on a connection nothing came on before may be this client's or
// another's: not observed. did, if not empty, says what it did before.
func judgeGone(inj *injection, after []chaosAction, did string) (string, Verdict) {
	say := func(s string) string {
		if did == "" {
			return s
		}
		return did + ", then " + s
	}
	var next *chaosAction
	underWay := 0
	for i, a := range after {
		old := inj.mine(a) && a.method != http.MethodDelete
		switch {
		case old && a.after404:
			return say("used the expired session id again: " + describe(a)), VerdictFail
		case old:
			underWay++ // on a connection that had not been told yet
			continue
		case a.sid == "" && a.rpcMethod == "initialize":
			return say("started a new session (initialize without Mcp-Session-Id)"), VerdictPass
		}
		if next == nil {
			next = &after[i]
		}
	}
	if underWay > 0 && next == nil {
		next = &after[0]
	}
	if inj.freshInit != "" {
		// A client may start its new session on a new connection; so
		// may another client: neither a pass nor a fail.
		return say("sent nothing more that is surely its own; a new session began on a new connection, this client's or another's (the wire does not tell)"), VerdictNotObserved
	}
	if next == nil {
		return silent(inj, say("sent nothing more (no new session seen)"))
	}
	if inj.more {
		return say("did not start a new session, which a client must after a 404 to its session id (next: " + describe(*next) + ")"), VerdictFail
	}
	return say("did not start a new session (next: " + describe(*next) + ")"), VerdictNotObserved
}
