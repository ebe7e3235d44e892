package audit

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcpvcr/mcpvcr/internal/mcpwire"
	"github.com/mcpvcr/mcpvcr/store"
)

// Rules on what a client sends at all: methods 2026-07-28 removed, the
// legacy lifecycle, cancellation, answers to server requests, batches and
// elicitation modes.

const (
	secModernChangelog = "docs/specification/2026-07-28/changelog.mdx"
	secModernMeta      = "docs/specification/2026-07-28/basic/index.mdx §_meta"
	secLifecycle       = "docs/specification/2025-11-25/basic/lifecycle.mdx §Version Negotiation"
	secCancelLegacy    = "docs/specification/2025-11-25/basic/utilities/cancellation.mdx"
	secCancelModern    = "docs/specification/2026-07-28/basic/transports/streamable-http.mdx §Cancellation"
	secMessages        = "docs/specification/2025-11-25/basic/index.mdx §Responses"
	secBatch           = "docs/specification/2025-06-18/changelog.mdx"
	secElicitation     = "docs/specification/2025-11-25/client/elicitation.mdx"
	secRoots           = "docs/specification/2026-07-28/client/roots.mdx"
)

func init() {
	register(
		&Rule{ID: "modern/no-ping", Revisions: modernRevs, Level: Error, Section: secModernChangelog,
			Description: "No ping request: 2026-07-28 removed it.", Check: removed("ping", "no ping: 2026-07-28 removed it")},
		&Rule{ID: "modern/no-logging-setlevel", Revisions: modernRevs, Level: Error, Section: secModernMeta,
			Description: "No logging/setLevel: the level rides in each request's _meta as io.modelcontextprotocol/logLevel.",
			Check:       removed("logging/setLevel", "no logging/setLevel: the log level goes in _meta as "+mcpwire.MetaLogLevel)},
		&Rule{ID: "modern/no-roots-list-changed", Revisions: modernRevs, Level: Error, Section: secModernChangelog,
			Description: "No notifications/roots/list_changed: 2026-07-28 removed it.",
			Check:       removed("notifications/roots/list_changed", "no notifications/roots/list_changed: 2026-07-28 removed it")},
		&Rule{ID: "modern/roots-without-list-changed", Revisions: modernRevs, Level: Error, Section: secRoots,
			Description: "The roots capability in _meta has no listChanged.", Check: checkRootsListChanged},
		&Rule{ID: "lifecycle/no-initialized-after-unknown-version", Revisions: legacyRevs, Unknown: true, Level: Error, Section: secLifecycle,
			Description: "An initialize answered with a version the client does not speak ends the connection: no notifications/initialized follows. Checked for versions no revision has.",
			Check:       checkInitializedAfterUnknown},
		&Rule{ID: "lifecycle/initialize-not-cancelled", Revisions: legacyRevs, Level: Error, Section: secCancelLegacy,
			Description: "initialize is never cancelled: no notifications/cancelled names it.", Check: checkInitializeCancelled},
		&Rule{ID: "cancel/modern-http-by-close", Revisions: modernRevs, Transports: httpOnly, Level: Error, Section: secCancelModern,
			Description: "Over Streamable HTTP in 2026-07-28 closing the response stream is the cancellation: no notifications/cancelled is POSTed.",
			Check:       checkModernHTTPCancel},
		&Rule{ID: "server-requests/id-echoed", Revisions: allRevs, Level: Error, Section: secMessages,
			Description: "A response to a server request carries its id exactly as sent: a string id stays a string, a number a number.",
			Check:       checkIDEchoed},
		&Rule{ID: "batch/only-2025-03-26", Revisions: allRevs, Level: Error, Section: secBatch,
			Description: "A JSON-RPC batch (an array) is sent only in 2025-03-26; 2025-06-18 removed batching.",
			Check:       checkBatch},
		&Rule{ID: "elicitation/declared-modes", Revisions: []string{mcpwire.V20250618, mcpwire.V20251125, mcpwire.V20260728}, Level: Error, Section: secElicitation,
			Description: "Elicitation modes as the revision has them: no url mode declared in 2025-06-18 (it has none), and an accepted url-mode request only when url was declared.",
			Check:       checkElicitation},
	)
}

// removed reports every client message with method as a finding.
func removed(method, required string) func(*Rule, *view) []Finding {
	return func(r *Rule, v *view) []Finding {
		var out []Finding
		for _, m := range v.msgs {
			if m.c2s() && m.Method == method {
				out = append(out, v.finding(r, m.f, m.Method, required))
			}
		}
		return out
	}
}

// checkRootsListChanged reports the first request declaring
// roots.listChanged, counting the others: each request declares its
// capabilities afresh, and one finding says it.
func checkRootsListChanged(r *Rule, v *view) []Finding {
	var first *msg
	n := 0
	for _, m := range v.msgs {
		if !m.c2s() || m.Method == "" {
			continue
		}
		caps := field(m.Params, "_meta", mcpwire.MetaClientCapabilities)
		if field(caps, "roots", "listChanged") != nil {
			if first == nil {
				first = m
			}
			n++
		}
	}
	if first == nil {
		return nil
	}
	lc := field(first.Params, "_meta", mcpwire.MetaClientCapabilities, "roots", "listChanged")
	sent := first.Method + " declaring roots.listChanged: " + string(lc)
	if n > 1 {
		sent += fmt.Sprintf(" (and %d later requests)", n-1)
	}
	return []Finding{v.finding(r, first.f, sent, "roots without listChanged")}
}

