package diff

import (
	"encoding/json"
	"slices"
	"time"

	"github.com/mcpvcr/mcpvcr/internal/causal"
	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/store"
)

// exchange is one client request of a recorded session with what the
// server answered it.
type exchange struct {
	seq    int64 // the seq of the frame that carried the request
	method string
	name   string // params.name (tools, prompts) or params.uri (resources)
	req    jsonrpc.Message
	// resp is the answer; its Kind is 0 (KindInvalid) when none came.
	resp     jsonrpc.Message
	respSeq  int64
	progress []json.RawMessage // params of progress notifications for its token
	// cancelled is set when the client cancelled the request.
	cancelled bool
	// mkey is the pairing key: method and normalised params.
	mkey string
}

func (x *exchange) answered() bool { return x.resp.Kind.IsResponse() }

func (x *exchange) scope() scope { return scope{Seq: x.seq, Method: x.method, Name: x.name} }

// value is what is compared of the exchange: the answer (result or
// error) and its progress notifications, normalised.
func (x *exchange) value() map[string]any {
	v := map[string]any{}
	switch x.resp.Kind {
	case jsonrpc.KindResult:
		v["result"] = normalize(x.resp.Result)
	case jsonrpc.KindError:
		v["error"] = normalize(x.resp.Error)
	}
	if len(x.progress) > 0 {
		var ps []any
		for _, p := range x.progress {
			pv := normalize(p)
			if m, ok := pv.(map[string]any); ok {
				delete(m, "progressToken")
			}
			ps = append(ps, pv)
		}
		v["progress"] = ps
	}
	return v
}

// traffic is what the server sent on its own, outside any answer:
// requests and notifications (other than progress for a known request),
// by method.
type traffic struct {
	requests      map[string][]json.RawMessage
	notifications map[string][]json.RawMessage
}

// value is what is compared of the traffic: per method, the normalised
// params in a canonical order, since interleaving does not count.
func (t *traffic) value() map[string]any {
	v := map[string]any{}
	for name, byMethod := range map[string]map[string][]json.RawMessage{"requests": t.requests, "notifications": t.notifications} {
		out := map[string]any{}
		for method, list := range byMethod {
			var items []any
			for _, p := range list {
				if len(p) == 0 {
					items = append(items, map[string]any{}) // no params: {}
					continue
				}
				items = append(items, normalize(p))
			}
			slices.SortStableFunc(items, func(a, b any) int {
				ka, kb := jsonrpc.Key(a), jsonrpc.Key(b)
				switch {
				case ka < kb:
					return -1
				case ka > kb:
					return 1
				}
				return 0
			})
			out[method] = items
		}
		v[name] = out
	}
	return v
}

func (t *traffic) empty() bool { return len(t.requests) == 0 && len(t.notifications) == 0 }

// conversation is a recorded session cut into exchanges.
type conversation struct {
	exchanges []*exchange
	server    traffic
	// steps is when the client sent each of its messages, in order; own
	// is what the server sent on its own, in order, each placed after
	// the client's latest message; end is when the session ended.
	steps []time.Duration
	own   []ownMsg
	end   time.Duration
}

// ownMsg is one message the server sent on its own, at offset at, after
// the client's message steps[after] (-1: before any).
type ownMsg struct {
	request bool
	method  string
	params  json.RawMessage
	after   int
	at      time.Duration
}

// reaction is how soon after a client's message what the server sends
// is taken for its reply (an echo, a notification the message caused);
// later, it may be the server's own timer (server-everything asks for
// the roots 350 ms after initialized), which lands in a session or
// after it by how long the client stayed and how loaded the machine was.
const reaction = 100 * time.Millisecond

// certain returns what the server sent on its own whose presence says
// something about the server, compared with the session other: what
// came, on other's clock, before other had ended. A timer of the
// server's may run from any client message before it (server-everything
// counts from initialized, not from the call that came since), so the
// message is placed as long after each earlier client message as it came
// here, and the latest of those places counts. What came later than a
// reaction gets a margin before that end (100 ms and a quarter of the
// wait since the latest message), since a timer, a loaded machine and
// the client's exit race. A session shorter than the other cannot say
// what the server would have sent after it ended.
func (c *conversation) certain(other *conversation) traffic {
	t := traffic{requests: map[string][]json.RawMessage{}, notifications: map[string][]json.RawMessage{}}
	// shift[j] is the latest (other's step k minus this one's) for k ≤ j:
	// a message here at at lands at most at at+shift[j] there.
	shift := make([]time.Duration, min(len(c.steps), len(other.steps)))
	for j := range shift {
		shift[j] = other.steps[j] - c.steps[j]
		if j > 0 {
			shift[j] = max(shift[j], shift[j-1])
		}
	}
	for _, o := range c.own {
		at, since := o.at, o.at
		if o.after >= 0 {
			if o.after >= len(shift) {
				continue // the other client never got that far
			}
			at += shift[o.after]
			since -= c.steps[o.after]
		}
		if since > reaction {
			at += 100*time.Millisecond + since/4
		}
		if at > other.end {
			continue
		}
		if o.request {
			t.requests[o.method] = append(t.requests[o.method], o.params)
		} else {
			t.notifications[o.method] = append(t.notifications[o.method], o.params)
		}
	}
	return t
}

