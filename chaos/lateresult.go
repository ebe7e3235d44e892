package chaos

import (
	"fmt"
	"slices"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/replayer"
	"github.com/mcpvcr/mcpvcr/store"
)

// late-result: once the client cancels a request, a result for it all
// the same; the client must ignore it. Where the recording never answers
// the request, the result is chaos's own, sent where the stream ends
// (lateResult); where the recorded server answered it after the
// cancellation, it is that answer, sent as recorded (recordedLateLocked).

func sitesLateResult(rec *store.Recording, st *store.Stream, base Fault, evs []*store.Frame, requests int, cancelled map[int64]*store.Frame) []Fault {
	var out []Fault
	if req := cancelled[st.ID]; req != nil && st.Kind == store.PostStream && st.SSE() && st.Status == 200 {
		f := base
		f.Seq = req.Seq
		out = append(out, f)
	}
	return out
}

func judgeLateResult(inj *injection, after, mine []chaosAction) (string, Verdict) {
	if inj.left {
		if slices.ContainsFunc(mine, func(a chaosAction) bool { return a.cancels == inj.rpcID }) {
			return "closed the request's stream before its cancellation came: no late result could be sent", VerdictNotObserved
		}
		return "closed the request's stream before cancelling it: no late result was sent", VerdictNotObserved
	}
	if !inj.delivered {
		return "the late result was not seen delivered", VerdictNotObserved
	}
	for _, a := range mine {
		switch {
		case a.cancels == inj.rpcID:
			return "cancelled request " + inj.rpcID + " again after its late result", VerdictFail
		case a.rpcID == inj.rpcID && a.rpcMethod != "":
			return "sent request id " + inj.rpcID + " again after its late result: " + describe(a), VerdictFail
		}
	}
	if len(mine) == 0 {
		return "took the late result and sent nothing more", VerdictNotObserved
	}
	return "sent nothing more for request " + inj.rpcID + " after its late result and carried on (next: " + describe(mine[0]) + ")", VerdictPass
}

// lateResult is called where a followed stream ends without the
// answer to live request liveID, the recorded client having cancelled
// it: when a late-result fault is planned there and this client has
// cancelled it too, it sends a result all the same, on the request's
// stream (the stream is then over).
func (cs *Hook) lateResult(p *replayer.Point) replayer.Action {
	ls, rec, liveID := p.Session, p.Recording, p.LiveID
	n := p.StreamNumber
	sid := ls.ID()
	gone := p.Gone()
	cs.mu.Lock()
	cancelled := slices.ContainsFunc(cs.actions, func(a chaosAction) bool {
		return a.cancels == liveID && (a.ls == ls || (sid != "" && a.sid == sid))
	})
	var inj *injection
	ok := false
	if cancelled || gone {
		inj, ok = cs.takeLocked(ls, rec, func(g Fault) bool { return g.Kind == FaultLateResult && g.Stream == n })
	}
	if ok {
		inj.rpcID, inj.left = liveID, !cancelled
	}
	cs.mu.Unlock()
	if !ok {
		return replayer.Action{}
	}
	cs.announce(inj)
	if inj.left {
		return replayer.Action{Stop: true} // the client closed the stream before its cancellation came
	}
	method := ""
	if req := frameBySeq(rec, inj.Seq); req != nil {
		method = req.Method
	}
	// What the client did next is judged from the requests noted after
	// this point, not after Sent: a client quick to act on the late
	// result (a second cancellation, its next request) may be noted
	// before Sent runs, and was then missed.
	cs.mu.Lock()
	inj.at = len(cs.actions) - 1
	cs.mu.Unlock()
	return replayer.Action{Send: fmt.Appendf(nil, "event: message\ndata: %s\n\n", lateResult(liveID, method)), Sent: func(err error) {
		cs.mu.Lock()
		inj.delivered, inj.left = err == nil, err != nil
		cs.mu.Unlock()
	}}
}

// lateResult is the result a late-result fault sends for request id of
// method: the recording holds none (its client cancelled first).
func lateResult(id, method string) []byte {
	result := `{}`
	if method == "tools/call" {
		result = `{"content":[{"type":"text","text":"mcpvcr replay --chaos: a late result (an injected fault)"}]}`
	}
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"result":%s}`, id, result)
}

// frameBySeq returns the frame of rec with recorded seq seq.
func frameBySeq(rec *store.Recording, seq int64) *store.Frame {
	for i := range rec.Frames {
		if rec.Frames[i].Seq == seq {
			return &rec.Frames[i]
		}
	}
	return nil
}

// recordedLateLocked takes a late-result planned on the stream of p
// (number p.StreamNumber) once this client has cancelled the request the
// stream answers, where the recording holds an answer after the
// cancellation: that answer, about to be sent, is the late result, and is
// awaited (delivered once written). cs.mu is held.
func (cs *Hook) recordedLateLocked(p *replayer.Point, key liveStream) (*injection, bool) {
	if !slices.ContainsFunc(cs.planLocked(cs.pinLocked(p.Session, p.Recording)), func(g Fault) bool {
		return g.Kind == FaultLateResult && g.Stream == p.StreamNumber
	}) {
		return nil, false // nothing planned here: no need to look for the request
	}
	id := string(jsonrpc.Parse([]byte(cs.bodyOfLocked(p.Request))).ID)
	sid := p.Session.ID()
	if id == "" || !slices.ContainsFunc(cs.actions, func(a chaosAction) bool {
		return a.cancels == id && (a.ls == p.Session || (sid != "" && a.sid == sid))
	}) {
		return nil, false
	}
	inj, ok := cs.takeLocked(p.Session, p.Recording, func(g Fault) bool { return g.Kind == FaultLateResult && g.Stream == p.StreamNumber })
	if !ok {
		return nil, false
	}
	inj.rpcID, inj.at = id, len(cs.actions)-1
	cs.awaiting[key] = inj
	return inj, true
}
