package chaos

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"

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

// ofClient reports whether a came from the client inj met: a request of
// its session, or a new session (no session id) begun on a connection
// whose request before was of that session. Another client's new
// session, on connections of its own, is not this one's: a client that
// exited must not be credited with it.
func (inj *injection) ofClient(a chaosAction) bool {
	if inj.mine(a) {
		return true
	}
	if inj.pooled || a.ls != nil || a.sid != "" || a.conn == "" {
		return false
	}
	return inj.ls != nil && a.prevLS == inj.ls || inj.sid != "" && a.prevSID == inj.sid
}

// judge says what the client did after inj, from the requests that
// followed it, and gives the verdict. Only the requests of the client
// that met the fault count (see ofClient); mine are those of its session.
func judge(inj *injection, all []chaosAction) (string, Verdict) {
	var after, mine []chaosAction
	inj.freshInit = ""
	for _, a := range all {
		switch {
		case inj.ofClient(a):
			after = append(after, a)
		case a.freshConn && a.sid == "" && a.rpcMethod == "initialize" && inj.freshInit == "":
			inj.freshInit = describe(a)
		}
		if inj.mine(a) {
			mine = append(mine, a)
		}
	}
	switch inj.Kind {
	case FaultCutResumable, FaultResume404, FaultResumeLate:
		return judgeResumable(inj, after, mine)
	case FaultRetry:
		return judgeRetry(inj, after, mine)
	case FaultLateResult:
		return judgeLateResult(inj, after, mine)
	case FaultCloseEarly:
		return judgeCloseEarly(inj, after, mine)
	case FaultCut:
		return judgeCut(inj, after, mine)
	case FaultExpire:
		return judgeExpire(inj, after, mine)
	case FaultRefuseGet:
		return judgeRefuseGet(inj, after, mine)
	case FaultDelay, FaultDropPriming:
		return judgeDelay(inj, after, mine)
	case FaultReorder:
		return judgeReorder(inj, after)
	case Fault503:
		return judge503(inj, after, mine)
	case FaultResetPeer, FaultEmptyResponse:
		return judgeNoAnswer(inj, mine)
	case FaultReframe:
		return judgeTook(inj, mine, "reframed event", "it did not read the event with lone CR line ends and two data lines")
	case FaultSlicer:
		return judgeSlicer(inj, mine)
	case FaultTimeout, FaultStall:
		return judgeGiveUp(inj, mine)
	case FaultMalformed:
		return judgeTook(inj, mine, "event with garbage", "it dropped the stream (and the response after the garbage)")
	case FaultErrorResult:
		return judgeTook(inj, mine, "error", "")
	case FaultLimitData:
		return judgeLimitData(inj, after, mine)
	case FaultRedeliver:
		return judgeRedeliver(inj, after, mine)
	case FaultExit:
		return judgeExit(inj, all)
	case FaultEarlyPing:
		return judgeEarlyPing(inj, mine)
	case FaultLateRequest:
		return judgeLateRequest(inj, mine)
	case FaultListChanged:
		return judgeListChanged(inj, mine)
	}
	return "", VerdictNotObserved
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
		cs.mu.Lock()
		rec := cs.pinLocked(ls, ls.Recording())
		cs.mu.Unlock()
		if s := rec.Session; s.Transport == store.StreamableHTTP && s.Revision >= "2026-07-28" {
			continue // served as exchanges: below
		}
		cs.mu.Lock()
		var before int64 // over stdio, the faults before the plan was pinned were another candidate's
		if sc := cs.stdio[ls]; sc != nil {
			before = sc.pinnedAt
		}
		for i, f := range cs.planLocked(rec) {
			if !cs.done[doneKey{ls, rec.Session.ID, i}] && !cs.endedLocked(rec.Session.ID, i, f) && (f.Seq == 0 || f.Seq >= before) {
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
	} else if a.rpcID != "" {
		d = strings.TrimSpace(d + " an answer (id " + a.rpcID + ")")
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
		fmt.Fprintf(&w, "; the sessions served have no place for the kinds asked for, or the client never reached one (stdio gets delay, late-result, reorder, exit and late-request only; HTTP+SSE delay, 503 and cut; 2026-07-28 cut, close-early, 503 and delay; reorder only where two notifications, or the responses to two concurrent requests, were recorded side by side)")
	}
	fmt.Fprintln(&w)
	if command != "" {
		fmt.Fprintf(&w, "chaos: replay this run: %s\n", command)
	}
	return ok
}
