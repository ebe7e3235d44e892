package chaos

import (
	"slices"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/replayer"
	"github.com/mcpvcr/mcpvcr/store"
)

// late-request: a server request that comes after the call it belongs to
// ended. Over stdio, right after the response of a tools/call, chaos
// writes a ping of its own (the one request any server may send at any
// time); the client must answer it ("the receiver MUST respond
// promptly"), though the call is over, and go on. Its answer is taken by
// chaos: the recording expects none. Over Streamable HTTP a server sends
// such a request on the standalone GET stream, which replay writes as
// recorded; on the call's own stream, after its response, a client may
// have stopped reading (the server should close it there), so the kind is
// stdio's.

// latePingLine is chaos's ping, as a stdio line.
var latePingLine = []byte(`{"jsonrpc":"2.0","id":` + earlyPingID + `,"method":"ping"}` + "\n")

// lateRequestSites returns the responses to tools/call of a stdio session
// that the recorded client awaited (not cancelled) and went on after with
// two requests or more: a client that answers its server's requests as
// they come, beside its own, has then had the time to answer the ping
// before it ends (one that closes at once may leave it unanswered).
func lateRequestSites(rec *store.Recording) []Fault {
	awaited := awaitedResponses(rec)
	calls := map[string]bool{}
	var out []Fault
	for i := range rec.Frames {
		f := &rec.Frames[i]
		switch {
		case f.Direction == store.ClientToServer && f.Kind == store.KindRequest && f.Method == "tools/call":
			calls[f.ID] = true
		case f.Direction == store.ServerToClient && f.Kind.IsResponse() && calls[f.ID] && awaited[f.Seq] && requestsAfter(rec, f.Seq) >= 2:
			out = append(out, Fault{Kind: FaultLateRequest, Seq: f.Seq})
		}
	}
	return out
}

// lateRequestAt is called before recorded line p.Frame goes: where a
// late-request is planned, the line goes with chaos's ping right after
// it. cs.mu is held.
func (cs *Hook) lateRequestAtLocked(p *replayer.Point) (*injection, replayer.Action, bool) {
	inj, ok := cs.takeLocked(p.Session, p.Recording, func(g Fault) bool { return g.Kind == FaultLateRequest && g.Seq == p.Frame.Seq })
	if !ok {
		return nil, replayer.Action{}, false
	}
	// The call's request may be noted only after this: it is no step.
	inj.delivered, inj.at, inj.rpcID = true, len(cs.actions)-1, string(jsonrpc.Parse(p.Body).ID)
	line := slices.Clip(p.Body)
	if len(line) > 0 && line[len(line)-1] != '\n' {
		line = append(line, '\n')
	}
	return inj, replayer.Action{Replace: append(line, latePingLine...)}, true
}

// takePingAnswer notes, over stdio, the client's answer to chaos's ping
// and takes it (replay never reads it); it reports whether line was one.
func (cs *Hook) takePingAnswer(p *replayer.Point) bool {
	if !isPingAnswer(p.Body) {
		return false
	}
	live := jsonrpc.Parse(p.Body)
	cs.mu.Lock()
	cs.actions = append(cs.actions, chaosAction{ls: p.Session, rpcID: string(live.ID), body: string(live.Raw), at: p.At})
	cs.mu.Unlock()
	return true
}

// judgeLateRequest judges a client sent a ping after the call it came
// with ended: it answered it: pass; it went on without answering, or sent
// nothing more where the recorded client went on: fail.
func judgeLateRequest(inj *injection, mine []chaosAction) (string, Verdict) {
	for _, a := range mine {
		if a.rpcMethod == "" && isPingAnswer([]byte(a.body)) {
			return "answered the server's ping that came after the call's response", VerdictPass
		}
	}
	for _, a := range mine {
		if a.rpcMethod != "" && a.rpcID != inj.rpcID {
			return "went on (next: " + describe(a) + ") without answering the server's ping (a ping must be answered, even after the call it came with)", VerdictFail
		}
	}
	return silent(inj, "sent nothing more after the ping")
}

// requestsAfter counts the client requests of rec after seq.
func requestsAfter(rec *store.Recording, seq int64) int {
	n := 0
	for _, f := range rec.Frames {
		if f.Seq > seq && f.Direction == store.ClientToServer && f.Kind == store.KindRequest {
			n++
		}
	}
	return n
}
