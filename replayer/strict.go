package replayer

import (
	"net/http"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/internal/mcpwire"
	"github.com/mcpvcr/mcpvcr/internal/script"
)

// HeaderMismatchCode is the 2026-07-28 error for HTTP headers that do not
// mirror the body.
const HeaderMismatchCode = -32020

// strictRefuses answers r, carrying live (body), with 400 when a strict
// server of rec would refuse it, reports that through mismatch, and
// reports whether it answered. sessionID is the Mcp-Session-Id issued, ""
// if none; pooled says r is a 2026-07-28 exchange of its own. The error
// is HeaderMismatchCode for a 2026-07-28 request (pooled, or carrying
// _meta protocolVersion), -32600 otherwise.
//
// It is the one check of --strict over HTTP, called where a strict server
// would check: for a conversation's frame once its session is found and
// the hooks had their turn at AtRequest (an expired session's 404 comes
// first), and for a pooled exchange before the hooks (a refused request
// does not use up a fault planned for the exchange). Route decides
// before either is known, so the check is not there.
func strictRefuses(w http.ResponseWriter, r *http.Request, live jsonrpc.Message, body []byte, rec *recording, sessionID string, pooled bool, mismatch func(*Mismatch)) bool {
	why := strictHTTP(r, live, rec, sessionID)
	if why == "" {
		return false
	}
	mismatch(&Mismatch{Live: body, Reason: "strict: " + why})
	code := -32600
	if pooled || mcpwire.RequestMeta(live.Params).ProtocolVersion != "" {
		code = HeaderMismatchCode
	}
	writeJSONError(w, http.StatusBadRequest, live.ID, code, "mcpvcr replay (strict): "+why)
	return true
}

// strictHTTP checks r, carrying live, as a strict server of rec would
// (the rules are mcpwire.StrictHTTP); sessionID is the Mcp-Session-Id
// issued, "" if none. It returns what is wrong, or "" when nothing is.
func strictHTTP(r *http.Request, live jsonrpc.Message, rec *recording, sessionID string) string {
	return mcpwire.StrictHTTP(r, live, rec.Session.Revision, sessionID, func(tool string) map[string]string {
		return script.ParamHeaders(rec.Recording, tool)
	})
}