// converse cuts rec into exchanges, in the order the client sent them.
// What answers what, and which progress and cancellation belong to which
// request, is the session's causal model; its pairing (causal.Pair) is
// all a comparison reads, not what each client frame waited for.
func converse(rec *store.Recording) *conversation {
	c := &conversation{server: traffic{requests: map[string][]json.RawMessage{}, notifications: map[string][]json.RawMessage{}}}
	model := causal.Pair(rec)
	byMsg := map[int]*exchange{} // client request message -> its exchange
	for i, x := range model.Msgs {
		m := x.M
		if x.Frame.Direction == store.ClientToServer {
			if m.Kind == jsonrpc.KindRequest || m.Kind == jsonrpc.KindNotification {
				// A step is what the client did of its own accord: its
				// answers to the server's requests come or not as the
				// server asked, so they would misplace the server's
				// own messages on the other session's clock.
				c.steps = append(c.steps, x.Frame.Offset)
			}
			switch {
			case m.Kind == jsonrpc.KindRequest:
				e := &exchange{seq: x.Frame.Seq, method: m.Method, name: subject(m.Params), req: m}
				e.mkey = m.Method + " " + Key(m.Params)
				c.exchanges = append(c.exchanges, e)
				byMsg[i] = e
			case m.Kind == jsonrpc.KindNotification && m.Method == "notifications/cancelled":
				if e := byMsg[x.Cancels]; e != nil && !e.answered() {
					e.cancelled = true
				}
			}
			continue
		}
		switch m.Kind {
		case jsonrpc.KindResult, jsonrpc.KindError:
			if e := byMsg[x.Answers]; e != nil {
				e.resp, e.respSeq = m, x.Frame.Seq
			}
		case jsonrpc.KindRequest:
			c.server.requests[m.Method] = append(c.server.requests[m.Method], m.Params)
			c.own = append(c.own, c.placeOwn(true, m, x.Frame.Offset))
		case jsonrpc.KindNotification:
			if e := byMsg[x.Progress]; e != nil && m.Method == "notifications/progress" {
				e.progress = append(e.progress, m.Params)
				continue
			}
			c.server.notifications[m.Method] = append(c.server.notifications[m.Method], m.Params)
			c.own = append(c.own, c.placeOwn(false, m, x.Frame.Offset))
		}
	}
	for _, f := range rec.Frames {
		c.end = max(c.end, f.Offset)
	}
	for _, st := range rec.Streams {
		c.end = max(c.end, st.Closed)
	}
	return c
}

// placeOwn places m, sent by the server on its own at at, after the
// client's latest message.
func (c *conversation) placeOwn(request bool, m jsonrpc.Message, at time.Duration) ownMsg {
	return ownMsg{request: request, method: m.Method, params: m.Params, after: len(c.steps) - 1, at: at}
}

// subject returns what a request is about: params.name (a tool or
// prompt) or params.uri (a resource), "" if neither.
func subject(params json.RawMessage) string {
	var p struct {
		Name string `json:"name"`
		URI  string `json:"uri"`
	}
	if json.Unmarshal(params, &p) != nil {
		return ""
	}
	if p.Name != "" {
		return p.Name
	}
	return p.URI
}

// pair matches the exchanges of b to those of a: each exchange of a, in
// order, takes the first unmatched exchange of b with the same method and
// normalised params, preferring one after the previous match. The result
// holds, per exchange of a, the index in b or -1.
func pair(a, b []*exchange) []int {
	out := make([]int, len(a))
	used := make([]bool, len(b))
	next := 0
	for i, x := range a {
		out[i] = -1
		for _, j := range append(seqRange(next, len(b)), seqRange(0, next)...) {
			if !used[j] && b[j].mkey == x.mkey {
				out[i], used[j], next = j, true, j+1
				break
			}
		}
	}
	return out
}

// pairExcept is pair, leaving out the exchanges of a and b the skip sets
// name (by index): those stay unpaired (-1).
func pairExcept(a, b []*exchange, skipA, skipB map[int]bool) []int {
	var ia, ib []int
	var xa, xb []*exchange
	for i, x := range a {
		if !skipA[i] {
			ia, xa = append(ia, i), append(xa, x)
		}
	}
	for j, y := range b {
		if !skipB[j] {
			ib, xb = append(ib, j), append(xb, y)
		}
	}
	out := make([]int, len(a))
	for i := range out {
		out[i] = -1
	}
	for k, j := range pair(xa, xb) {
		if j >= 0 {
			out[ia[k]] = ib[j]
		}
	}
	return out
}

func seqRange(from, to int) []int {
	var r []int
	for i := from; i < to; i++ {
		r = append(r, i)
	}
	return r
}
