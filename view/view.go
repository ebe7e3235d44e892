package view

import (
	"encoding/json"

	"github.com/mcpvcr/mcpvcr/internal/causal"
	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/store"
)

// Kind names what a frame is for people. It is the JSON-RPC kind, except
// for what is not JSON-RPC and is not wrong either: "stderr" (a line of
// the server's stderr), "comment" (an SSE keep-alive), "endpoint" (the
// HTTP+SSE endpoint event), "priming" (an SSE event with an id and no
// data), "empty" (an event with neither), "body" (an HTTP body that is
// not JSON, such as "Accepted") and "http" (a body of a plain HTTP
// exchange beside MCP, such as an OAuth token request).
func Kind(f *store.Frame, stream store.StreamKind) string {
	switch {
	case stream == store.StderrStream:
		return "stderr"
	case f.Comment:
		return "comment"
	case f.SSE && f.Event == "endpoint":
		return "endpoint"
	case stream.String() == "http":
		return "http" // a plain HTTP exchange beside MCP (OAuth metadata, token), never JSON-RPC
	}
	k := f.Kind.String()
	switch {
	case k == "empty" && f.SSE && f.HasEventID:
		return "priming"
	case k == "empty" && f.SSE:
		return "empty"
	case (k == "invalid" || k == "empty") && !f.SSE && isHTTP(stream):
		return "body"
	}
	return k
}

// isHTTP reports whether frames of a stream of kind k travel over HTTP.
// Kinds this build does not know are taken to be HTTP exchanges.
func isHTTP(k store.StreamKind) bool {
	switch k {
	case store.StdinStream, store.StdoutStream, store.StderrStream:
		return false
	}
	return true
}

// names returns, for each request that names a tool, prompt or resource
// (tools/call, prompts/get: params.name; resources/read and the like:
// params.uri), that name by seq, and the same for the answers to them.
func names(frames []store.Frame, links causal.Links) map[int64]string {
	out := map[int64]string{}
	for i := range frames {
		f := &frames[i]
		if f.Kind.String() != "request" {
			continue
		}
		params := jsonrpc.Parse(f.Data).Params
		for _, key := range []string{"name", "uri"} {
			if v, ok := jsonrpc.Lookup(params, key); ok {
				var s string
				if json.Unmarshal(v, &s) == nil && s != "" {
					out[f.Seq] = s
					if a, ok := links.Answer[f.Seq]; ok {
						out[a] = s
					}
				}
				break
			}
		}
	}
	return out
}
