package causal

import (
	"encoding/json"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/store"
)

// walk is the pairing store.Link did before the Model existed, kept as an
// independent walk of the same rules: TestNew_AgreesWithLink checks that
// the Model pairs every committed cassette as it does. JSON-RPC ids live
// in one namespace per direction: an answer pairs with the latest
// unanswered request of the same id sent the other way.
func walk(frames []store.Frame) Links {
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
		dir store.Direction
		id  string
	}
	type pending struct {
		seq    int64
		method string
	}
	open := map[key]pending{}    // unanswered requests by sender and id
	tokens := map[string]int64{} // progress token → request seq
	sent := map[key]pending{}    // every request by sender and id, for cancellations
	request := func(f *store.Frame, m jsonrpc.Message) {
		k := key{f.Direction, string(m.ID)}
		p := pending{f.Seq, m.Method}
		open[k], sent[k] = p, p
		if tok, ok := jsonrpc.Lookup(m.Params, "_meta", "progressToken"); ok {
			tokens[string(tok)] = f.Seq
		}
	}
	answer := func(f *store.Frame, m jsonrpc.Message) {
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
	notification := func(f *store.Frame, m jsonrpc.Message) {
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
	var one func(f *store.Frame, m jsonrpc.Message)
	one = func(f *store.Frame, m jsonrpc.Message) {
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
