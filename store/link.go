package store

import (
	"encoding/json"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
)

// Links says how the frames of one session relate to each other: which
// answer answers which request, which progress notifications belong to
// which request and which request a cancellation names. Frames are
// named by seq. The views (show, the HTML report, HAR) read it; nothing
// here is stored.
type Links struct {
	// Answer maps a request's seq to the seq of the frame that answers it;
	// a request inside a batch maps its batch frame.
	Answer map[int64]int64
	// Request maps an answer's seq to the seq of the request it answers
	// (the first, for a batch of answers).
	Request map[int64]int64
	// Method maps an answer's seq to the method of the request it answers.
	Method map[int64]string
	// Progress maps a progress notification's seq to its request's seq.
	Progress map[int64]int64
	// Cancel maps a notifications/cancelled seq to the request it cancels,
	// and Cancelled the other way.
	Cancel    map[int64]int64
	Cancelled map[int64]int64
	// AfterCancel maps a frame sent for a request after its cancellation
	// (progress, a late answer) to the seq of the cancellation.
	AfterCancel map[int64]int64
}

// Link works out the Links of a session's frames, given in seq order.
// JSON-RPC ids live in one namespace per direction: an answer pairs with
// the latest unanswered request of the same id sent the other way.
// Frames that are not JSON-RPC (stderr lines, comments, empty events) are
// skipped.
func Link(frames []Frame) Links {
	l := Links{
		Answer:      map[int64]int64{},
		Request:     map[int64]int64{},
		Method:      map[int64]string{},
		Progress:    map[int64]int64{},
		Cancel:      map[int64]int64{},
		Cancelled:   map[int64]int64{},
		AfterCancel: map[int64]int64{},
	}
	type key struct {
		dir Direction
		id  string
	}
	type pending struct {
		seq    int64
		method string
	}
	open := map[key]pending{}    // unanswered requests by sender and id
	tokens := map[string]int64{} // progress token → request seq
	sent := map[key]pending{}    // every request by sender and id, for cancellations
	request := func(f *Frame, m jsonrpc.Message) {
		k := key{f.Direction, string(m.ID)}
		p := pending{f.Seq, m.Method}
		open[k], sent[k] = p, p
		if tok, ok := jsonrpc.Lookup(m.Params, "_meta", "progressToken"); ok {
			tokens[string(tok)] = f.Seq
		}
	}
	answer := func(f *Frame, m jsonrpc.Message) {
		k := key{other(f.Direction), string(m.ID)}
		p, ok := open[k]
		if !ok {
			return
		}
		delete(open, k)
		if _, done := l.Answer[p.seq]; !done {
			l.Answer[p.seq] = f.Seq
		}
		if _, done := l.Request[f.Seq]; !done {
			l.Request[f.Seq], l.Method[f.Seq] = p.seq, p.method
		}
	}
	notification := func(f *Frame, m jsonrpc.Message) {
		switch m.Method {
		case "notifications/progress":
			if tok, ok := jsonrpc.Lookup(m.Params, "progressToken"); ok {
				if seq, ok := tokens[string(tok)]; ok {
					l.Progress[f.Seq] = seq
				}
			}
		case "notifications/cancelled":
			var p struct {
				RequestID json.RawMessage `json:"requestId"`
			}
			if json.Unmarshal(m.Params, &p) == nil && p.RequestID != nil {
				if r, ok := sent[key{f.Direction, string(p.RequestID)}]; ok {
					l.Cancel[f.Seq], l.Cancelled[r.seq] = r.seq, f.Seq
				}
			}
		}
	}
	var one func(f *Frame, m jsonrpc.Message)
	one = func(f *Frame, m jsonrpc.Message) {
		switch m.Kind {
		case jsonrpc.KindRequest:
			request(f, m)
		case jsonrpc.KindResult, jsonrpc.KindError:
			if m.HasID() {
				answer(f, m)
			}
		case jsonrpc.KindNotification:
			notification(f, m)
		case jsonrpc.KindBatch:
			for _, e := range m.Members {
				one(f, e)
			}
		}
	}
	for i := range frames {
		f := &frames[i]
		if f.Comment || len(f.Data) == 0 {
			continue
		}
		one(f, jsonrpc.Parse(f.Data))
	}
	for _, of := range []map[int64]int64{l.Progress, l.Request} {
		for seq, req := range of {
			if c, ok := l.Cancelled[req]; ok && seq > c {
				l.AfterCancel[seq] = c
			}
		}
	}
	return l
}

func other(d Direction) Direction {
	if d == ClientToServer {
		return ServerToClient
	}
	return ClientToServer
}
