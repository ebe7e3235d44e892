package probe

import (
	"fmt"
	"net/http"
	"time"

	"github.com/mcpvcr/mcpvcr/replayer"
	"github.com/mcpvcr/mcpvcr/store"
)

// stream-closed: the first tools/call of a 2026-07-28 session over
// Streamable HTTP is answered 200 with an event stream that ends before
// its response, nothing sent on it. 2026-07-28 has no resumption: the
// client sees the end of the stream and fails the call, or sends it
// again, at once; it does not wait for its own deadline. The exchange
// stays unused, so a call sent again is answered as recorded. The wire
// shows the wait: the time from the end of the stream to the client's
// next request, on replay's clock, against the Hook's Patience.

const secStreamClosed = "docs/specification/2026-07-28/basic/transports/streamable-http.mdx (no resumption)"

// DefaultPatience is the Hook's Patience when none is set.
const DefaultPatience = 5 * time.Second

func init() {
	specs[StreamClosed] = &spec{
		name:    "stream-closed",
		allowed: modernHTTP,
		rule: func(string) (string, string, Level) {
			return "a response stream that ends before its response is an error at once (there is no resumption): the client fails or retries the request, it does not wait for its deadline", secStreamClosed, Error
		},
		place:  placeStreamClosed,
		follow: func(*Probe, *store.Recording, *request) (replayer.Action, bool) { return replayer.Action{}, false },
		judge:  judgeStreamClosed,
	}
	where[StreamClosed] = "a tools/call of a 2026-07-28 session over Streamable HTTP"
}

func placeStreamClosed(p *replayer.Point, _ *store.Recording, req *request) (*Probe, replayer.Action) {
	if !p.Pooled || req.method != http.MethodPost || req.msg.Method != "tools/call" || !req.msg.HasID() {
		return nil, replayer.Action{}
	}
	pr := &Probe{What: "answered 200 with an event stream that ended at once, before its response"}
	return pr, replayer.Action{Status: http.StatusOK, Header: http.Header{"Content-Type": {"text/event-stream"}, "Cache-Control": {"no-cache"}}}
}

// judgeStreamClosed judges pr by the client's next request: within the
// Hook's Patience of the stream's end, it saw the end; later, it waited.
func judgeStreamClosed(pr *Probe, after []*request) (string, Verdict) {
	patience := pr.patience
	ck := callKey(pr.req)
	for _, r := range after {
		if !r.sent() || len(r.body) == 0 {
			continue
		}
		d := r.at.Sub(pr.req.at)
		what := "went on to " + r.describe()
		if r.msg.Method == "tools/call" && callKey(r) == ck {
			what = "sent the call again"
		}
		if d > patience {
			return fmt.Sprintf("%s %v after the stream ended (more than %v: it waited)", what, d.Round(time.Millisecond), patience), VerdictFail
		}
		return fmt.Sprintf("%s %v after the stream ended", what, d.Round(time.Millisecond)), VerdictPass
	}
	return "sent nothing more after the stream ended", VerdictNotObserved
}
