package verify

import (
	"slices"

	"github.com/mcpvcr/mcpvcr/diff"
	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/internal/mcpwire"
	"github.com/mcpvcr/mcpvcr/store"
)

// A verify plan is the recorded client side of a session cut into steps:
// each step sends one recorded client frame (or, over HTTP, opens a
// recorded stream that carried no client frame, such as the standalone
// GET) once the server has said, live, what it had said in the recording
// before that frame. The client's recorded answers to server requests are
// not steps: they are sent when the live server asks.

// waitKind is what a step waits for.
type waitKind uint8

const (
	waitAnswer waitKind = iota + 1 // the answer to client request id
	waitCount                      // count messages of a kind, while owner is unanswered
)

// wait is one condition of a step. A count wait gives up once its owner
// (the client request the message belongs to) is answered: what the server
// did not send while handling a request, it will not send after.
type wait struct {
	kind  waitKind
	id    string // waitAnswer: the client request id
	key   string // waitCount: countKey of the messages
	n     int    // waitCount: how many
	owner string // waitCount: the client request id the messages belong to
}

// countKey identifies a kind of server message for counting: a request
// or notification method, or the progress token of a progress
// notification.
func countKey(m jsonrpc.Message) string {
	switch {
	case m.Kind == jsonrpc.KindRequest:
		return "request " + m.Method
	case m.Method == "notifications/progress":
		return "progress " + string(mcpwire.ProgressNotificationToken(m.Params))
	}
	return "notification " + m.Method
}

// step is one thing the client side does.
type step struct {
	f     *store.Frame  // the client frame to send; nil for an open
	open  *store.Stream // an HTTP stream to open without a client frame
	msgs  []jsonrpc.Message
	waits []wait
}

// srvReq is a recorded server request with the client's recorded answer.
type srvReq struct {
	method string
	mkey   string
	answer []byte       // the client's response, as recorded (a batch member's own bytes)
	frame  *store.Frame // the frame that carried the response
	used   bool
}

// plan is what verify sends, in order.
type plan struct {
	steps []step
	// final are the waits after the last step: the answers still owed.
	final   []wait
	srvReqs []*srvReq
	// responses maps a client request id to its recorded answer, for
	// learning the server-minted values the client echoes.
	responses map[string]jsonrpc.Message
	// firstRequest is the index of the step with the first request, -1
	// if none.
	firstRequest int
}

// buildPlan cuts rec into steps.
func buildPlan(rec *store.Recording) *plan {
	p := &plan{responses: map[string]jsonrpc.Message{}, firstRequest: -1}
	var (
		inflight  []string              // client request ids, oldest first
		owners    = map[string]string{} // progress token -> client request id
		counts    = map[string]int{}
		pending   []wait
		srvByID   = map[string]*srvReq{}
		openSteps = streamOpens(rec)
	)
	last := func() string {
		if len(inflight) == 0 {
			return ""
		}
		return inflight[len(inflight)-1]
	}
	drop := func(id string) {
		inflight = slices.DeleteFunc(inflight, func(x string) bool { return x == id })
	}
	for _, f := range rec.ProtocolFrames() {
		msgs := jsonrpc.Messages(f.Data)
		if f.Direction == store.ServerToClient {
			for _, m := range msgs {
				switch m.Kind {
				case jsonrpc.KindResult, jsonrpc.KindError:
					id := string(m.ID)
					p.responses[id] = m
					pending = append(pending, wait{kind: waitAnswer, id: id})
					drop(id)
				case jsonrpc.KindRequest, jsonrpc.KindNotification:
					k := countKey(m)
					counts[k]++
					owner := last()
					if m.Method == "notifications/progress" {
						owner = owners[string(mcpwire.ProgressNotificationToken(m.Params))]
						if !slices.Contains(inflight, owner) {
							owner = ""
						}
					}
					if owner != "" {
						pending = append(pending, wait{kind: waitCount, key: k, n: counts[k], owner: owner})
					}
					if m.Kind == jsonrpc.KindRequest {
						sr := &srvReq{method: m.Method, mkey: m.Method + " " + diff.Key(m.Params)}
						p.srvReqs = append(p.srvReqs, sr)
						srvByID[string(m.ID)] = sr
					}
				}
			}
			continue
		}
		for len(openSteps) > 0 && openSteps[0].Opened <= f.Offset {
			p.steps = append(p.steps, step{open: openSteps[0], waits: pending})
			pending, openSteps = nil, openSteps[1:]
		}
		if answers(msgs, srvByID, f) {
			continue
		}
		p.steps = append(p.steps, step{f: f, msgs: msgs, waits: pending})
		pending = nil
		for _, m := range msgs {
			switch {
			case m.Kind == jsonrpc.KindRequest:
				if p.firstRequest < 0 {
					p.firstRequest = len(p.steps) - 1
				}
				inflight = append(inflight, string(m.ID))
				if t := mcpwire.ProgressToken(m.Params); t != nil {
					owners[string(t)] = string(m.ID)
				}
			case m.Method == "notifications/cancelled":
				drop(string(mcpwire.CancelledRequestID(m.Params)))
			}
		}
	}
	for _, st := range openSteps {
		p.steps = append(p.steps, step{open: st, waits: pending})
		pending = nil
	}
	p.final = pending
	return p
}

// answers reports whether msgs are all the client's responses to server
// requests, and files them as the recorded answers.
func answers(msgs []jsonrpc.Message, srvByID map[string]*srvReq, f *store.Frame) bool {
	for _, m := range msgs {
		if !m.Kind.IsResponse() {
			return false
		}
	}
	for _, m := range msgs {
		if sr := srvByID[string(m.ID)]; sr != nil && sr.answer == nil {
			sr.answer, sr.frame = m.Raw, f
		}
	}
	return len(msgs) > 0
}

// streamOpens returns the HTTP streams the client opened without sending
// a frame on them (the standalone GET, the HTTP+SSE stream, a DELETE), by
// when they opened.
// Resuming GETs are left out: they answered a broken stream, which the
// live run may not have.
func streamOpens(rec *store.Recording) []*store.Stream {
	withFrame := map[int64]bool{}
	for i := range rec.Frames {
		if rec.Frames[i].Direction == store.ClientToServer {
			withFrame[rec.Frames[i].StreamID] = true
		}
	}
	var out []*store.Stream
	for i := range rec.Streams {
		st := &rec.Streams[i]
		if (st.Kind == store.GetStream || st.Kind == store.DeleteStream || st.Kind == store.SSEGetStream) && !withFrame[st.ID] {
			out = append(out, st)
		}
	}
	slices.SortStableFunc(out, func(a, b *store.Stream) int {
		switch {
		case a.Opened < b.Opened:
			return -1
		case a.Opened > b.Opened:
			return 1
		}
		return 0
	})
	return out
}

// pick returns the recorded server request that best matches live: the
// first unused one with the same method and params, else the first
// unused one with the same method. It marks it used.
func (p *plan) pick(live jsonrpc.Message) *srvReq {
	k := live.Method + " " + diff.Key(live.Params)
	var best *srvReq
	for _, sr := range p.srvReqs {
		if sr.used || sr.answer == nil || sr.method != live.Method {
			continue
		}
		if sr.mkey == k {
			best = sr
			break
		}
		if best == nil {
			best = sr
		}
	}
	if best != nil {
		best.used = true
	}
	return best
}
