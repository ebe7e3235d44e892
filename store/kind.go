package store

import "github.com/mcpvcr/mcpvcr/internal/jsonrpc"

// Kind is what a frame holds at the JSON-RPC level. It is the parser's
// own kind, so that one enumeration serves the parser and the store: its
// String method returns the kind's lower-case name ("request", "result",
// …) and IsResponse reports whether it is a result or an error.
type Kind = jsonrpc.Kind

// The kinds of frame. Zero means the bytes are not a JSON-RPC message.
const (
	KindInvalid      Kind = jsonrpc.KindInvalid      // not JSON, or JSON that is not a JSON-RPC message
	KindRequest      Kind = jsonrpc.KindRequest      // method and id
	KindNotification Kind = jsonrpc.KindNotification // method, no id
	KindResult       Kind = jsonrpc.KindResult       // response with result
	KindError        Kind = jsonrpc.KindError        // response with error
	KindBatch        Kind = jsonrpc.KindBatch        // a JSON array of messages
	KindEmpty        Kind = jsonrpc.KindEmpty        // no bytes at all (an SSE event with empty data)
)

// Message is the parsed view of one JSON-RPC message or batch, as
// Frame.DeriveMessage returns it: Raw is the exact input, the other
// fields are derived from it. Params, Result and Error are the raw member
// values, nil when absent; ID is the raw id token (1 and "1" differ).
type Message = jsonrpc.Message
