package jsonrpc

import "encoding/json"

// ErrorResponse returns the JSON-RPC error response to request id with
// code, message and data (omitted when nil). The id goes in as the client
// sent it, byte for byte (encoding/json would re-escape a string id:
// "<a>" would come back as "\u003ca\u003e"); an empty id is null.
func ErrorResponse(id json.RawMessage, code int, message string, data any) []byte {
	type rpcError struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Data    any    `json:"data,omitempty"`
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   rpcError        `json:"error"`
	}{JSONRPC: "2.0", ID: json.RawMessage("null"), Error: rpcError{code, message, data}})
	if out, err := Splice(b, id, "id"); err == nil && len(id) > 0 {
		return out
	}
	return b
}

// ReplyEach returns what m's requests are owed: answer(id) for a request,
// an array of them (one per request, in order) for a batch holding
// requests, nil when nothing is owed (a notification, a response, a batch
// without requests).
func ReplyEach(m Message, answer func(id json.RawMessage) []byte) []byte {
	switch m.Kind {
	case KindRequest:
		return answer(m.ID)
	case KindBatch:
		var out []byte
		for _, x := range m.Members {
			if x.Kind != KindRequest {
				continue
			}
			if out == nil {
				out = append(out, '[')
			} else {
				out = append(out, ',')
			}
			out = append(out, answer(x.ID)...)
		}
		if out != nil {
			out = append(out, ']')
		}
		return out
	}
	return nil
}

// RequestIDs returns the ids of the requests in m, a request or a batch.
func (m Message) RequestIDs() []string {
	return m.ids(func(k Kind) bool { return k == KindRequest })
}

// ResponseIDs returns the ids of the responses in m, a response or a
// batch.
func (m Message) ResponseIDs() []string { return m.ids(Kind.IsResponse) }

// ids returns the ids of m, or of the members of batch m, whose kind is
// one of kind.
func (m Message) ids(kind func(Kind) bool) []string {
	ms := []Message{m}
	if m.Kind == KindBatch {
		ms = m.Members
	}
	var ids []string
	for _, x := range ms {
		if kind(x.Kind) {
			ids = append(ids, string(x.ID))
		}
	}
	return ids
}
