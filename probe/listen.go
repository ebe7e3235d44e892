package probe

import (
	"encoding/json"
	"net/http"

	"github.com/mcpvcr/mcpvcr/internal/mcpwire"
	"github.com/mcpvcr/mcpvcr/replayer"
	"github.com/mcpvcr/mcpvcr/store"
)

// listen-ended: the first subscriptions/listen of a 2026-07-28 session
// over Streamable HTTP is answered with a stream the server ends: the
// notifications/subscriptions/acknowledged the server must send first,
// then the listen's final result (resultType "complete", its
// subscriptionId), then the end of the stream. A client that still wants
// the notifications opens the stream again with a new subscriptions/listen;
// the exchange stays unused, so that one is answered as recorded.

const secListen = "docs/specification/2026-07-28/basic/patterns/subscriptions.mdx"

func init() {
	specs[ListenEnded] = &spec{
		name:    "listen-ended",
		allowed: modernHTTP,
		rule: func(string) (string, string, Level) {
			return "a subscriptions/listen stream the server ends is opened again with a new request by a client that still wants its notifications (the text says MAY: a warning)", secListen, Warning
		},
		place:  placeListen,
		follow: func(*Probe, *store.Recording, *request) (replayer.Action, bool) { return replayer.Action{}, false },
		judge:  judgeListen,
	}
	where[ListenEnded] = "a subscriptions/listen of a 2026-07-28 session over Streamable HTTP"
}

func placeListen(p *replayer.Point, _ *store.Recording, req *request) (*Probe, replayer.Action) {
	if !p.Pooled || req.method != http.MethodPost || req.msg.Method != "subscriptions/listen" || !req.msg.HasID() {
		return nil, replayer.Action{}
	}
	meta := map[string]json.RawMessage{mcpwire.MetaSubscriptionID: req.msg.ID}
	filter, _ := member(req.msg.Params, "notifications")
	ack, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
		"params": map[string]any{"_meta": meta, "notifications": filter}})
	if filter == nil {
		ack, _ = json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
			"params": map[string]any{"_meta": meta}})
	}
	res, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": req.msg.ID,
		"result": map[string]any{"resultType": "complete", "_meta": meta}})
	body := "event: message\ndata: " + string(ack) + "\n\nevent: message\ndata: " + string(res) + "\n\n"
	pr := &Probe{What: "answered with the acknowledgement and the listen's final result, then ended the stream"}
	return pr, replayer.Action{Status: http.StatusOK, Header: http.Header{"Content-Type": {"text/event-stream"}, "Cache-Control": {"no-cache"}},
		Body: []byte(body)}
}

func judgeListen(pr *Probe, after []*request) (string, Verdict) {
	var other *request
	for _, r := range after {
		switch {
		case r.sent() && r.msg.Method == "subscriptions/listen" && r.msg.HasID():
			return "opened the stream again (" + r.describe() + ")", VerdictPass
		case other == nil && r.sent() && r.msg.HasID():
			other = r
		}
	}
	if other != nil {
		return "did not open the stream again (next: " + other.describe() + ")", VerdictFail
	}
	return "sent nothing more (the stream was not opened again)", VerdictNotObserved
}
