package chaos

import (
	"bytes"
	"fmt"
	"net/http"
	"slices"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/replayer"
	"github.com/mcpvcr/mcpvcr/store"
)

// The cuts: a stream dropped as a network failure would, resumable
// (cut-resumable, and resume-404 and resume-late, whose resumption is
// answered 404 or late) or not (cut). Where each can go and how the
// client is judged; run.go injects them (before and after).

func sitesResumable(rec *store.Recording, st *store.Stream, base Fault, evs []*store.Frame, requests int, cancelled map[int64]*store.Frame) []Fault {
	var out []Fault
	// A POST stream with a response still to come after event e,
	// and an event id among the first e.
	if st.Kind != store.PostStream || !st.SSE() || st.Status != 200 || st.End != store.EndComplete {
		return out
	}
	for e := 1; e < len(evs); e++ {
		if evs[e-1].HasEventID && evs[e-1].EventID != "" && !resumedInRecording(rec, st.ID) {
			f := base
			f.Event, f.Seq = e, evs[e-1].Seq
			out = append(out, f)
		}
	}
	return out
}

func judgeResumable(inj *injection, after, mine []chaosAction) (string, Verdict) {
	resume := -1
	for i, a := range mine {
		if a.method == http.MethodGet && a.lastEventID != "" {
			resume = i
			break
		}
	}
	if resume < 0 {
		if inj.gaveUp || inj.rpcID != "" && slices.ContainsFunc(mine, func(a chaosAction) bool { return a.cancels == inj.rpcID }) {
			// Its call was given up before a resumption was due: what
			// the stream still held is no longer owed.
			return "cancelled the request the stream answered (notifications/cancelled) instead of resuming", VerdictNotObserved
		}
		for _, a := range mine {
			if a.method == http.MethodGet {
				return "reconnected with a GET without Last-Event-ID (the last event it received had id " + inj.lastID + ")", VerdictFail
			}
		}
		if len(after) == 0 {
			return silent(inj, "sent nothing more")
		}
		return "never resumed: the rest of the stream was lost (next: " + describe(after[0]) + ")", VerdictFail
	}
	got := mine[resume].lastEventID
	if got != inj.lastID {
		return fmt.Sprintf("resumed with Last-Event-ID %s; the last event it received had id %s", got, inj.lastID), VerdictFail
	}
	did := "resumed with Last-Event-ID " + got
	switch inj.Kind {
	case FaultResumeLate:
		if inj.left {
			return did + ", then left before the late answer", VerdictFail
		}
		if !inj.delivered {
			return did + "; the late answer was not seen delivered", VerdictNotObserved
		}
		return did + " and waited for the late answer", VerdictPass
	case FaultResume404:
		// A 404 to a request with the session id says the session is
		// gone: the client must start a new one (initialize without
		// Mcp-Session-Id), as after an expiry.
		return judgeGone(inj, after[indexAfter(after, mine[resume])+1:], did+", got 404")
	}
	if !inj.delivered {
		if inj.left {
			return did + ", then left before the rest of the stream came", VerdictFail
		}
		return did + "; the rest of the stream was not seen delivered", VerdictNotObserved
	}
	return did + " and got the rest of the stream", VerdictPass
}

func sitesCut(rec *store.Recording, st *store.Stream, base Fault, evs []*store.Frame, requests int, cancelled map[int64]*store.Frame) []Fault {
	var out []Fault
	if st.Kind == store.SSEGetStream && st.Status == 200 {
		// HTTP+SSE: the one stream of the session, dropped after
		// its endpoint event and before the rest: the session ends.
		for e := 1; e < len(evs); e++ {
			f := base
			f.Event, f.Seq = e, evs[e-1].Seq
			out = append(out, f)
		}
		return out
	}
	if st.Kind != store.PostStream || !st.SSE() || st.Status != 200 || st.End != store.EndComplete || len(evs) == 0 {
		return out
	}
	if slices.ContainsFunc(evs, func(f *store.Frame) bool { return f.HasEventID && f.EventID != "" }) {
		return out
	}
	for e := 0; e < len(evs); e++ {
		f := base
		f.Event = e
		if e > 0 {
			f.Seq = evs[e-1].Seq
		}
		out = append(out, f)
	}
	return out
}

