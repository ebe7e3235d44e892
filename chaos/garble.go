package chaos

import (
	"bytes"
	"fmt"
	"net/http"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/replayer"
	"github.com/mcpvcr/mcpvcr/store"
)

// MALFORMED_RESPONSE_CHUNK (WireMock's name) and error-result: an event
// whose data is garbage, and a JSON-RPC error where the recorded server
// gave a result. A client must drop (and may report) the garbage and take
// the rest of the stream, and must surface the error as the call's
// outcome; either way it carries on.

// sitesMalformed returns the notifications of a POST's SSE answer (from
// the session's POST 3) that come before its response: an event whose
// garbage a client must skip to get the response after it.
func sitesMalformed(rec *store.Recording, st *store.Stream, base Fault, evs []*store.Frame, requests int, cancelled map[int64]*store.Frame) []Fault {
	var out []Fault
	if st.Kind != store.PostStream || !st.SSE() || st.Status != http.StatusOK || requests < 3 {
		return out
	}
	for e, f := range evs {
		if f.Kind.IsResponse() {
			break
		}
		if f.Kind == store.KindNotification {
			g := base
			g.Event, g.Seq = e, f.Seq
			out = append(out, g)
		}
	}
	return out
}

// sitesErrorResult returns the result of a request (from the session's
// POST 3) sent as an SSE event of its POST's answer.
func sitesErrorResult(rec *store.Recording, st *store.Stream, base Fault, evs []*store.Frame, requests int, cancelled map[int64]*store.Frame) []Fault {
	if requests < 3 {
		return nil
	}
	return resultEvents(st, base, evs)
}

// resultEvents returns the results sent as SSE events of st, a POST's
// answer.
func resultEvents(st *store.Stream, base Fault, evs []*store.Frame) []Fault {
	var out []Fault
	if st.Kind != store.PostStream || !st.SSE() || st.Status != http.StatusOK {
		return out
	}
	for e, f := range evs {
		if f.Kind == store.KindResult {
			g := base
			g.Event, g.Seq = e, f.Seq
			out = append(out, g)
		}
	}
	return out
}

// armLocked notes, as fault inj of an event goes out on live stream key
// (after sent events), what its verdict needs: the event is awaited
// (delivered once written), the request it answers (to tell it sent
// again), and for a limit_data the id of the last whole event, the cut
// to come once the half event went.
func (cs *Hook) armLocked(inj *injection, p *replayer.Point, key liveStream, sent int) {
	switch inj.Kind {
	case FaultSlicer, FaultReframe, FaultMalformed, FaultErrorResult, FaultListChanged:
		inj.body = cs.bodyOfLocked(p.Request) // to tell a re-sent request
		cs.awaiting[key] = inj
	case FaultDelay, FaultEarlyPing:
		cs.awaiting[key] = inj
	case FaultLimitData:
		inj.lastID = lastEventSent(p.Recording, p.Stream, sent)
		cs.limited[key] = inj
	}
}

// rewritten returns what fault inj sends in place of event f, when it
// rewrites the event: sliced, garbled, an error, half of it.
func rewritten(inj *injection, f *store.Frame) (replayer.Action, bool) {
	switch inj.Kind {
	case FaultSlicer:
		return replayer.Action{Pieces: slice(f.Raw), Gap: sliceGap}, true
	case FaultReframe:
		return replayer.Action{Replace: reframe(f.Raw)}, true
	case FaultMalformed:
		return replayer.Action{Replace: withData(f.Raw, garbage(f.Data))}, true
	case FaultErrorResult:
		return replayer.Action{Replace: withData(f.Raw, errorResult(string(jsonrpc.Parse([]byte(inj.body)).ID)))}, true
	case FaultLimitData:
		return replayer.Action{Replace: halfEvent(f.Raw)}, true
	case FaultEarlyPing:
		return replayer.Action{Pieces: [][]byte{earlyPingEvent, f.Raw}}, true
	case FaultListChanged:
		return replayer.Action{Pieces: [][]byte{listChangedEvent, f.Raw}}, true
	}
	return replayer.Action{}, false
}

// withData returns SSE event block raw with its data lines replaced by
// one line of data, its other fields (id, event) kept.
func withData(raw, data []byte) []byte {
	var b []byte
	wrote := false
	for _, l := range bytes.Split(bytes.TrimRight(raw, "\r\n"), []byte("\n")) {
		l = bytes.TrimSuffix(l, []byte("\r"))
		if bytes.HasPrefix(l, []byte("data")) && (len(l) == 4 || l[4] == ':') {
			if !wrote {
				b = append(append(append(b, "data: "...), data...), '\n')
				wrote = true
			}
			continue
		}
		b = append(append(b, l...), '\n')
	}
	if !wrote {
		b = append(append(append(b, "data: "...), data...), '\n')
	}
	return append(b, '\n')
}

// garbage is the data a MALFORMED_RESPONSE_CHUNK sends for data: the
// first half of it (a message cut short, as a corrupted chunk leaves it)
// and bytes that are no JSON.
func garbage(data []byte) []byte {
	return append(bytes.Clone(data[:len(data)/2]), "\x7f<mcpvcr chaos: garbage>"...)
}

// errorResult is the error an error-result sends to the request of live
// id: an internal error, saying it is chaos's own.
func errorResult(id string) []byte {
	if id == "" {
		id = "null"
	}
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":"mcpvcr replay --chaos: an injected error in place of the recorded result"}}`, id)
}

// judgeTook judges a client sent an event it must take and go on from
// (what names it): it carried on without sending the request again:
// pass; it sent it again (again says what that shows), ended its session
// (a DELETE) or sent nothing more where the recorded client went on:
// fail; the event not written (the client left first): not observed.
func judgeTook(inj *injection, mine []chaosAction, what, again string) (string, Verdict) {
	if !inj.delivered {
		return "the " + what + " was not seen written (the client left, or the stream ended first)", VerdictNotObserved
	}
	for _, a := range mine {
		switch {
		case a.method == http.MethodPost && inj.body != "" && a.body == inj.body && again != "":
			return "sent the request again: " + again, VerdictFail
		case a.method == http.MethodDelete && inj.more:
			return "ended its session (DELETE) after the " + what + ", where the recorded client went on", VerdictFail
		case a.method == http.MethodDelete || a.method == http.MethodPost && a.rpcMethod != "":
			return "took the " + what + " and carried on (next: " + describe(a) + ")", VerdictPass
		}
	}
	return silent(inj, "sent nothing more after the "+what)
}
