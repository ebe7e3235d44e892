package probe

import (
	"fmt"
	"net/http"

	"github.com/mcpvcr/mcpvcr/replayer"
	"github.com/mcpvcr/mcpvcr/store"
)

// header-mismatch: a 2026-07-28 tools/call over Streamable HTTP is
// answered 400 with -32020 (HeaderMismatch), as a server does when the
// client's Mcp-Param-* headers do not match the tool's annotations as the
// server now lists them. The client should list tools again, then retry
// the call, at most once.

const secHeaderMismatch = "docs/specification/2026-07-28/basic/transports/streamable-http.mdx §Server validation"

func init() {
	specs[HeaderMismatch] = &spec{
		name:    "header-mismatch",
		allowed: modernHTTP,
		rule: func(string) (string, string, Level) {
			return "after -32020 on tools/call the client SHOULD list tools again, then retry the call, at most once", secHeaderMismatch, Warning
		},
		place:  placeHeaderMismatch,
		follow: func(*Probe, *store.Recording, *request) (replayer.Action, bool) { return replayer.Action{}, false },
		judge:  judgeHeaderMismatch,
	}
	where[HeaderMismatch] = "a tools/call of a 2026-07-28 session over Streamable HTTP"
}

// callKey identifies a tools/call by its tool name and arguments.
func callKey(r *request) string {
	args, _ := member(r.msg.Params, "arguments")
	return str(r.msg.Params, "name") + "\x00" + key(args)
}

func placeHeaderMismatch(p *replayer.Point, rec *store.Recording, req *request) (*Probe, replayer.Action) {
	if !p.Pooled || req.method != http.MethodPost || req.msg.Method != "tools/call" || !req.msg.HasID() {
		return nil, replayer.Action{}
	}
	pr := &Probe{What: "answered 400 with -32020 (HeaderMismatch) instead of the recorded result"}
	// The identical calls the recorded client made after this one: the
	// client's own, not retries.
	ck, seq := callKey(req), int64(-1)
	for i := range rec.Frames {
		f := &rec.Frames[i]
		if f.Direction != store.ClientToServer || f.Method != "tools/call" {
			continue
		}
		if seq < 0 && p.Stream != nil && f.StreamID == p.Stream.ID {
			seq = f.Seq
			continue
		}
		if seq >= 0 && f.Seq > seq && callKey(&request{msg: parseFrame(f)}) == ck {
			pr.again++
		}
	}
	return pr, errorAction(http.StatusBadRequest, req.msg.ID, -32020, "Header mismatch (mcpvcr probe)")
}

func judgeHeaderMismatch(pr *Probe, after []*request) (string, Verdict) {
	listed, retries := false, 0
	var other *request
	ck := callKey(pr.req)
	for _, r := range after {
		switch {
		case r.method != http.MethodPost || !r.msg.HasID():
		case r.msg.Method == "tools/list" && retries == 0:
			listed = true
		case r.msg.Method == "tools/call" && callKey(r) == ck:
			if !listed && retries == 0 {
				return "retried the call without listing tools again first (" + r.describe() + ")", VerdictFail
			}
			retries++
		case other == nil:
			other = r
		}
	}
	extra := retries - pr.again
	switch {
	case !listed && other != nil:
		return "went on without listing tools again (next: " + other.describe() + ")", VerdictFail
	case !listed:
		return "sent nothing more (no tools/list, no retry)", VerdictNotObserved
	case extra > 1:
		return fmt.Sprintf("listed tools again, then retried the call %d times", extra), VerdictFail
	case extra <= 0:
		return "listed tools again and did not retry the call", VerdictPass
	}
	return "listed tools again, then retried the call once", VerdictPass
}
