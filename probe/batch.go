package probe

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/replayer"
	"github.com/mcpvcr/mcpvcr/store"
)

// batch: the first server request of a 2025-03-26 Streamable HTTP
// session (roots/list, sampling) is sent as a JSON-RPC batch, the one
// revision that has them: an array holding the recorded request and a
// ping of the probe's. A 2025-03-26 client MUST be able to receive a
// batch and handle every element: it answers both requests, one POST
// each or a batch of answers. The answer to the recorded request goes
// on to replay as it came (a batch of answers gets its ping answer taken
// out); the ping's answer alone is answered 202 by the probe.

const (
	secBatch = "docs/specification/2025-03-26/basic/index.mdx §Batching"
	// batchPing is the id of the ping the batch carries.
	batchPing = `"mcpvcr-probe-batch"`
)

func init() {
	specs[Batch] = &spec{
		name: "batch",
		allowed: func(rev string, tr store.Transport) bool {
			return tr == store.StreamableHTTP && rev == "2025-03-26"
		},
		rule: func(string) (string, string, Level) {
			return "a 2025-03-26 client MUST be able to receive a JSON-RPC batch: every request in it is answered", secBatch, Error
		},
		place: func(*replayer.Point, *store.Recording, *request) (*Probe, replayer.Action) {
			return nil, replayer.Action{}
		},
		follow: followBatch,
		judge:  judgeBatch,
	}
	where[Batch] = "a server request in a 2025-03-26 Streamable HTTP session"
}

// placeBatch places batch at p, the recorded event about to go, when it
// is a server request: the event goes as a batch of it and a ping.
func (h *Hook) placeBatch(p *replayer.Point) (replayer.Action, bool) {
	f := p.Frame
	rec := p.Recording
	if f.Direction != store.ServerToClient || f.Kind != store.KindRequest || f.ID == "" || !f.SSE ||
		rec == nil || !specs[Batch].allowed(rec.Session.Revision, rec.Session.Transport) {
		return replayer.Action{}, false
	}
	ping := `{"jsonrpc":"2.0","id":` + batchPing + `,"method":"ping"}`
	data := append(append(append([]byte("["), bytes.TrimSpace(f.Data)...), ","+ping...), ']')
	h.placeAtServerRequest(Batch, p, "sent the server request "+f.Method+" in a batch with a ping (id "+batchPing+")")
	return replayer.Action{Replace: event(f, data)}, true
}

// unbatch returns the body replay reads instead of body, a batch of
// answers holding the answer to the probe's ping: the other answers (the
// one alone as it came); nil when body is no such batch.
func unbatch(pr *Probe, m jsonrpc.Message) []byte {
	if pr.Kind != Batch || m.Kind != jsonrpc.KindBatch {
		return nil
	}
	var rest []json.RawMessage
	found := false
	for _, e := range m.Members {
		if e.Kind.IsResponse() && string(e.ID) == batchPing {
			found = true
			continue
		}
		rest = append(rest, json.RawMessage(e.Raw))
	}
	switch {
	case !found:
		return nil
	case len(rest) == 1:
		return rest[0]
	}
	b, _ := json.Marshal(rest)
	return b
}

// followBatch answers the ping's answer, POSTed alone, 202.
func followBatch(pr *Probe, _ *store.Recording, req *request) (replayer.Action, bool) {
	if !req.msg.Kind.IsResponse() || string(req.msg.ID) != batchPing {
		return replayer.Action{}, false
	}
	return replayer.Action{Status: http.StatusAccepted}, true
}

func judgeBatch(pr *Probe, after []*request) (string, Verdict) {
	recorded, ping := false, false
	var other *request
	for _, r := range after {
		ms := []jsonrpc.Message{r.msg}
		if r.msg.Kind == jsonrpc.KindBatch {
			ms = r.msg.Members
		}
		for _, m := range ms {
			switch {
			case m.Kind.IsResponse() && string(m.ID) == batchPing:
				ping = true
			case m.Kind.IsResponse() && (string(m.ID) == pr.cursor || string(m.ID) == strconv.Quote(pr.cursor)):
				recorded = true
			case other == nil && r.method != http.MethodGet:
				other = r
			}
		}
		if recorded && ping {
			return "answered both requests of the batch", VerdictPass
		}
	}
	switch {
	case recorded:
		return "answered " + pr.msg() + " but not the ping beside it in the batch", VerdictFail
	case ping:
		return "answered the ping but not " + pr.msg(), VerdictFail
	case other != nil:
		return "answered neither request of the batch (next: " + other.describe() + ")", VerdictFail
	}
	return "answered neither request of the batch, and sent nothing more", VerdictNotObserved
}

// msg names the recorded server request pr sent.
func (pr *Probe) msg() string { return pr.req.msg.Method + " (id " + pr.cursor + ")" }
