package main

import (
	"net/url"

	"github.com/mcpvcr/mcpvcr/store"
)

// endpointPath is the path of the MCP endpoint (or HTTP+SSE stream) the
// recordings were made against, as the upstream URL of the first one
// names it, so that replay can print the exact URL to give the client.
// Replay answers on every path; "/mcp" is said when nothing is known.
func endpointPath(recs []*store.Recording) string {
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
