package chaos

import (
	"fmt"
	"github.com/mcpvcr/mcpvcr/internal/causal"
	"net/http"
	"slices"
	"time"

	"github.com/mcpvcr/mcpvcr/replayer"
	"github.com/mcpvcr/mcpvcr/store"
)

// reorderHold is a reorder waiting for its other notification: sent is
// closed once it is.
type reorderHold struct {
	inj  *injection
	sent chan struct{}
}

// hold holds a reorder's notification, drawn from rec, until its
// other notification was sent, for at most the fault's Delay: then it is
// sent anyway, and a warning says so. It never waits longer, so a client
// that never opens the other stream gets the held notification all the
// same.
//
// Other candidate sessions may send the other notification only once the
// held one's stream goes on (their servers sent it later): while they are
// in play, the other stream waits for them to agree, and they wait for the
// held notification. So, as with an awaited answer the candidates
// disagree on, once the hold has lasted the settle time with other
// candidates in play, replay keeps rec's session alone.
func (cs *Hook) hold(p *replayer.Point, h *reorderHold) replayer.Action {
	ls, rec := p.Session, p.Recording
	bound := p.Clock.After(h.inj.Delay)
	var settle <-chan time.Time
	if ls.Candidates() > 1 {
		settle = p.Clock.After(min(ls.Settle(), h.inj.Delay))
	}
	done := p.Request.Context().Done()
wait:
	for {
		select {
		case <-h.sent:
			return replayer.Action{}
		case <-settle:
			settle = nil
			if ls.CommitTo(rec) {
				cs.logger().Warn("chaos: reorder: candidate sessions disagreed on what the other stream sends next; replaying only the session the pair was drawn from", "session", rec.Session.ID)
			}
		case <-bound:
			break wait
		case <-done:
			break wait
		case <-p.Closed:
			break wait
		}
	}
	cs.mu.Lock()
	cs.holds = slices.DeleteFunc(cs.holds, func(g *reorderHold) bool { return g == h })
	if h.inj.first { // the other one was sent as the wait ended
		cs.mu.Unlock()
		return replayer.Action{}
	}
	gone := p.Gone()
	timedOut := !gone
	h.inj.timedOut = timedOut
	h.inj.left = gone
	cs.mu.Unlock()
	if gone {
		return replayer.Action{Stop: true}
	}
	if timedOut {
		cs.logger().Warn(fmt.Sprintf("chaos: reorder: seq %d was not sent within %s; sent the held seq %d anyway (in recorded order)", h.inj.OtherSeq, h.inj.Delay, h.inj.Seq),
			"session", h.inj.session, "seed", cs.Seed)
	}
	return replayer.Action{}
}

// clientAfter reports whether the recorded client sent a request (other
// than a DELETE's) after seq.
func clientAfter(rec *store.Recording, seq int64) bool {
	if seq < 0 {
		return false
	}
	return slices.ContainsFunc(rec.Frames, func(f store.Frame) bool {
		return f.Seq > seq && f.Direction == store.ClientToServer && f.Kind == store.KindRequest
	})
}

// faultSeq returns the recorded seq at which f hits rec: the event at a
// stream's fault, the first client frame of the stream a fault before
// any event hits, of the POST a request's fault hits; -1 when none.
func faultSeq(rec *store.Recording, f Fault) int64 {
	if f.Seq > 0 {
		return f.Seq
	}
	posts := 0
	for n, st := range rec.Streams {
		if f.Request > 0 && st.Kind == store.PostStream {
			posts++
		}
		if (f.Request > 0 && posts == f.Request) || (f.Request == 0 && f.Stream == n+1) {
			for _, fr := range rec.Frames {
				if fr.StreamID == st.ID && fr.Direction == store.ClientToServer {
					return fr.Seq
				}
			}
			return -1
		}
	}
	return -1
}

