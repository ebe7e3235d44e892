package chaos

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpvcr/mcpvcr/replayer"
	"github.com/mcpvcr/mcpvcr/store"
)

// TestChaos_Judge: each kind's verdict from what the client sent after
// the fault.
func TestChaos_Judge(t *testing.T) {
	me, other := &replayer.Session{}, &replayer.Session{}
	get := func(lei string) chaosAction { return chaosAction{ls: me, sid: "s1", method: "GET", lastEventID: lei} }
	post := func(m string) chaosAction {
		return chaosAction{ls: me, sid: "s1", method: "POST", rpcMethod: m, body: m}
	}
	t0 := time.Unix(1000, 0)
	getAt := func(lei string, at time.Time) chaosAction {
		return chaosAction{ls: me, sid: "s1", method: "GET", lastEventID: lei, at: at}
	}
	for _, tt := range []struct {
		name  string
		inj   injection
		after []chaosAction
		want  Verdict
		says  string
	}{
		{"resumed right", injection{Fault: Fault{Kind: FaultCutResumable}, lastID: "e2", delivered: true}, []chaosAction{get("e2")}, VerdictPass, "resumed with Last-Event-ID e2 and got the rest"},
		{"resumed, rest not served", injection{Fault: Fault{Kind: FaultCutResumable}, lastID: "e2"}, []chaosAction{get("e2")}, VerdictNotObserved, "rest of the stream was not seen delivered"},
		{"resumed wrong", injection{Fault: Fault{Kind: FaultCutResumable}, lastID: "e2"}, []chaosAction{get("e1")}, VerdictFail, "the last event it received had id e2"},
		{"no Last-Event-ID", injection{Fault: Fault{Kind: FaultCutResumable}, lastID: "e2"}, []chaosAction{get("")}, VerdictFail, "without Last-Event-ID"},
		{"never resumed", injection{Fault: Fault{Kind: FaultCutResumable}, lastID: "e2"}, []chaosAction{post("tools/call")}, VerdictFail, "never resumed"},
		{"cancelled instead", injection{Fault: Fault{Kind: FaultCutResumable}, lastID: "e2", rpcID: "7"}, []chaosAction{{ls: me, sid: "s1", method: "POST", rpcMethod: "notifications/cancelled", cancels: "7"}}, VerdictNotObserved, "cancelled the request"},
		{"cancelled another", injection{Fault: Fault{Kind: FaultCutResumable}, lastID: "e2", rpcID: "7"}, []chaosAction{{ls: me, sid: "s1", method: "POST", rpcMethod: "notifications/cancelled", cancels: "8"}}, VerdictFail, "never resumed"},
		{"nothing after a cut", injection{Fault: Fault{Kind: FaultCutResumable}, lastID: "e2"}, nil, VerdictNotObserved, "nothing more"},
		{"another session resumes", injection{Fault: Fault{Kind: FaultCutResumable}, lastID: "e2"}, []chaosAction{{ls: other, sid: "s2", method: "GET", lastEventID: "e2"}}, VerdictNotObserved, "sent nothing more"},
		{"late, left", injection{Fault: Fault{Kind: FaultResumeLate}, lastID: "e2", left: true}, []chaosAction{get("e2")}, VerdictFail, "left before the late answer"},
		{"404 loop", injection{Fault: Fault{Kind: FaultResume404}, lastID: "e2"}, []chaosAction{get("e2"), get("e2"), get("e2"), get("e2")}, VerdictFail, "used the expired session id again"},
		{"404 then on", injection{Fault: Fault{Kind: FaultResume404}, lastID: "e2"}, []chaosAction{get("e2"), post("tools/call")}, VerdictFail, "used the expired session id again: POST tools/call"},
		{"404 then a new session", injection{Fault: Fault{Kind: FaultResume404}, lastID: "e2"}, []chaosAction{get("e2"), {method: "POST", rpcMethod: "initialize"}}, VerdictPass, "got 404, then started a new session"},
		{"cut, invented id", injection{Fault: Fault{Kind: FaultCut}}, []chaosAction{get("x")}, VerdictFail, "had no event ids"},
		{"cut, on", injection{Fault: Fault{Kind: FaultCut}}, []chaosAction{post("tools/call")}, VerdictPass, "carried on"},
		{"expired id reused", injection{Fault: Fault{Kind: FaultExpire}, sid: "s1"}, []chaosAction{post("tools/call")}, VerdictFail, "expired session id again"},
		{"new session", injection{Fault: Fault{Kind: FaultExpire}, sid: "s1"}, []chaosAction{{ls: me, sid: "s1", method: "DELETE"}, {method: "POST", rpcMethod: "initialize"}}, VerdictPass, "started a new session"},
		{"GET loop", injection{Fault: Fault{Kind: FaultRefuseGet}}, []chaosAction{get(""), get(""), get("")}, VerdictFail, "3 more times"},
		{"without GET", injection{Fault: Fault{Kind: FaultRefuseGet}}, []chaosAction{post("tools/list")}, VerdictPass, "without the GET stream"},
		{"delay, left", injection{Fault: Fault{Kind: FaultDelay}, left: true}, nil, VerdictFail, "left"},
		{"delay, took", injection{Fault: Fault{Kind: FaultDelay}, delivered: true}, nil, VerdictPass, "took the event"},
		{"503 retried", injection{Fault: Fault{Kind: Fault503}, body: "tools/call"}, []chaosAction{post("tools/call")}, VerdictPass, "retried"},
		{"retry kept", injection{Fault: Fault{Kind: FaultRetry, Delay: 200 * time.Millisecond}, lastID: "e2", cutAt: t0, delivered: true}, []chaosAction{getAt("e2", t0.Add(210*time.Millisecond))}, VerdictPass, "210ms after the cut"},
		{"retry too soon", injection{Fault: Fault{Kind: FaultRetry, Delay: 200 * time.Millisecond}, lastID: "e2", cutAt: t0}, []chaosAction{getAt("e2", t0.Add(20*time.Millisecond))}, VerdictFail, "sooner than half the retry"},
		{"retry, no resumption", injection{Fault: Fault{Kind: FaultRetry, Delay: 200 * time.Millisecond}, lastID: "e2", cutAt: t0}, []chaosAction{post("tools/call")}, VerdictFail, "never resumed"},
		{"retry, never cut", injection{Fault: Fault{Kind: FaultRetry, Delay: 200 * time.Millisecond}}, nil, VerdictNotObserved, "went no further"},
		{"late result, on", injection{Fault: Fault{Kind: FaultLateResult}, rpcID: "9", delivered: true}, []chaosAction{post("resources/list")}, VerdictPass, "sent nothing more for request 9"},
		{"late result, cancelled again", injection{Fault: Fault{Kind: FaultLateResult}, rpcID: "9", delivered: true}, []chaosAction{{ls: me, sid: "s1", method: "POST", rpcMethod: "notifications/cancelled", cancels: "9"}}, VerdictFail, "cancelled request 9 again"},
		{"late result, id reused", injection{Fault: Fault{Kind: FaultLateResult}, rpcID: "9", delivered: true}, []chaosAction{{ls: me, sid: "s1", method: "POST", rpcMethod: "tools/call", rpcID: "9"}}, VerdictFail, "sent request id 9 again"},
		{"late result, stream closed first", injection{Fault: Fault{Kind: FaultLateResult}, rpcID: "9", left: true}, []chaosAction{{ls: me, sid: "s1", method: "POST", rpcMethod: "notifications/cancelled", cancels: "9"}}, VerdictNotObserved, "before its cancellation came"},
		{"closed early, re-sent", injection{Fault: Fault{Kind: FaultCloseEarly}, pooled: true, body: `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`}, []chaosAction{{method: "POST", rpcMethod: "tools/list", body: `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{}}`}}, VerdictPass, "sent the request again"},
		{"closed early, gave up", injection{Fault: Fault{Kind: FaultCloseEarly}, pooled: true, body: `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`}, []chaosAction{{method: "POST", rpcMethod: "tools/call", body: `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo"}}`}}, VerdictPass, "gave up on it"},
		{"closed early, silent", injection{Fault: Fault{Kind: FaultCloseEarly}, pooled: true, body: `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`}, nil, VerdictNotObserved, "sent nothing more"},
		{"modern cut, another session's request", injection{Fault: Fault{Kind: FaultCut}, pooled: true, body: `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`}, []chaosAction{post("tools/list")}, VerdictNotObserved, "sent nothing more"},
		{"HTTP+SSE cut, new stream", injection{Fault: Fault{Kind: FaultCut, StreamKind: store.SSEGetStream}}, []chaosAction{{method: "GET"}}, VerdictPass, "opened a new SSE stream"},
		{"HTTP+SSE cut, posts on", injection{Fault: Fault{Kind: FaultCut, StreamKind: store.SSEGetStream}}, []chaosAction{post("tools/call"), post("tools/list")}, VerdictFail, "2 more requests"},
		{"HTTP+SSE cut, one under way", injection{Fault: Fault{Kind: FaultCut, StreamKind: store.SSEGetStream}}, []chaosAction{post("tools/call")}, VerdictNotObserved, "one request followed"},
		{"reorder, on", injection{Fault: Fault{Kind: FaultReorder}, delivered: true, first: true, more: true}, []chaosAction{post("tools/call")}, VerdictPass, "carried on in the same session"},
		{"reorder, started over", injection{Fault: Fault{Kind: FaultReorder}, delivered: true, first: true, more: true}, []chaosAction{{method: "POST", rpcMethod: "initialize"}}, VerdictFail, "started over"},
		{"reorder, dropped the session", injection{Fault: Fault{Kind: FaultReorder}, delivered: true, first: true, more: true}, []chaosAction{{ls: me, sid: "s1", method: "DELETE"}}, VerdictFail, "dropped the session"},
		{"reorder, stopped", injection{Fault: Fault{Kind: FaultReorder}, delivered: true, first: true, more: true}, nil, VerdictFail, "sent no request more"},
		{"reorder, left", injection{Fault: Fault{Kind: FaultReorder}, left: true}, nil, VerdictFail, "left while"},
		{"reorder, on, then closed the held stream", injection{Fault: Fault{Kind: FaultReorder}, left: true}, []chaosAction{post("tools/call")}, VerdictPass, "closed the held notification's stream"},
		{"reorder, nothing to carry on to", injection{Fault: Fault{Kind: FaultReorder}, delivered: true, first: true}, []chaosAction{{ls: me, sid: "s1", method: "DELETE"}}, VerdictNotObserved, "not visible on the wire"},
		{"exit, restarted", injection{Fault: Fault{Kind: FaultExit}, rpcMethod: "tools/call", rpcID: "3"}, []chaosAction{{ls: other, rpcMethod: "initialize", rpcID: "1"}}, VerdictPass, "restarted its server"},
		{"exit, another session went on", injection{Fault: Fault{Kind: FaultExit}, rpcMethod: "tools/call", rpcID: "3"}, []chaosAction{{ls: other, rpcMethod: "tools/call", rpcID: "7"}}, VerdictNotObserved, "another session went on"},
		{"exit, nothing more", injection{Fault: Fault{Kind: FaultExit}, rpcMethod: "tools/call", rpcID: "3"}, nil, VerdictNotObserved, "no new session began"},
		{"reorder of responses, on", injection{Fault: Fault{Kind: FaultReorder, Responses: true}, delivered: true, first: true, more: true, body: "tools/call pair"}, []chaosAction{post("tools/call")}, VerdictPass, "took both responses in the other order and carried on"},
		{"reorder of responses, the held request sent again", injection{Fault: Fault{Kind: FaultReorder, Responses: true}, delivered: true, first: true, more: true, body: "tools/call"}, []chaosAction{post("tools/call")}, VerdictFail, "sent the request of the held response again"},
		{"reorder over stdio, on", injection{Fault: Fault{Kind: FaultReorder, Responses: true}, delivered: true, first: true, more: true, pair: []string{"3", "4"}}, []chaosAction{{ls: me, rpcMethod: "tools/call", rpcID: "5"}}, VerdictPass, "next: tools/call"},
		{"reorder over stdio, a request of the pair is no step", injection{Fault: Fault{Kind: FaultReorder, Responses: true}, delivered: true, first: true, more: true, pair: []string{"3", "4"}}, []chaosAction{{ls: me, rpcMethod: "tools/call", rpcID: "4"}}, VerdictFail, "sent no request more"},
		{"reorder over stdio, the held request sent again", injection{Fault: Fault{Kind: FaultReorder, Responses: true}, delivered: true, first: true, more: true, resent: true, rpcID: "4"}, []chaosAction{{ls: me, rpcMethod: "tools/call", rpcID: "4"}}, VerdictFail, "(id 4) again"},
		{"reorder, the other never came", injection{Fault: Fault{Kind: FaultReorder}, delivered: true, timedOut: true, more: true}, []chaosAction{post("tools/call")}, VerdictPass, "never came"},
		{"cut, silent where the recorded client went on", injection{Fault: Fault{Kind: FaultCut}, more: true}, nil, VerdictFail, "where the recorded client went on"},
		{"cut, silent at the end", injection{Fault: Fault{Kind: FaultCut}}, nil, VerdictNotObserved, "sent nothing more"},
		{"cut-resumable, silent where the recorded client went on", injection{Fault: Fault{Kind: FaultCutResumable}, lastID: "e2", more: true}, nil, VerdictFail, "where the recorded client went on"},
		{"expire, new session", injection{Fault: Fault{Kind: FaultExpire}, more: true}, []chaosAction{{method: "POST", rpcMethod: "initialize"}}, VerdictPass, "started a new session"},
		{"expire, no new session where the recorded client went on", injection{Fault: Fault{Kind: FaultExpire}, more: true}, []chaosAction{{method: "GET"}}, VerdictFail, "must after a 404"},
		{"expire, silent where the recorded client went on", injection{Fault: Fault{Kind: FaultExpire}, more: true}, nil, VerdictFail, "where the recorded client went on"},
		{"delay on the GET stream, left when done", injection{Fault: Fault{Kind: FaultDelay, StreamKind: store.GetStream}, left: true, more: true}, nil, VerdictNotObserved, "it was done"},
		{"delay on the GET stream, left waiting", injection{Fault: Fault{Kind: FaultDelay, StreamKind: store.GetStream}, left: true, waiting: "tools/call"}, nil, VerdictFail, "still waiting for tools/call"},
		{"503 retried at once", injection{Fault: Fault{Kind: Fault503}, body: "tools/call", cutAt: t0}, []chaosAction{{ls: me, sid: "s1", method: "POST", rpcMethod: "tools/call", body: "tools/call", at: t0.Add(30 * time.Millisecond)}}, VerdictFail, "sooner than half its Retry-After"},
		{"503 retried after Retry-After", injection{Fault: Fault{Kind: Fault503}, body: "tools/call", cutAt: t0}, []chaosAction{{ls: me, sid: "s1", method: "POST", rpcMethod: "tools/call", body: "tools/call", at: t0.Add(time.Second)}}, VerdictPass, "retried"},
		{"no priming, on", injection{Fault: Fault{Kind: FaultDropPriming}, delivered: true, body: "tools/call"}, []chaosAction{post("tools/list")}, VerdictPass, "carried on"},
		{"no priming, asked again", injection{Fault: Fault{Kind: FaultDropPriming}, delivered: true, body: "tools/call"}, []chaosAction{post("tools/call")}, VerdictFail, "abandoned the stream"},
		{"no priming, stopped where the recorded client went on", injection{Fault: Fault{Kind: FaultDropPriming}, delivered: true, more: true}, nil, VerdictFail, "where the recorded client went on"},
		{"no priming, at the end", injection{Fault: Fault{Kind: FaultDropPriming}, delivered: true}, nil, VerdictNotObserved, "nothing followed"},
		{"cut, only a GET came", injection{Fault: Fault{Kind: FaultCut}, more: true}, []chaosAction{get("")}, VerdictFail, "sent nothing more of its session where the recorded client went on"},
		{"cut, another session carried on", injection{Fault: Fault{Kind: FaultCut}, more: true}, []chaosAction{{ls: other, sid: "s2", method: "POST", rpcMethod: "tools/call"}}, VerdictFail, "sent nothing more"},
		{"cut, carried on", injection{Fault: Fault{Kind: FaultCut}, more: true}, []chaosAction{post("tools/call")}, VerdictPass, "carried on: POST tools/call"},
		{"503 not retried", injection{Fault: Fault{Kind: Fault503}, body: "tools/call"}, []chaosAction{post("tools/list")}, VerdictNotObserved, "did not retry"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			inj := tt.inj
			inj.ls = me
			if inj.sid == "" && !inj.pooled {
				inj.sid = "s1"
			}
			// Every request came on the client's one connection,
			// sent one after the other: after a 404, knowing it.
			after := slices.Clone(tt.after)
			for i := range after {
				a := &after[i]
				a.conn, a.after404 = "c1", a.ls == me
				if a.ls == nil && a.sid == "" {
					a.prevLS = me
				}
			}
			did, v := judge(&inj, after)
			if v != tt.want || !strings.Contains(did, tt.says) {
				t.Errorf("judge = %q, %s; want %s saying %q", did, v, tt.want, tt.says)
			}
		})
	}
}

// TestChaos_503SaysTheSame: a client that did not retry its 503 is
// reported in the same words whatever it sent instead, and whether it
// sent anything: a concurrent client's next request varies between runs
// of one seed, and the report of a seed must not.
func TestChaos_503SaysTheSame(t *testing.T) {
	me := &replayer.Session{}
	post := func(m string) chaosAction {
		return chaosAction{ls: me, sid: "s1", method: "POST", rpcMethod: m, body: m}
	}
	inj := injection{Fault: Fault{Kind: Fault503}, body: "tools/call"}
	var first string
	for i, mine := range [][]chaosAction{
		{post("tools/list")},
		{post("resources/read"), post("tools/list")},
		{post("prompts/get")},
		nil,
	} {
		did, v := judge503(&inj, mine, mine)
		if v != VerdictNotObserved {
			t.Errorf("run %d: verdict %s; want %s", i, v, VerdictNotObserved)
		}
		if strings.Contains(did, "next") {
			t.Errorf("run %d: %q names what came next", i, did)
		}
		if i == 0 {
			first = did
		} else if did != first {
			t.Errorf("run %d: %q; run 0 said %q", i, did, first)
		}
	}
}