func checkInitializedAfterUnknown(r *Rule, v *view) []Finding {
	req, resp := v.initialize()
	if req == nil || resp == nil || resp.Result == nil {
		return nil
	}
	got := negotiated(resp)
	if mcpwire.Known(got) {
		return nil
	}
	for _, m := range v.msgs {
		if m.c2s() && m.Method == "notifications/initialized" && m.f.Seq > resp.f.Seq {
			return []Finding{v.finding(r, m.f, "notifications/initialized after initialize returned "+quote(got, true),
				"disconnect: "+quote(got, true)+" is no revision a client speaks")}
		}
	}
	return nil
}

func checkInitializeCancelled(r *Rule, v *view) []Finding {
	req, _ := v.initialize()
	if req == nil {
		return nil
	}
	var out []Finding
	for _, m := range v.msgs {
		if m.c2s() && m.Method == "notifications/cancelled" && string(mcpwire.CancelledRequestID(m.Params)) == string(req.ID) {
			out = append(out, v.finding(r, m.f, "notifications/cancelled naming initialize "+string(req.ID), "initialize is never cancelled"))
		}
	}
	return out
}

// idValue is an id's value without its JSON type: "1" and 1 both give 1.
func idValue(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return strings.TrimSpace(string(raw))
}

func checkIDEchoed(r *Rule, v *view) []Finding {
	sent := map[string]json.RawMessage{} // value -> raw token of server requests
	var out []Finding
	for _, m := range v.msgs {
		switch {
		case !m.c2s() && m.isRequest():
			sent[idValue(m.ID)] = m.ID
		case m.c2s() && m.isResponse() && len(m.ID) > 0:
			if _, exact := v.requests[reqKey{store.ServerToClient, string(m.ID)}]; exact {
				continue
			}
			if raw, ok := sent[idValue(m.ID)]; ok {
				out = append(out, v.finding(r, m.f, "a response with id "+string(m.ID), "id "+string(raw)+", exactly as the server sent it"))
			}
		}
	}
	return out
}

func checkBatch(r *Rule, v *view) []Finding {
	if v.rev == mcpwire.V20250326 {
		return nil
	}
	var out []Finding
	seen := map[int64]bool{}
	for _, m := range v.msgs {
		if m.c2s() && m.f.Batch && !seen[m.f.Seq] {
			seen[m.f.Seq] = true
			out = append(out, v.finding(r, m.f, "a JSON-RPC batch", "one message per frame: batches are 2025-03-26 only"))
		}
	}
	return out
}

// clientCaps returns the capabilities the client declared: in the
// initialize params, or in a modern request's _meta.
func clientCaps(m *msg) json.RawMessage {
	if m.Method == "initialize" {
		return field(m.Params, "capabilities")
	}
	return field(m.Params, "_meta", mcpwire.MetaClientCapabilities)
}

func checkElicitation(r *Rule, v *view) []Finding {
	var out []Finding
	var declared json.RawMessage
	for _, m := range v.msgs {
		if m.c2s() && m.isRequest() {
			if caps := clientCaps(m); caps != nil {
				declared = field(caps, "elicitation")
				if v.rev == mcpwire.V20250618 && field(declared, "url") != nil {
					out = append(out, v.finding(r, m.f, m.Method+" declaring elicitation url mode", "no url mode in 2025-06-18: only form elicitation exists"))
				}
			}
		}
		if !m.c2s() || !m.isResponse() || m.Result == nil {
			continue
		}
		req := v.request(m)
		if req == nil || req.Method != "elicitation/create" || str(field(req.Params, "mode")) != "url" {
			continue
		}
		if str(field(m.Result, "action")) == "accept" && (v.rev == mcpwire.V20250618 || field(declared, "url") == nil) {
			out = append(out, v.finding(r, m.f, "an accepted url-mode elicitation", "url mode only where the revision has it and the client declared it"))
		}
	}
	return out
}

// checkModernHTTPCancel reports each notifications/cancelled POSTed in
// 2026-07-28, saying how the stream of the request it names ended.
func checkModernHTTPCancel(r *Rule, v *view) []Finding {
	var out []Finding
	for _, m := range v.msgs {
		if !m.c2s() || m.Method != "notifications/cancelled" {
			continue
		}
		id := mcpwire.CancelledRequestID(m.Params)
		sent := "notifications/cancelled naming request " + string(id)
		for _, q := range v.msgs {
			if q.c2s() && q.isRequest() && string(q.ID) == string(id) && q.f.Seq < m.f.Seq && q.st != nil {
				sent += fmt.Sprintf(" (whose stream %s#%d ended %s)", q.st.Kind, v.ordinal[q.st.ID], q.st.End)
			}
		}
		out = append(out, v.finding(r, m.f, sent, "no notifications/cancelled over HTTP: closing the request's response stream is the cancellation"))
	}
	return out
}
