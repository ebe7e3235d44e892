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
// again. did, if not empty, says what it did before.
func judgeGone(inj *injection, after []chaosAction, did string) (string, Verdict) {
	say := func(s string) string {
		if did == "" {
			return s
		}
		return did + ", then " + s
	}
	for _, a := range after {
		if a.sid == inj.sid && inj.sid != "" && a.method != http.MethodDelete {
			return say("used the expired session id again: " + describe(a)), VerdictFail
		}
		if a.sid == "" && a.rpcMethod == "initialize" {
			return say("started a new session (initialize without Mcp-Session-Id)"), VerdictPass
		}
	}
	if len(after) == 0 {
		return silent(inj, say("sent nothing more (no new session seen)"))
	}
	if inj.more {
		return say("did not start a new session, which a client must after a 404 to its session id (next: " + describe(after[0]) + ")"), VerdictFail
	}
	return say("did not start a new session (next: " + describe(after[0]) + ")"), VerdictNotObserved
}
