package chaos

import (
	"net/http"
	"slices"
	"strings"

	"github.com/mcpvcr/mcpvcr/replayer"
)

// Which client sent what. A verdict is about the client that met the
// fault, and what it did once it knew of it: the connection a request
// came on says whose it is and what it knew (over HTTP/1.1 a client sends
// its next request on a connection only once it has read the answer
// before), and the requests still unanswered say whether a client that
// left was done.

// connState is what chaos knows of one client connection: the session
// of its last request, and the sessions a request on it was told are
// gone (404).
type connState struct {
	ls   *replayer.Session
	sid  string
	gone map[*replayer.Session]bool
}

// connOf names the connection r came on, "" over HTTP/2, where requests
// share a connection side by side and its order says nothing.
func connOf(r *http.Request) string {
	if r.ProtoMajor != 1 {
		return ""
	}
	return r.RemoteAddr
}

// connLocked notes the connection a came on, what came before it
// there and whether that was a 404 for its session.
func (cs *Hook) connLocked(a *chaosAction) {
	if a.conn = connOf(a.req); a.conn == "" {
		return
	}
	c := cs.conns[a.conn]
	if c == nil {
		c = &connState{gone: map[*replayer.Session]bool{}}
		cs.conns[a.conn] = c
		a.freshConn = true
	}
	a.prevLS, a.prevSID = c.ls, c.sid
	a.after404 = a.ls != nil && c.gone[a.ls]
	c.ls, c.sid = a.ls, a.sid
}

// goneLocked notes that r, a request of ls, is answered 404: its
// session is gone. The client's next request on that connection is sent
// knowing it.
func (cs *Hook) goneLocked(r *http.Request, ls *replayer.Session) {
	if c := cs.conns[connOf(r)]; c != nil && ls != nil {
		c.gone[ls] = true
	}
}

// waitingLocked names the requests of ls the client still waits for:
// JSON-RPC requests it sent and did not cancel whose response it was
// not sent, "" when there is none.
func (cs *Hook) waitingLocked(ls *replayer.Session) string {
	var names []string
	for i, a := range cs.actions {
		if a.ls != ls || a.method != http.MethodPost || a.rpcID == "" || a.rpcMethod == "" || a.req == nil || cs.answered[a.req] {
			continue
		}
		if n, ok := cs.streamOf[a.req]; ok && cs.responded[liveStream{ls, n}] {
			continue
		}
		if slices.ContainsFunc(cs.actions[i:], func(b chaosAction) bool { return b.ls == ls && b.cancels == a.rpcID }) {
			continue // given up
		}
		names = append(names, a.rpcMethod)
	}
	return strings.Join(names, ", ")
}

// bodyOfLocked returns the body of live request r, "" when unseen.
func (cs *Hook) bodyOfLocked(r *http.Request) string {
	for i := len(cs.actions) - 1; i >= 0; i-- {
		if cs.actions[i].req == r {
			return cs.actions[i].body
		}
	}
	return ""
}
