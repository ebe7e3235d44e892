package store

import "github.com/mcpvcr/mcpvcr/internal/jsonrpc"

// Kind is what a frame holds at the JSON-RPC level.
type Kind int

// The kinds of frame. Zero means the bytes are not a JSON-RPC message.
const (
	KindInvalid      Kind = iota // not JSON, or JSON that is not a JSON-RPC message
	KindRequest                  // method and id
	KindNotification             // method, no id
	KindResult                   // response with result
	KindError                    // response with error
	KindBatch                    // a JSON array of messages
	KindEmpty                    // no bytes at all (an SSE event with empty data)
)

// String returns the kind's lower-case name: "request", "result", …
func (k Kind) String() string { return jsonrpc.Kind(k).String() }

// IsResponse reports whether k is a result or an error.
func (k Kind) IsResponse() bool { return k == KindResult || k == KindError }

// kindOf converts the parser's kind; the two enumerations agree value for
// value (see TestKind_MatchesParser).
func kindOf(k jsonrpc.Kind) Kind { return Kind(k) }
