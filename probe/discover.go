package probe

import (
	"fmt"
	"net/http"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/internal/mcpwire"
	"github.com/mcpvcr/mcpvcr/replayer"
	"github.com/mcpvcr/mcpvcr/store"
)

// version-retry: the first server/discover of a 2026-07-28 session over
// Streamable HTTP is answered 400 with -32022 (UnsupportedProtocolVersion),
// data.supported naming the recorded revision only. The client retries
// with a version from data.supported, each version at most twice in all:
// the recorded revision, asked once more, is answered as recorded (the
// exchange stays unused for it).

const secVersioning = "docs/specification/2026-07-28/basic/versioning.mdx"

func init() {
	specs[VersionRetry] = &spec{
		name:    "version-retry",
		allowed: modernHTTP,
		rule: func(string) (string, string, Level) {
			return "after -32022 the retry names a version from data.supported, and no version is asked for more than twice", secVersioning, Warning
		},
		place:  placeVersionRetry,
		follow: func(*Probe, *store.Recording, *request) (replayer.Action, bool) { return replayer.Action{}, false },
		judge:  judgeVersionRetry,
	}
	where[VersionRetry] = "the first server/discover of a 2026-07-28 session over Streamable HTTP"
}

func placeVersionRetry(p *replayer.Point, rec *store.Recording, req *request) (*Probe, replayer.Action) {
	if !p.Pooled || req.method != http.MethodPost || req.msg.Method != "server/discover" || !req.msg.HasID() {
		return nil, replayer.Action{}
	}
	asked := version(req)
	pr := &Probe{cursor: rec.Session.Revision,
		What: fmt.Sprintf("answered 400 with -32022, data.supported [%q], data.requested %q", rec.Session.Revision, asked)}
	data := map[string]any{"supported": []string{rec.Session.Revision}, "requested": asked}
	return pr, replayer.Action{Status: http.StatusBadRequest, Header: http.Header{"Content-Type": {"application/json"}},
		Body: jsonrpc.ErrorResponse(req.msg.ID, -32022, "Unsupported protocol version (mcpvcr probe)", data)}
}

// version returns the protocol version r's _meta names, "" when none.
func version(r *request) string {
	meta, ok := member(r.msg.Params, "_meta")
	if !ok {
		return ""
	}
	return str(meta, mcpwire.MetaProtocolVersion)
}

func judgeVersionRetry(pr *Probe, after []*request) (string, Verdict) {
	asked := map[string]int{version(pr.req): 1}
	retried := ""
	for _, r := range after {
		if r.method != http.MethodPost || !r.msg.HasID() {
			continue
		}
		if r.msg.Method == "initialize" {
			if retried == "" {
				return "fell back to initialize (the legacy era), which the rule does not cover", VerdictNotObserved
			}
			continue
		}
		v := version(r)
		if v == "" || r.msg.Method != "server/discover" {
			continue
		}
		if v != pr.cursor {
			return fmt.Sprintf("asked for %q, which data.supported did not name", v), VerdictFail
		}
		asked[v]++
		if asked[v] > 2 {
			return fmt.Sprintf("asked for %q %d times (at most twice)", v, asked[v]), VerdictFail
		}
		retried = v
	}
	if retried == "" {
		return "did not retry server/discover", VerdictNotObserved
	}
	return fmt.Sprintf("retried with %q from data.supported, %s in all", retried, plural(asked[retried])), VerdictPass
}

func plural(n int) string {
	if n == 1 {
		return "once"
	}
	return fmt.Sprintf("%d times", n)
}
