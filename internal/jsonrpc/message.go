// Package jsonrpc is a read-only view over raw JSON-RPC 2.0 bytes as MCP
// puts them on the wire: one message, or (2025-03-26) a batch array.
//
// Nothing here re-encodes a message. Parse derives the kind, id token and
// method from the bytes, and Splice rewrites one value in place, leaving
// every other byte as it was.
package jsonrpc

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	segjson "github.com/segmentio/encoding/json"
)

// Kind is what a frame holds at the JSON-RPC level.
type Kind int

// The kinds of message. Zero means the bytes are not a JSON-RPC message.
const (
	KindInvalid      Kind = iota // not JSON, or JSON that is not a JSON-RPC message
	KindRequest                  // method and id
	KindNotification             // method, no id
	KindResult                   // response with result
	KindError                    // response with error
	KindBatch                    // a JSON array of messages
	KindEmpty                    // no bytes at all (an SSE event with empty data)
)

var kindNames = [...]string{"invalid", "request", "notification", "result", "error", "batch", "empty"}

// String returns the kind's lower-case name.
func (k Kind) String() string {
	if k < 0 || int(k) >= len(kindNames) {
		return "unknown"
	}
	return kindNames[k]
}

// ParseKind is the inverse of Kind.String. Unknown names give KindInvalid.
func ParseKind(s string) Kind {
	for i, n := range kindNames {
		if n == s {
			return Kind(i)
		}
	}
	return KindInvalid
}

// IsResponse reports whether k is a result or an error.
func (k Kind) IsResponse() bool { return k == KindResult || k == KindError }

// Message is the parsed view of one JSON-RPC message or batch. Raw is the
// exact input; the other fields are derived from it.
type Message struct {
	Raw    []byte
	Kind   Kind
	ID     json.RawMessage // the raw id token (1 and "1" differ); nil when absent
	Method string
	// Params, Result and Error are the raw member values, nil when absent.
	Params json.RawMessage
	Result json.RawMessage
	Error  json.RawMessage
	// Members holds a batch's elements, in order.
	Members []Message
}

type wire struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  *string         `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

// Parse derives the view of raw. Leading and trailing white space
// (including a line's "\r\n") is ignored. Bytes that are not a JSON-RPC
// message give KindInvalid; Parse never fails.
func Parse(raw []byte) Message {
	m := Message{Raw: raw}
	b := bytes.TrimSpace(raw)
	if len(b) == 0 {
		m.Kind = KindEmpty
		return m
	}
	switch b[0] {
	case '[':
		var elems []json.RawMessage
		if err := json.Unmarshal(b, &elems); err != nil || len(elems) == 0 {
			return m
		}
		m.Kind = KindBatch
		m.Members = make([]Message, len(elems))
		for i, e := range elems {
			m.Members[i] = parseOne(e)
		}
		return m
	case '{':
		one := parseOne(b)
		one.Raw = raw
		return one
	}
	return m
}

func parseOne(b []byte) Message {
	var f fields
	switch ok, deep := f.scan(b); {
	case deep:
		return parseDeep(b)
	case !ok:
		return Message{Raw: b}
	}
	return f.message(b)
}

// fields are the raw values of the members of a JSON-RPC object.
type fields struct {
	version, method, id, params, result, errv []byte
}

// set keeps val as the member named key, if JSON-RPC names it; a later
// member of the same name wins, as in every JSON decoder.
func (f *fields) set(key, val []byte) {
	switch string(key) {
	case "jsonrpc":
		f.version = val
	case "id":
		f.id = val
	case "method":
		f.method = val
	case "params":
		f.params = val
	case "result":
		f.result = val
	case "error":
		f.errv = val
	}
}

// scan reads b, an object between optional white space, into f, checking
// as it goes that b is JSON (see validator). ok is false for anything
// else; deep reports nesting too deep for the validator to tell.
func (f *fields) scan(b []byte) (ok, deep bool) {
	v := validator{scanner: scanner{b: b}}
	v.ws()
	if v.i >= len(b) || b[v.i] != '{' {
		return false, false
	}
	if !v.object(1, f.set) {
		return false, v.deep
	}
	v.ws()
	return v.i == len(b), false
}

// parseDeep is parseOne for an object nested deeper than the validator
// goes: segmentio's validator, then a scan of the members.
func parseDeep(b []byte) Message {
	m := Message{Raw: b}
	if !segjson.Valid(b) {
		return m
	}
	sc := scanner{b: b}
	sc.ws()
	if sc.i >= len(b) || b[sc.i] != '{' {
		return m
	}
	sc.i++
	var f fields
	for {
		sc.ws()
		if sc.i < len(b) && b[sc.i] == '}' {
			break
		}
		k0 := sc.i
		if sc.skipString() != nil {
			return m
		}
		key := b[k0+1 : sc.i-1]
		sc.ws()
		sc.i++ // ':'
		sc.ws()
		v0 := sc.i
		if sc.skipValue() != nil {
			return m
		}
		f.set(key, b[v0:sc.i])
		sc.ws()
		if sc.i < len(b) && b[sc.i] == ',' {
			sc.i++
		}
	}
	return f.message(b)
}

// message derives the view of b, an object that is JSON, from its
// members f.
func (f *fields) message(b []byte) Message {
	m := Message{Raw: b}
	method := f.method
	if string(f.version) != `"2.0"` {
		return m
	}
	m.ID, m.Params, m.Result, m.Error = f.id, f.params, f.result, f.errv
	hasMethod := method != nil && string(method) != "null"
	if hasMethod {
		if method[0] != '"' {
			return Message{Raw: b}
		}
		// Escapes, and bytes that are not UTF-8, read as encoding/json
		// reads them (U+FFFD for each bad byte): the method indexed for a
		// frame is the one its JSON export and every JSON decoder see.
		if bytes.IndexByte(method, '\\') >= 0 || !utf8.Valid(method) {
			var s string
			if json.Unmarshal(method, &s) != nil {
				return Message{Raw: b}
			}
			m.Method = s
		} else {
			m.Method = methodName(method[1 : len(method)-1])
		}
	}
	switch {
	case hasMethod && f.id != nil:
		m.Kind = KindRequest
	case hasMethod:
		m.Kind = KindNotification
	case f.errv != nil && f.result == nil:
		m.Kind = KindError
	case f.result != nil && f.errv == nil:
		m.Kind = KindResult
	}
	return m
}

// HasID reports whether the message carries a non-null id.
func (m Message) HasID() bool { return len(m.ID) > 0 && string(m.ID) != "null" }
