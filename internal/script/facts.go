package script

import (
	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/internal/mcpwire"
	"github.com/mcpvcr/mcpvcr/store"
)

// FirstClientFrame returns the first client frame of rec's stream id.
func FirstClientFrame(rec *store.Recording, id int64) *store.Frame {
	for i := range rec.Frames {
		if f := &rec.Frames[i]; f.StreamID == id && f.Direction == store.ClientToServer {
			return f
		}
	}
	return nil
}

// ServerClosedFirst reports whether rec's server closed its stdout
// before the client closed its stdin: the server exited mid-session.
func ServerClosedFirst(rec *store.Recording) bool {
	var in, out *store.Stream
	for i := range rec.Streams {
		switch rec.Streams[i].Kind {
		case store.StdinStream:
			in = &rec.Streams[i]
		case store.StdoutStream:
			out = &rec.Streams[i]
		}
	}
	if in == nil || out == nil || out.End == store.EndOpen {
		return false
	}
	return in.End == store.EndOpen || in.End == store.EndServerClosed || out.Closed < in.Closed
}

// ParamHeaders returns, for a tool of rec's recorded tools/list answers,
// the arguments annotated with x-mcp-header and their header names.
func ParamHeaders(rec *store.Recording, tool string) map[string]string {
	out := map[string]string{}
	for i := range rec.Frames {
		if f := &rec.Frames[i]; f.Direction == store.ServerToClient && f.Kind == store.KindResult {
			mcpwire.ToolParamHeaders(jsonrpc.Parse(f.Data).Result, tool, out)
		}
	}
	return out
}
