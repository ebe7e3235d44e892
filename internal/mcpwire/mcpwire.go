// Package mcpwire holds what mcpvcr knows about each MCP revision: the
// revisions, their eras, the _meta keys and headers they use, and what a
// strict server of each checks of the client's HTTP requests (StrictHTTP).
package mcpwire

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
)

// The protocol revisions mcpvcr knows, oldest first.
const (
	V20241105 = "2024-11-05"
	V20250326 = "2025-03-26"
	V20250618 = "2025-06-18"
	V20251125 = "2025-11-25"
	V20260728 = "2026-07-28"
)

// Revisions lists the known revisions, oldest first.
var Revisions = []string{V20241105, V20250326, V20250618, V20251125, V20260728}

// Known reports whether rev is a revision mcpvcr knows.
func Known(rev string) bool { return slices.Contains(Revisions, rev) }

// IsModern reports whether rev is of the modern era, which has no
// initialize handshake: 2026-07-28 on.
func IsModern(rev string) bool { return rev >= V20260728 }

// Reserved _meta keys of the modern era.
const (
	MetaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	MetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	MetaClientInfo         = "io.modelcontextprotocol/clientInfo"
	MetaServerInfo         = "io.modelcontextprotocol/serverInfo"
	MetaLogLevel           = "io.modelcontextprotocol/logLevel"
	MetaSubscriptionID     = "io.modelcontextprotocol/subscriptionId"
)

// Meta is the part of a request's or result's _meta that mcpvcr reads.
type Meta struct {
	ProtocolVersion string
	ClientInfo      json.RawMessage
	ServerInfo      json.RawMessage
	ProgressToken   json.RawMessage
}

// RequestMeta reads params._meta of a request. Missing or malformed
// values are left empty.
func RequestMeta(params json.RawMessage) Meta { return readMeta(params) }

// ResultMeta reads result._meta of a response.
func ResultMeta(result json.RawMessage) Meta { return readMeta(result) }

func readMeta(obj json.RawMessage) Meta {
	var m Meta
	if len(obj) == 0 {
		return m
	}
	// Only _meta is decoded: the rest of a result (tool output, resource
	// contents) can be large, and this runs for every frame recorded.
	raw, ok := jsonrpc.Lookup(obj, "_meta")
	if !ok {
		return m
	}
	var meta map[string]json.RawMessage
	if json.Unmarshal(raw, &meta) != nil || meta == nil {
		return m
	}
	if v, ok := meta[MetaProtocolVersion]; ok {
		_ = json.Unmarshal(v, &m.ProtocolVersion)
	}
	m.ClientInfo = meta[MetaClientInfo]
	m.ServerInfo = meta[MetaServerInfo]
	m.ProgressToken = meta["progressToken"]
	return m
}

// hopHeaders are the headers of a recorded answer that replay never
// sends: the live connection sets its own.
var hopHeaders = []string{"Content-Length", "Transfer-Encoding", "Connection", "Keep-Alive", "Date", "Trailer", "Upgrade", "Proxy-Connection"}

// HopHeader reports whether a recorded answer's header k is one the live
// connection sets itself (hop-by-hop, length, date), which replay does
// not send.
func HopHeader(k string) bool {
	for _, h := range hopHeaders {
		if strings.EqualFold(h, k) {
			return true
		}
	}
	return false
}
