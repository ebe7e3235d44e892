package chaos

import (
	"net/http"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/store"
)

// early-ping: a server request at an awkward moment, a ping on
// initialize's stream before its response (the one request a server may
// send before the session is initialized). The client must answer it
// ("the receiver MUST respond promptly") while it is still connecting,
// and go on with its session. The ping is chaos's own (the recording
// holds none), and so is the 202 its answer gets.

// earlyPingID is the id of chaos's ping: a string no recorded server
// request uses.
const earlyPingID = `"mcpvcr-chaos-ping"`

// earlyPingEvent is the SSE event of chaos's ping.
var earlyPingEvent = []byte("event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":" + earlyPingID + ",\"method\":\"ping\"}\n\n")

// sitesEarlyPing returns the response of initialize, when an SSE event of
// its POST's stream: the ping goes just before it.
func sitesEarlyPing(rec *store.Recording, st *store.Stream, base Fault, evs []*store.Frame, requests int, cancelled map[int64]*store.Frame) []Fault {
	if requests != 1 {
		return nil
	}
	return resultEvents(st, base, evs)
}

// isPingAnswer reports whether body answers chaos's ping.
func isPingAnswer(body []byte) bool {
	m := jsonrpc.Parse(body)
	return m.Kind.IsResponse() && string(m.ID) == earlyPingID
}

// judgeEarlyPing judges a client sent a ping while it was initializing:
// it answered it: pass; it went on without answering, or sent nothing
// more where the recorded client went on: fail.
func judgeEarlyPing(inj *injection, mine []chaosAction) (string, Verdict) {
	if !inj.delivered {
		return "the ping was not seen written (the client left first)", VerdictNotObserved
	}
	for _, a := range mine {
		if a.method == http.MethodPost && isPingAnswer([]byte(a.body)) {
			return "answered the server's ping during initialize", VerdictPass
		}
	}
	for _, a := range mine {
		if a.method == http.MethodDelete || a.method == http.MethodPost && a.rpcMethod != "" {
			return "went on (next: " + describe(a) + ") without answering the server's ping (a ping must be answered)", VerdictFail
		}
	}
	return silent(inj, "sent nothing more after the ping")
}
