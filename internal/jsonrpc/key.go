package jsonrpc

import "encoding/json"

// Key returns the canonical text of a decoded JSON value, to compare two
// values cheaply: objects marshal with sorted keys.
func Key(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// Messages parses raw and returns its messages: a batch's members, or the
// one message.
func Messages(raw []byte) []Message {
	m := Parse(raw)
	if m.Kind == KindBatch {
		return m.Members
	}
	return []Message{m}
}