// reorderSites returns the pairs of server messages of rec that may be
// sent in the other order: two notifications, or the responses to two
// concurrent requests, recorded one right after the other (nothing of the
// session between them, on any stream), on two SSE streams (a GET and a
// POST, or two POSTs; responses, on two POSTs) that the recording does
// not resume. Holding the earlier one until the later is sent keeps each
// stream's own order, so nothing moves across a request and its response
// on one stream; and nothing the client sent falls between them, so
// neither is sent before the request that caused it arrives. A progress
// notification is held only on its request's POST stream, where its
// response comes after it.
func reorderSites(rec *store.Recording) []Fault {
	byID := map[int64]int{}
	for i := range rec.Streams {
		byID[rec.Streams[i].ID] = i
	}
	awaited := awaitedResponses(rec)
	ok := func(f *store.Frame) bool {
		i, found := byID[f.StreamID]
		if !found || f.Direction != store.ServerToClient || !f.SSE || f.Malformed {
			return false
		}
		st := &rec.Streams[i]
		switch {
		case f.Kind.IsResponse():
			if st.Kind != store.PostStream || !awaited[f.Seq] {
				return false
			}
		case f.Kind != store.KindNotification:
			return false
		}
		return (st.Kind == store.PostStream || st.Kind == store.GetStream) && st.Status == 200 && st.SSE() && !resumedInRecording(rec, st.ID)
	}
	var out []Fault
	var prev *store.Frame
	for i := range rec.Frames {
		f := &rec.Frames[i]
		if f.Comment || (f.SSE && f.Kind == store.KindEmpty) {
			continue // a transport event, not the session's
		}
		if a := prev; a != nil && ok(a) && ok(f) && a.StreamID != f.StreamID && a.Kind.IsResponse() == f.Kind.IsResponse() {
			st := &rec.Streams[byID[a.StreamID]]
			if a.Method != "notifications/progress" || st.Kind == store.PostStream {
				evs := sseEvents(rec, a.StreamID)
				e := slices.Index(evs, a)
				out = append(out, Fault{Kind: FaultReorder, Stream: byID[a.StreamID] + 1, StreamKind: st.Kind, Event: e, Seq: a.Seq,
					Other: byID[f.StreamID] + 1, OtherKind: rec.Streams[byID[f.StreamID]].Kind, OtherSeq: f.Seq, Delay: max(f.Offset-a.Offset, 0).Round(time.Millisecond) + reorderBound,
					Responses: a.Kind.IsResponse()})
			}
		}
		prev = f
	}
	return out
}

// reorderBound is how much longer than recorded a reorder holds its
// notification for the other one to be sent. A variable for tests, whose
// loaded machines may take longer than that to open a stream.
var reorderBound = time.Second

// awaitedResponses returns the seqs of rec's responses whose request the
// recorded client still awaited (did not cancel): the ones a reorder may
// swap. A late answer to a cancelled request is late-result's.
func awaitedResponses(rec *store.Recording) map[int64]bool {
	m := causal.Pair(rec)
	out := map[int64]bool{}
	for _, x := range m.Msgs {
		if x.M.Kind.IsResponse() && x.Answers != causal.None && m.Msgs[x.Answers].Cancelled == causal.None {
			out[x.Frame.Seq] = true
		}
	}
	return out
}

// judgeReorder judges a reorder by what the client did next: it carries
// on (its next request comes, in the same session) or it fails (it
// starts over with initialize, drops the session, sends the request of a
// held response again, or stops where the recorded client went on).
func judgeReorder(inj *injection, after []chaosAction) (string, Verdict) {
	what := inj.message()
	switch {
	case inj.left:
		for _, a := range after {
			if inj.mine(a) && a.method == http.MethodPost && a.rpcMethod != "" && a.rpcMethod != "initialize" {
				return "carried on in the same session (next: " + describe(a) + ") and closed the held " + what + "'s stream before it went out" + unseen, VerdictPass
			}
		}
		return "left while the " + what + " was held", VerdictFail
	case !inj.delivered:
		return "the held " + what + " was not seen delivered", VerdictNotObserved
	}
	how := "took both " + what + "s in the other order"
	if inj.timedOut {
		how = "took the held " + what + " in recorded order (the other one never came within " + inj.Delay.String() + ")"
	}
	if inj.resent {
		return how + ", then sent the request of the held response (id " + inj.rpcID + ") again (a response is matched to its request by id, whatever the order)", VerdictFail
	}
	for _, a := range after {
		switch {
		case a.rpcMethod == "initialize":
			// A new session (no session id) is the client's too.
			return how + ", then started over: " + describe(a) + unseen, VerdictFail
		case !inj.mine(a) || a.req != nil && a.req == inj.held || a.method == "" && a.rpcMethod != "" && slices.Contains(inj.pair, a.rpcID):
			continue // another's, or a request of the pair itself
		case inj.Responses && a.method == http.MethodPost && a.body == inj.body:
			return how + ", then sent the request of the held response again: " + describe(a) + " (a response is matched to its request by id, whatever the order)", VerdictFail
		case a.method == http.MethodDelete && inj.more:
			return how + ", then dropped the session (DELETE) where the recorded client went on" + unseen, VerdictFail
		case (a.method == http.MethodPost || a.method == "") && a.rpcMethod != "": // a POST, or a line over stdio
			return how + " and carried on in the same session (next: " + describe(a) + ")" + unseen, VerdictPass
		}
	}
	if inj.more {
		return how + ", then sent no request more where the recorded client went on" + unseen, VerdictFail
	}
	return how + "; the recorded client sent no request after them either" + unseen, VerdictNotObserved
}