func judgeCut(inj *injection, after, mine []chaosAction) (string, Verdict) {
	if inj.pooled {
		return judgeLost(inj, mine, "cut")
	}
	if inj.StreamKind == store.SSEGetStream {
		return judgeSSECut(after, mine)
	}
	for _, a := range mine {
		if a.method == http.MethodGet && a.lastEventID != "" {
			return "resumed with Last-Event-ID " + a.lastEventID + " a stream that had no event ids", VerdictFail
		}
	}
	// Carrying on is a request of its own session: a GET stream it
	// had open, or another client's request, says nothing of it.
	for _, a := range mine {
		if (a.method == http.MethodPost && a.rpcMethod != "") || a.method == http.MethodDelete {
			return "did not resume (it cannot), carried on: " + describe(a), VerdictPass
		}
	}
	return silent(inj, "sent nothing more of its session")
}

// judgeSSECut judges an HTTP+SSE stream dropped mid-session: the
// session is over; the client may open a new SSE stream (a new session)
// or give up and say so. Requests to the dropped session's endpoint are
// answered nowhere: more than one (the first may have been under way at
// the cut) is a fail.
func judgeSSECut(after, mine []chaosAction) (string, Verdict) {
	posts := 0
	for _, a := range mine {
		if a.method == http.MethodPost {
			posts++
		}
	}
	if posts > 1 {
		return fmt.Sprintf("sent %d more requests to the dropped stream's endpoint, where no answer can come", posts), VerdictFail
	}
	for _, a := range after {
		if a.method == http.MethodGet && a.ls == nil {
			return "opened a new SSE stream (a new session)", VerdictPass
		}
	}
	if len(after) == 0 {
		return "sent nothing more (it gave up on the session, or waits)", VerdictNotObserved
	}
	if posts == 1 && len(after) == 1 {
		return "did not open a new SSE stream; one request followed, to the dropped session (" + describe(after[0]) + ")", VerdictNotObserved
	}
	return "did not open a new SSE stream (next: " + describe(after[0]) + ")", VerdictNotObserved
}

// judgeLost judges a 2026-07-28 request whose response stream was cut
// or closed early (how, for the report) before its response: the
// request is lost, and the client must send it again or give up on it
// (and say so), not wait for good.
func judgeLost(inj *injection, mine []chaosAction, how string) (string, Verdict) {
	want := jsonrpc.Parse([]byte(inj.body))
	for _, a := range mine {
		got := jsonrpc.Parse([]byte(a.body))
		if a.method == http.MethodPost && got.Method == want.Method && bytes.Equal(got.Params, want.Params) {
			return "sent the request again (" + describe(a) + ")", VerdictPass
		}
	}
	if len(mine) == 0 {
		return "sent nothing more (it may be waiting for the lost response)", VerdictNotObserved
	}
	return "did not send the request again; it gave up on it and carried on (next: " + describe(mine[0]) + ")", VerdictPass
}

// cutLocked notes what a cut of p.Stream left the client with: the id of
// the last event it got (lastID), the request the stream answers (the
// POST's) and whether the client had cancelled that request already.
func (cs *Hook) cutLocked(inj *injection, p *replayer.Point, lastID string) {
	inj.lastID = lastID
	if inj.rpcID == "" && p.Request != nil {
		for i := len(cs.actions) - 1; i >= 0; i-- {
			if cs.actions[i].req == p.Request {
				inj.rpcID = cs.actions[i].rpcID
				break
			}
		}
	}
	inj.gaveUp = inj.rpcID != "" && slices.ContainsFunc(cs.actions, func(a chaosAction) bool { return a.ls == p.Session && a.cancels == inj.rpcID })
}

// lastEventSent returns the id of the last event with an id among the
// first n events of st.
func lastEventSent(rec *store.Recording, st *store.Stream, n int) string {
	id := ""
	for i, f := range sseEvents(rec, st.ID) {
		if i >= n {
			break
		}
		if f.HasEventID {
			id = f.EventID
		}
	}
	return id
}
