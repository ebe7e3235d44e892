package chaos

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/internal/termtext"
	"github.com/mcpvcr/mcpvcr/store"
)

// Verdict is how a client fared under one injected fault.
type Verdict int

// The verdicts.
const (
	VerdictUnknown     Verdict = iota
	VerdictPass                // the client did what the protocol asks
	VerdictFail                // it did not
	VerdictNotObserved         // the wire does not show what it did
)

var verdictNames = [...]string{"unknown", "pass", "fail", "not observed"}

// String returns the verdict as the report prints it.
func (v Verdict) String() string {
	if v < 0 || int(v) >= len(verdictNames) {
		return "unknown"
	}
	return verdictNames[v]
}

// Result is one fault chaos replay injected, and what the client did
// next.
type Result struct {
	Fault
	// Session is the recorded session the fault was placed in.
	Session int64
	// Did says what the client did next, as the wire showed it.
	Did     string
	Verdict Verdict
}

// Results judges every fault injected so far by what the client did
// next. Call it once the server has stopped serving.
func (h *Hook) Results() []Result {
	cs := h.state()
	cs.mu.Lock()
	defer cs.mu.Unlock()
	var out []Result
	// In plan order: the order in which concurrent requests reached the
	// faults is the client's, not the seed's.
	injected := slices.Clone(cs.injected)
	slices.SortStableFunc(injected, func(a, b *injection) int {
		return cmp.Or(cmp.Compare(a.session, b.session), cmp.Compare(a.index, b.index))
	})
	for _, inj := range injected {
		did, v := judge(inj, cs.actions[min(inj.at+1, len(cs.actions)):])
		out = append(out, Result{Fault: inj.Fault, Session: inj.session, Did: did, Verdict: v})
	}
	return out
}

// mine reports whether a names the live session inj was injected into.
func (inj *injection) mine(a chaosAction) bool {
	if inj.pooled {
		return a.sid == "" // a 2026-07-28 exchange names no session
	}
	return a.ls == inj.ls || (inj.sid != "" && a.sid == inj.sid)
}

