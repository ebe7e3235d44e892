package replayer

import (
	"context"
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

// Sessions returns how many recorded sessions s replays.
func (s *Server) Sessions() int {
	if len(s.Recordings) == 0 && s.Source != nil {
		return s.Source.Len()
	}
	return len(s.Recordings)
}

// EndpointPath returns the path s's clients connect to, as the function
// EndpointPath gives it; reading a Source, that of its first session.
func (s *Server) EndpointPath(ctx context.Context) string {
	if len(s.Recordings) == 0 && s.Source != nil {
		rec, err := s.Source.first(ctx, s.Match)
		if err != nil {
			return EndpointPath(nil)
		}
		return EndpointPath([]*store.Recording{rec.Recording})
	}
	return EndpointPath(s.Recordings)
}
