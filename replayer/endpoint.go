package replayer

import (
	"net/url"

	"github.com/mcpvcr/mcpvcr/store"
)

// EndpointPath is the path of the MCP endpoint (or HTTP+SSE stream) the
// recordings were made against, as the upstream URL of the first one
// names it, so that a replay can tell a client the exact URL to use.
// A Server answers on every path; "/mcp" is said when nothing is known.
func EndpointPath(recs []*store.Recording) string {
	for _, r := range recs {
		if u, err := url.Parse(r.Session.Upstream); err == nil && u.Host != "" {
			if p := u.EscapedPath(); p != "" {
				return p
			}
			return "/"
		}
	}
	return "/mcp"
}
