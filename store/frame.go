package store

import "github.com/mcpvcr/mcpvcr/internal/jsonrpc"

// Derive fills the frame's derived fields (Kind, ID, Method, Batch,
// Members, Malformed) from Data, setting Data to Raw first when it is nil
// and the frame is not an SSE event. kind is the kind of the frame's
// stream. stderr lines, plain HTTP exchanges and SSE comments are never
// malformed: they are not expected to hold JSON-RPC.
func (f *Frame) Derive(kind StreamKind) { f.DeriveMessage(kind) }

// DeriveMessage is Derive, returning the parsed view of Data it derived
// the fields from, so that a caller need not parse the frame again.
func (f *Frame) DeriveMessage(kind StreamKind) Message {
	if f.Data == nil && !f.SSE {
		f.Data = f.Raw
	}
	if !f.SSE {
		f.Retry = -1 // only SSE events carry retry
	}
	m := jsonrpc.Parse(f.Data)
	f.Kind, f.Method = m.Kind, m.Method
	f.ID = ""
	if m.ID != nil {
		f.ID = string(m.ID)
	}
	f.Batch = m.Kind == jsonrpc.KindBatch
	f.Members = nil
	for _, e := range m.Members {
		mem := Member{Kind: e.Kind, Method: e.Method}
		if e.ID != nil {
			mem.ID = string(e.ID)
		}
		f.Members = append(f.Members, mem)
	}
	switch {
	case kind == StderrStream, kind == HTTPStream, f.Comment:
		f.Malformed = false
	case f.SSE && m.Kind == jsonrpc.KindEmpty:
		f.Malformed = false // a priming event, or an event with no data
	case f.SSE && f.Event == "endpoint":
		f.Malformed = false // the HTTP+SSE endpoint event carries a URL
	default:
		f.Malformed = m.Kind == jsonrpc.KindInvalid || m.Kind == jsonrpc.KindEmpty
	}
	return m
}