// judge says what the client did after inj, from the requests that
// followed it, and gives the verdict.
func judge(inj *injection, after []chaosAction) (string, Verdict) {
	var mine []chaosAction
	for _, a := range after {
		if inj.mine(a) {
			mine = append(mine, a)
		}
	}
	switch inj.Kind {
	case FaultCutResumable, FaultResume404, FaultResumeLate:
		resume := -1
		for i, a := range mine {
			if a.method == http.MethodGet && a.lastEventID != "" {
				resume = i
				break
			}
		}
		if resume < 0 {
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
	case FaultRetry:
		if inj.cutAt.IsZero() {
			return "got the retry, but the stream went no further than the planned cut", VerdictNotObserved
		}
		// How the client resumed first, whether or not the rest reached
		// it: a resumption too soon fails either way.
		cut := *inj
		cut.Kind, cut.delivered = FaultCutResumable, true
		did, v := judge(&cut, after)
		if v != VerdictPass {
			return did, v
		}
		did = strings.TrimSuffix(did, " and got the rest of the stream")
		for _, a := range mine {
			if a.method == http.MethodGet && a.lastEventID != "" {
				gap := a.at.Sub(inj.cutAt).Round(time.Millisecond)
				if gap < inj.Delay/2 {
					return fmt.Sprintf("%s %s after the cut, sooner than half the retry of %s it was given", did, gap, inj.Delay), VerdictFail
				}
				if !inj.delivered {
					return did + "; the rest of the stream was not seen delivered", VerdictNotObserved
				}
				return fmt.Sprintf("%s %s after the cut (no sooner than half the retry of %s it was given) and got the rest of the stream", did, gap, inj.Delay), VerdictPass
			}
		}
		return did, v
	case FaultLateResult:
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
	case FaultCloseEarly:
		return judgeLost(inj, mine, "closed early")
	case FaultCut:
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
	case FaultExpire:
		return judgeGone(inj, after, "")
	case FaultRefuseGet:
		gets, other := 0, -1
		for i, a := range mine {
			if a.method == http.MethodGet && a.lastEventID == "" {
				gets++
			} else if other < 0 {
				other = i
			}
		}
		if gets >= 3 {
			return fmt.Sprintf("asked for the refused GET stream %d more times", gets), VerdictFail
		}
		if other < 0 {
			return "sent nothing more", VerdictNotObserved
		}
		return "carried on without the GET stream (next: " + describe(mine[other]) + ")", VerdictPass
	case FaultDelay, FaultDropPriming:
		switch {
		case inj.left && inj.StreamKind == store.GetStream && !inj.more:
			// The standalone GET stream carries what the server sends of
			// its own; a client done with its work may close it.
			return "left before the delayed event of its GET stream came; the recorded client sent no request after it either", VerdictNotObserved
		case inj.left:
			return "left before the event came", VerdictFail
		case inj.delivered && inj.Kind == FaultDelay:
			return "waited and took the event", VerdictPass
		case inj.delivered:
			// The events after the missing priming one were written; the
			// client shows it took them by going on without asking again.
			for _, a := range mine {
				if a.method == http.MethodPost && inj.body != "" && a.body == inj.body {
					return "sent the request again: it abandoned the stream without its priming event", VerdictFail
				}
				if a.method == http.MethodPost && a.rpcMethod != "" {
					return "took the stream without its priming event and carried on (next: " + describe(a) + ")", VerdictPass
				}
			}
			if inj.more {
				return "sent nothing more after the stream without its priming event, where the recorded client went on", VerdictFail
			}
			return "the stream without its priming event was sent; nothing followed to show the client took it", VerdictNotObserved
		}
		return "the stream went on no further", VerdictNotObserved
	case FaultReorder:
		return judgeReorder(inj, after)
	case Fault503:
		for _, a := range mine {
			if a.method == http.MethodPost && a.body == inj.body {
				if gap := a.at.Sub(inj.cutAt); !inj.cutAt.IsZero() && gap < retryAfter503/2 {
					return fmt.Sprintf("retried the request %s after the 503, sooner than half its Retry-After of %s", gap.Round(time.Millisecond), retryAfter503), VerdictFail
				}
				return "retried the request, no sooner than half its Retry-After", VerdictPass
			}
		}
		if len(mine) == 0 {
			return "sent nothing more", VerdictNotObserved
		}
		return "did not retry (no retry is required)", VerdictNotObserved
	}
	return "", VerdictNotObserved
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

// silent judges a client that sent nothing more after fault inj: a
// fail where the recorded client went on (it sent requests after the
// fault's place), else not observed.
func silent(inj *injection, did string) (string, Verdict) {
	if inj.more {
		return did + " where the recorded client went on", VerdictFail
	}
	return did, VerdictNotObserved
}

// unseen is what the wire cannot show of a reorder.
const unseen = " (how it handled the order itself is not visible on the wire)"

// judgeReorder judges a reorder by what the client did next: it carries
// on (its next request comes, in the same session) or it fails (it
// starts over with initialize, drops the session, or stops where the
// recorded client went on).
func judgeReorder(inj *injection, after []chaosAction) (string, Verdict) {
	switch {
	case inj.left:
		for _, a := range after {
			if inj.mine(a) && a.method == http.MethodPost && a.rpcMethod != "" && a.rpcMethod != "initialize" {
				return "carried on in the same session (next: " + describe(a) + ") and closed the held notification's stream before it went out" + unseen, VerdictPass
			}
		}
		return "left while the notification was held", VerdictFail
	case !inj.delivered:
		return "the held notification was not seen delivered", VerdictNotObserved
	}
	how := "took both notifications in the other order"
	if inj.timedOut {
		how = "took the held notification in recorded order (the other one never came within " + inj.Delay.String() + ")"
	}
	for _, a := range after {
		switch {
		case a.rpcMethod == "initialize":
			// A new session (no session id) is the client's too.
			return how + ", then started over: " + describe(a) + unseen, VerdictFail
		case !inj.mine(a):
			continue
		case a.method == http.MethodDelete && inj.more:
			return how + ", then dropped the session (DELETE) where the recorded client went on" + unseen, VerdictFail
		case a.method == http.MethodPost && a.rpcMethod != "":
			return how + " and carried on in the same session (next: " + describe(a) + ")" + unseen, VerdictPass
		}
	}
	if inj.more {
		return how + ", then sent no request more where the recorded client went on" + unseen, VerdictFail
	}
	return how + "; the recorded client sent no request after them either" + unseen, VerdictNotObserved
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

// NotReached returns the faults planned in the recorded sessions the
// live sessions were replayed from that were never injected, each with
// its Session, Verdict VerdictNotObserved and no Did: the ones Write
// lists as not reached. Call it once the server has stopped serving.
func (h *Hook) NotReached() []Result {
	cs := h.state()
	cs.mu.Lock()
	leaders := slices.Clone(cs.sessions)
	pool, poolRecs := cs.pool, maps.Clone(cs.poolRecs)
	cs.mu.Unlock()
	var out []Result
	for _, ls := range leaders {
		rec := ls.Recording()
		if s := rec.Session; s.Transport == store.StreamableHTTP && s.Revision >= "2026-07-28" {
			continue // served as exchanges: below
		}
		cs.mu.Lock()
		for i, f := range cs.planLocked(rec) {
			if !cs.done[doneKey{ls, rec.Session.ID, i}] {
				out = append(out, Result{Fault: f, Session: rec.Session.ID, Verdict: VerdictNotObserved})
			}
		}
		cs.mu.Unlock()
	}
	// The 2026-07-28 sessions some exchange of which was served.
	ids := slices.Sorted(maps.Keys(poolRecs))
	for _, id := range ids {
		cs.mu.Lock()
		for i, f := range cs.planLocked(poolRecs[id]) {
			if !cs.done[doneKey{pool, id, i}] {
				out = append(out, Result{Fault: f, Session: id, Verdict: VerdictNotObserved})
			}
		}
		cs.mu.Unlock()
	}
	return out
}

func indexAfter(all []chaosAction, a chaosAction) int {
	for i := range all {
		if all[i].method == a.method && all[i].lastEventID == a.lastEventID && all[i].body == a.body && all[i].sid == a.sid {
			return i
		}
	}
	return 0
}

// describe names a request for the report.
func describe(a chaosAction) string {
	d := a.method // "" over stdio
	if a.rpcMethod != "" {
		d = strings.TrimSpace(d + " " + a.rpcMethod)
	}
	if a.lastEventID != "" {
		d += " (Last-Event-ID " + a.lastEventID + ")"
	}
	if a.method == http.MethodPost && a.rpcMethod == "initialize" && a.sid == "" && a.ls == nil {
		d += " (a new session)"
	}
	return d
}

// Write writes, for people, each fault chaos replay injected: what,
// where (streams and frames as mcpvcr show numbers them), what the client
// did next and the verdict; then the planned faults the client never
// reached, and command, the command line that replays this run. It
// reports whether no verdict failed. Call it once the server has stopped
// serving.
func (h *Hook) Write(out io.Writer, command string) (ok bool) {
	var w strings.Builder
	defer func() { io.WriteString(out, termtext.Text(w.String())) }()
	res := h.Results()
	counts := map[Verdict]int{}
	ok = true
	for i, r := range res {
		fmt.Fprintf(&w, "chaos: %d. session %d, %s at %s: %s; the client %s: %s\n", i+1, r.Session, r.Kind, r.Where(), r.Fault, r.Did, r.Verdict)
		counts[r.Verdict]++
		ok = ok && r.Verdict != VerdictFail
	}
	for _, f := range h.NotReached() {
		fmt.Fprintf(&w, "chaos: not reached: session %d, %s at %s: %s\n", f.Session, f.Kind, f.Where(), f.Fault)
	}
	fmt.Fprintf(&w, "chaos: seed %d: %s injected (%d pass, %d fail, %d not observed)", h.Seed, termtext.Count(len(res), "fault"),
		counts[VerdictPass], counts[VerdictFail], counts[VerdictNotObserved])
	if len(res) == 0 {
		fmt.Fprintf(&w, "; the sessions served have no place for the kinds asked for, or the client never reached one (stdio gets delay and late-result only; HTTP+SSE delay and 503; 2026-07-28 cut, close-early, 503 and delay; reorder only where two notifications were recorded side by side on two streams)")
	}
	fmt.Fprintln(&w)
	if command != "" {
		fmt.Fprintf(&w, "chaos: replay this run: %s\n", command)
	}
	return ok
}
