package probe

import (
	"strconv"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/replayer"
	"github.com/mcpvcr/mcpvcr/store"
)

// string-id: the first server request of a legacy session (Streamable
// HTTP, HTTP+SSE or stdio) recorded with a number id (roots/list, sampling, elicitation) is
// sent with that number as a string ("7" for 7). The client's answer must
// carry the id exactly as sent: a string stays a string. The answer is
// given back to replay with the recorded number, so the session goes on
// as recorded.

const secIDs = "docs/specification/2025-11-25/basic/index.mdx §Responses"

func init() {
	specs[StringID] = &spec{
		name:    "string-id",
		allowed: func(rev string, _ store.Transport) bool { return legacy(rev) },
		rule: func(string) (string, string, Level) {
			return "a response carries the id of the request it answers exactly: a string id stays a string", secIDs, Error
		},
		place: func(*replayer.Point, *store.Recording, *request) (*Probe, replayer.Action) {
			return nil, replayer.Action{}
		},
		follow: func(*Probe, *store.Recording, *request) (replayer.Action, bool) { return replayer.Action{}, false },
		judge:  judgeStringID,
	}
	where[StringID] = "a server request recorded with a number id in a legacy session"
}

// placeStringID places string-id at p, the recorded event about to go,
// when it is a server request with a number id: the event goes with the
// id as a string.
func (h *Hook) placeStringID(p *replayer.Point) (replayer.Action, bool) {
	f := p.Frame
	if f.Direction != store.ServerToClient || f.Kind != store.KindRequest || f.ID == "" || !f.SSE && p.Request != nil {
		return replayer.Action{}, false
	}
	if _, err := strconv.ParseInt(f.ID, 10, 64); err != nil {
		return replayer.Action{}, false
	}
	rec := p.Recording
	if rec == nil || !specs[StringID].allowed(rec.Session.Revision, rec.Session.Transport) {
		return replayer.Action{}, false
	}
	sent := strconv.Quote(f.ID)
	data, err := jsonrpc.Splice(f.Data, []byte(sent), "id")
	if err != nil {
		return replayer.Action{}, false
	}
	h.placeAtServerRequest(StringID, p, "sent the server request "+f.Method+" with id "+sent+" where the recording had "+f.ID)
	if p.Request == nil {
		return replayer.Action{Replace: data}, true // a stdio line
	}
	return replayer.Action{Replace: event(f, data)}, true
}

// placeAtServerRequest places a probe of kind k at p, the recorded
// server request p.Frame about to go, changed as what says.
func (h *Hook) placeAtServerRequest(k Kind, p *replayer.Point, what string) {
	f, s := p.Frame, p.Recording.Session
	pr := &Probe{Kind: k, Session: s.ID, Revision: s.Revision, Transport: s.Transport, What: what,
		at: len(h.reqs) - 1, live: p.Session, cursor: f.ID, req: &request{method: "SSE", msg: parseFrame(f)}}
	pr.Rule, pr.Section, pr.Level = specs[k].rule(s.Revision)
	pr.Request = "server request " + f.Method + " (id " + f.ID + ")"
	h.placed[k] = true
	h.probes = append(h.probes, pr)
	if h.Logger != nil {
		h.Logger.Info("probe: placed "+k.String(), "session", s.ID, "request", pr.Request, "what", pr.What)
	}
}

// event returns f's SSE block with data instead of its recorded data.
func event(f *store.Frame, data []byte) []byte {
	var b []byte
	if f.HasEventID {
		b = append(b, "id: "+f.EventID+"\n"...)
	}
	if f.Event != "" {
		b = append(b, "event: "+f.Event+"\n"...)
	}
	b = append(b, "data: "...)
	b = append(b, data...)
	return append(b, "\n\n"...)
}

// answerBack returns the client's answer body with the recorded number
// id, when it answers a string-id probe's request exactly as sent; nil
// otherwise.
func (h *Hook) answerBack(p *replayer.Point, m jsonrpc.Message) []byte {
	for _, pr := range h.probes {
		if b := unbatch(pr, m); b != nil && pr.live == p.Session {
			return b
		}
	}
	if !m.Kind.IsResponse() {
		return nil
	}
	for _, pr := range h.probes {
		if pr.Kind == StringID && pr.live == p.Session && string(m.ID) == strconv.Quote(pr.cursor) {
			b, err := jsonrpc.Splice(p.Body, []byte(pr.cursor), "id")
			if err == nil {
				return b
			}
		}
	}
	return nil
}

func judgeStringID(pr *Probe, after []*request) (string, Verdict) {
	sent := strconv.Quote(pr.cursor)
	var other *request
	for _, r := range after {
		switch {
		case r.msg.Kind.IsResponse() && string(r.msg.ID) == sent:
			return "answered with the id exactly as sent (" + sent + ")", VerdictPass
		case r.msg.Kind.IsResponse() && string(r.msg.ID) == pr.cursor:
			return "answered with id " + pr.cursor + ", a number, where " + sent + " was sent", VerdictFail
		case other == nil && r.sent():
			other = r
		}
	}
	if other != nil {
		return "sent no answer to it (next: " + other.describe() + ")", VerdictFail
	}
	return "sent no answer to it, and nothing more", VerdictNotObserved
}
