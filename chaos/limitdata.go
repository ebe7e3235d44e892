package chaos

import (
	"bytes"

	"github.com/mcpvcr/mcpvcr/store"
)

// limit_data (Toxiproxy's name): a POST's event stream dropped inside an
// event, as a connection that closes after so many bytes leaves it: the
// event's id line (where it has one) and half its data written, then the
// connection dropped without a clean end. The half event is no event (an
// SSE parser dispatches an event only at the blank line that ends it), so
// its id is not the last one received: a client resumes from the event
// before it, or, on a stream without ids, has lost the request and
// carries on, as after a cut.

// sitesLimitData returns the events of a POST's SSE answer (from the
// session's POST 3) inside which the stream can drop: any after the
// first, up to and including the response.
func sitesLimitData(rec *store.Recording, st *store.Stream, base Fault, evs []*store.Frame, requests int, cancelled map[int64]*store.Frame) []Fault {
	if resumedInRecording(rec, st.ID) {
		return nil
	}
	return sitesUpToResponse(st, base, evs, requests, func(f *store.Frame) bool { return len(f.Data) > 1 })
}

// halfEvent returns the bytes of SSE event block raw a limit_data
// writes: up to the middle of its data line.
func halfEvent(raw []byte) []byte {
	d := bytes.Index(raw, []byte("data:"))
	if d < 0 {
		return raw[:len(raw)/2]
	}
	end := bytes.IndexAny(raw[d:], "\r\n")
	if end < 0 {
		end = len(raw) - d
	}
	return raw[:d+len("data:")+(end-len("data:"))/2]
}

// judgeLimitData judges a client whose stream dropped inside an event: on
// a stream with event ids as after a resumable cut (the last id it
// received is that of the last whole event), on one without as after a
// cut.
func judgeLimitData(inj *injection, after, mine []chaosAction) (string, Verdict) {
	if inj.lastID == "" {
		return judgeCut(inj, after, mine)
	}
	return judgeResumable(inj, after, mine)
}
