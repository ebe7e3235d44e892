package replayer

import (
	"net/http"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/internal/mcpwire"
	"github.com/mcpvcr/mcpvcr/store"
)

// HeaderMismatchCode is the 2026-07-28 error for HTTP headers that do not
// mirror the body.
const HeaderMismatchCode = -32020

// strictHTTP checks the client's side of Streamable HTTP against the
// revision the session negotiated, as a strict server would (the rules
// are mcpwire.StrictHTTP). It returns what is wrong, or "" when nothing
// is.
func (ls *liveSession) strictHTTP(r *http.Request, live jsonrpc.Message) string {
	ls.mu.Lock()
	id := ls.id
	ls.mu.Unlock()
	return strictHTTP(r, live, ls.recording(), id)
}

// strictHTTP checks r, carrying live, as a strict server of rec would;
// sessionID is the Mcp-Session-Id issued, "" if none.
func strictHTTP(r *http.Request, live jsonrpc.Message, rec *recording, sessionID string) string {
	return mcpwire.StrictHTTP(r, live, rec.Session.Revision, sessionID, func(tool string) map[string]string {
		return paramHeaders(rec, tool)
	})
}

// paramHeaders returns, for a tool of rec's recorded tools/list answers,
// the arguments annotated with x-mcp-header and their header names.
func paramHeaders(rec *recording, tool string) map[string]string {
	out := map[string]string{}
	for i := range rec.Frames {
		if f := &rec.Frames[i]; f.Direction == store.ServerToClient && f.Kind == store.KindResult {
			mcpwire.ToolParamHeaders(jsonrpc.Parse(f.Data).Result, tool, out)
		}
	}
	return out
}
