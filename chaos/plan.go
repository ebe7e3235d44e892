package chaos

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/mcpvcr/mcpvcr/internal/causal"
	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/replayer"
	"github.com/mcpvcr/mcpvcr/store"
)

// FaultKind is a kind of fault chaos replay injects.
type FaultKind int

// The fault kinds, by their short stable names (see FaultKind.String).
const (
	FaultUnknown       FaultKind = iota
	FaultCutResumable            // cut-resumable: drop an SSE stream with event ids after event k
	FaultCut                     // cut: drop an SSE stream without event ids after event k
	FaultResume404               // resume-404: cut a resumable stream, answer its resumption with 404
	FaultResumeLate              // resume-late: cut a resumable stream, answer its resumption late
	FaultExpire                  // expire: the session expires (404) at request k
	FaultRefuseGet               // refuse-get: answer the standalone GET stream with 405
	FaultLateResult              // late-result: send a result after the client cancelled it
	FaultDelay                   // delay: wait before one event or answer
	FaultReorder                 // reorder: swap notifications, or responses to concurrent requests, on different streams
	FaultRetry                   // retry: change a stream's retry value
	FaultDropPriming             // drop-priming: leave out a stream's priming event
	FaultCloseEarly              // close-early: close a 2026-07-28 response stream before its response
	Fault503                     // 503: answer a POST once with 503 and Retry-After
	FaultResetPeer               // reset_peer: reset a POST's connection before anything is answered
	FaultEmptyResponse           // EMPTY_RESPONSE: answer a POST with an empty 200 event stream
	FaultSlicer                  // slicer: send an SSE event with CRLF line ends, in pieces written apart
	FaultTimeout                 // timeout: never answer a POST, its connection held open
	FaultStall                   // stall: a POST's SSE stream stops after event k, held open
	FaultMalformed               // MALFORMED_RESPONSE_CHUNK: garbage in the data line of one event
	FaultErrorResult             // error-result: a JSON-RPC error in place of the recorded result
	FaultLimitData               // limit_data: a POST's SSE stream dropped inside an event
	FaultRedeliver               // redeliver: a resumption that sends again events the client had
	FaultExit                    // exit: over stdio, the server exits at a request, before its answer
	FaultEarlyPing               // early-ping: a ping from the server on initialize's stream, before its response
	FaultListChanged             // list-changed: a tools list_changed on a tools/call's stream, before its response
	FaultLateRequest             // late-request: over stdio, a ping from the server right after a tools/call's response
	FaultReframe                 // reframe: an SSE event with lone CR line ends, its data on two data: lines
)

var faultNames = [...]string{"unknown", "cut-resumable", "cut", "resume-404", "resume-late", "expire", "refuse-get",
	"late-result", "delay", "reorder", "retry", "drop-priming", "close-early", "503", "reset_peer", "EMPTY_RESPONSE", "slicer",
	"timeout", "stall", "MALFORMED_RESPONSE_CHUNK", "error-result", "limit_data", "redeliver", "exit", "early-ping", "list-changed", "late-request", "reframe"}

// String returns the kind's short name, as --chaos-faults takes it.
func (k FaultKind) String() string {
	if k < 0 || int(k) >= len(faultNames) {
		return "unknown"
	}
	return faultNames[k]
}

// FaultKinds returns every kind, in order.
func FaultKinds() []FaultKind {
	ks := make([]FaultKind, 0, len(faultNames)-1)
	for k := FaultCutResumable; int(k) < len(faultNames); k++ {
		ks = append(ks, k)
	}
	return ks
}

// OptIn reports whether kind k is drawn only when Config.Kinds names it
// (mcpvcr replay --chaos-faults): the kinds newer than the first ones
// (most named after Toxiproxy's and WireMock's faults), which a seed's
// default draw leaves out so that it draws what it drew before them.
func OptIn(k FaultKind) bool {
	return k >= FaultResetPeer
}

// DefaultKinds returns the kinds drawn when Config.Kinds is nil: every
// kind but the OptIn ones.
func DefaultKinds() []FaultKind {
	return slices.DeleteFunc(FaultKinds(), OptIn)
}

// DefaultRate is how many faults chaos replay draws per session when
// Config.Rate is zero.
const DefaultRate = 3

// Config configures chaos replay: faults drawn from a seed at positions
// in each recorded session, injected, and judged by what the client does
// next.
type Config struct {
	// Seed draws the faults; the same seed, recording and client
	// behaviour give the same faults (0 is a seed like any other).
	Seed uint64
	// Kinds are the kinds to draw from; nil draws from DefaultKinds,
	// each where the session's transport and revision allow it.
	Kinds []FaultKind
	// Rate is how many faults to draw per session; 0 is
	// DefaultChaosRate.
	Rate int
}

// Fault is one fault of a plan, placed in a recorded session.
type Fault struct {
	Kind FaultKind
	// Stream is the stream's number in its session, as mcpvcr show
	// numbers it (post#8 is 8); 0 when the fault is at a request.
	Stream int
	// StreamKind is the stream's kind (post, get), for messages.
	StreamKind store.StreamKind
	// Event is the number of events (SSE events, priming included, not
	// comments) sent on Stream before the fault: a cut drops the
	// stream after that many, a delay waits before event Event+1.
	Event int
	// Seq is the recorded seq (as mcpvcr show prints it) of the event
	// at the fault: the last one sent before a cut, the delayed or
	// dropped one; 0 when none.
	Seq int64
	// Request is the number of the session's POST (from 1: the
	// initialize) the fault hits: the POST that finds the session
	// expired, or the one answered with 503. Only POSTs count: when a
	// client opens its GET stream is its own concurrency, not its
	// behaviour.
	Request int
	// Delay is how long a delay or a late resumption waits; for a
	// retry, the SSE retry value given; for a reorder, the longest the
	// held notification waits for the other one.
	Delay time.Duration
	// Other and OtherSeq are, for a reorder, the stream and recorded seq
	// of the notification sent first: the one recorded just after the
	// held one (Stream, Seq), on another stream.
	Other     int
	OtherKind store.StreamKind
	OtherSeq  int64
	// Responses marks a reorder of the responses to two concurrent
	// requests, rather than of two notifications.
	Responses bool
}

// Where says where f is, as mcpvcr show numbers streams and frames.
func (f Fault) Where() string {
	switch {
	case f.Request > 0:
		return fmt.Sprintf("POST %d", f.Request)
	case (f.Kind == FaultLateResult || f.Kind == FaultExit) && f.Stream == 0:
		return fmt.Sprintf("the request of seq %d", f.Seq)
	case f.Kind == FaultLateRequest:
		return fmt.Sprintf("the response of seq %d", f.Seq)
	case f.Kind == FaultLateResult:
		return fmt.Sprintf("%s#%d (its request, seq %d)", f.StreamKind, f.Stream, f.Seq)
	case f.Kind == FaultDelay && f.Stream == 0:
		return fmt.Sprintf("seq %d", f.Seq)
	case f.Kind == FaultCloseEarly:
		return fmt.Sprintf("%s#%d before its response (seq %d)", f.StreamKind, f.Stream, f.Seq)
	case f.Kind == FaultRefuseGet:
		return fmt.Sprintf("%s#%d", f.StreamKind, f.Stream)
	case f.Kind == FaultDelay && f.Seq == 0:
		return fmt.Sprintf("%s#%d (its JSON answer)", f.StreamKind, f.Stream)
	case f.Kind == FaultDelay || f.Kind == FaultDropPriming || f.Kind == FaultReorder || f.Kind == FaultSlicer || f.Kind == FaultReframe ||
		f.Kind == FaultStall || f.Kind == FaultMalformed || f.Kind == FaultErrorResult || f.Kind == FaultLimitData:
		return fmt.Sprintf("%s#%d event %d (seq %d)", f.StreamKind, f.Stream, f.Event+1, f.Seq)
	case f.Event == 0:
		return fmt.Sprintf("%s#%d before its first event", f.StreamKind, f.Stream)
	}
	return fmt.Sprintf("%s#%d after event %d (seq %d)", f.StreamKind, f.Stream, f.Event, f.Seq)
}

// String describes f for people.
func (f Fault) String() string {
	switch f.Kind {
	case FaultCutResumable, FaultCut:
		return fmt.Sprintf("%s: %s#%d dropped after %d event(s)%s", f.Kind, f.StreamKind, f.Stream, f.Event, seqNote(f.Seq))
	case FaultResume404:
		return fmt.Sprintf("%s: %s#%d dropped after %d event(s)%s, its resumption answered 404", f.Kind, f.StreamKind, f.Stream, f.Event, seqNote(f.Seq))
	case FaultResumeLate:
		return fmt.Sprintf("%s: %s#%d dropped after %d event(s)%s, its resumption answered after %s", f.Kind, f.StreamKind, f.Stream, f.Event, seqNote(f.Seq), f.Delay)
	case FaultExpire:
		return fmt.Sprintf("%s: the session expires (404) at its POST %d", f.Kind, f.Request)
	case FaultRefuseGet:
		return fmt.Sprintf("%s: the standalone GET stream (%s#%d) answered 405", f.Kind, f.StreamKind, f.Stream)
	case FaultDelay:
		return fmt.Sprintf("%s: %s before %s", f.Kind, f.Delay, f.Where())
	case FaultDropPriming:
		return fmt.Sprintf("%s: the priming event of %s#%d%s left out", f.Kind, f.StreamKind, f.Stream, seqNote(f.Seq))
	case Fault503:
		return fmt.Sprintf("%s: POST %d answered 503 with Retry-After: 1", f.Kind, f.Request)
	case FaultResetPeer:
		return fmt.Sprintf("%s: POST %d's connection reset (TCP RST) before anything was answered", f.Kind, f.Request)
	case FaultEmptyResponse:
		return fmt.Sprintf("%s: POST %d answered 200 with an empty event stream, no event and no response", f.Kind, f.Request)
	case FaultSlicer:
		return fmt.Sprintf("%s: %s sent with CRLF line ends, in pieces written %s apart (inside a line, between CR and LF, inside the data and a UTF-8 character of it)", f.Kind, f.Where(), sliceGap)
	case FaultReframe:
		return fmt.Sprintf("%s: %s sent with lone CR line ends (no LF), its data on two data: lines (split after its first { or [)", f.Kind, f.Where())
	case FaultLateResult:
		return fmt.Sprintf("%s: once the client cancels it, a result sent all the same to %s", f.Kind, f.Where())
	case FaultTimeout:
		return fmt.Sprintf("%s: POST %d never answered, its connection held open", f.Kind, f.Request)
	case FaultStall:
		return fmt.Sprintf("%s: %s#%d stalls before event %d%s: nothing more written, the stream held open", f.Kind, f.StreamKind, f.Stream, f.Event+1, seqNote(f.Seq))
	case FaultMalformed:
		return fmt.Sprintf("%s: %s sent with garbage (not JSON) in its data line", f.Kind, f.Where())
	case FaultErrorResult:
		return fmt.Sprintf("%s: %s, the response, sent as a JSON-RPC error (-32603) in place of the recorded result", f.Kind, f.Where())
	case FaultLimitData:
		return fmt.Sprintf("%s: %s#%d dropped inside event %d%s, half of it written", f.Kind, f.StreamKind, f.Stream, f.Event+1, seqNote(f.Seq))
	case FaultLateRequest:
		return fmt.Sprintf("%s: a ping from the server (chaos's own) right after the response of seq %d, a tools/call's, as a server request that comes after the call it belongs to ended", f.Kind, f.Seq)
	case FaultListChanged:
		return fmt.Sprintf("%s: notifications/tools/list_changed (chaos's own) on %s#%d, a tools/call's stream, before its response (seq %d)", f.Kind, f.StreamKind, f.Stream, f.Seq)
	case FaultEarlyPing:
		return fmt.Sprintf("%s: a ping from the server (chaos's own) on %s#%d, initialize's stream, before its response (seq %d)", f.Kind, f.StreamKind, f.Stream, f.Seq)
	case FaultExit:
		return fmt.Sprintf("%s: the server exits at %s, before answering it: its stdout ends, nothing more is read", f.Kind, f.Where())
	case FaultRedeliver:
		return fmt.Sprintf("%s: %s#%d dropped after %d event(s)%s, its resumption sending those events again (a server request among them) before the rest", f.Kind, f.StreamKind, f.Stream, f.Event, seqNote(f.Seq))
	case FaultRetry:
		return fmt.Sprintf("%s: %s#%d's priming event given retry: %d (ms), the stream dropped after %d event(s)%s", f.Kind, f.StreamKind, f.Stream, f.Delay.Milliseconds(), f.Event, seqNote(f.Seq))
	case FaultCloseEarly:
		return fmt.Sprintf("%s: %s#%d closed after %d event(s), before its response", f.Kind, f.StreamKind, f.Stream, f.Event)
	case FaultReorder:
		if f.Stream == 0 { // stdio
			return fmt.Sprintf("%s: the response at seq %d held until the one recorded after it (seq %d) was written, and written right after it", f.Kind, f.Seq, f.OtherSeq)
		}
		return fmt.Sprintf("%s: the %s of %s#%d (seq %d) held until the one recorded after it, on %s#%d (seq %d), was sent, for at most %s", f.Kind, f.message(), f.StreamKind, f.Stream, f.Seq, f.OtherKind, f.Other, f.OtherSeq, f.Delay)
	}
	return fmt.Sprintf("%s at %s", f.Kind, f.Where())
}

// message names what a reorder holds: a notification, or the response to
// one of two concurrent requests.
func (f Fault) message() string {
	if f.Responses {
		return "response"
	}
	return "notification"
}

func seqNote(seq int64) string {
	if seq == 0 {
		return ""
	}
	return fmt.Sprintf(" (seq %d)", seq)
}

// Allowed reports whether the protocol allows fault kind k in a session
// over transport t at revision rev: a stream to cut or delay, a session
// to expire, a GET stream to refuse, priming events (2025-11-25 on), a
// response stream that may close early (2026-07-28).
func Allowed(k FaultKind, t store.Transport, rev string) bool {
	modern := rev >= "2026-07-28"
	switch k {
	case FaultDelay, FaultLateResult:
		return true
	case FaultExit, FaultLateRequest:
		return t == store.Stdio // a server process; one stream, which the client reads to its end
	case FaultReorder:
		return true // notifications on different streams; over stdio, responses to concurrent requests
	case FaultCut, Fault503:
		return t == store.StreamableHTTP || t == store.LegacySSE
	case FaultEarlyPing:
		return t == store.StreamableHTTP && !modern // initialize's stream (2026-07-28 has no initialize)
	case FaultCutResumable, FaultResume404, FaultResumeLate, FaultRetry, FaultRedeliver:
		return t == store.StreamableHTTP && !modern // no resumption in 2026-07-28
	case FaultDropPriming:
		return t == store.StreamableHTTP && rev >= "2025-11-25" && !modern
	case FaultExpire, FaultRefuseGet:
		return t == store.StreamableHTTP && !modern // sessions and GET streams are gone in 2026-07-28
	case FaultCloseEarly:
		return t == store.StreamableHTTP && modern
	case FaultResetPeer, FaultEmptyResponse, FaultTimeout:
		return t == store.StreamableHTTP // a POST answered on its own connection
	case FaultStall, FaultMalformed, FaultErrorResult, FaultListChanged:
		return t == store.StreamableHTTP || t == store.LegacySSE // a stream of events
	case FaultLimitData:
		return t == store.StreamableHTTP || t == store.LegacySSE // bytes on a connection
	case FaultSlicer, FaultReframe:
		return t == store.StreamableHTTP || t == store.LegacySSE // SSE framing
	}
	return false
}

// Injected reports whether this replay injects kind k over transport t:
// the kinds Allowed admits that are built. Streamable HTTP sessions of
// the initialize era get every kind but close-early, exit and
// late-request (the OptIn kinds there only when named);
// 2026-07-28 exchanges get cut (without event ids: the request is lost),
// close-early, 503 and delay; stdio gets delay, late-result, reorder (of
// responses), exit and late-request (it has no streams to cut: a cut
// there is the server exiting); the 2024-11-05
// HTTP+SSE transport gets delay, 503 and cut (of its one SSE stream: the
// session ends; it has one stream, so nothing to reorder).
func Injected(k FaultKind, t store.Transport, rev string) bool {
	if !Allowed(k, t, rev) {
		return false
	}
	switch {
	case t == store.StreamableHTTP && rev >= "2026-07-28":
		return k == FaultCut || k == FaultCloseEarly || k == Fault503 || k == FaultDelay
	case t == store.StreamableHTTP:
		return k != FaultCloseEarly
	case t == store.Stdio:
		return k == FaultDelay || k == FaultLateResult || k == FaultExit || k == FaultReorder || k == FaultLateRequest
	case t == store.LegacySSE:
		return k == FaultDelay || k == Fault503 || k == FaultCut
	}
	return false
}

// Plan draws the faults of c for one recorded session: Rate faults (or
// fewer, where the session has too few places), each of a kind in Kinds
// that the session's transport and revision allow and this replay
// injects, at a place drawn from the session's streams and requests. It
// uses only c's Seed and the recording, never the clock: the same seed
// and recording give the same plan. No two faults share a stream or a
// request.
func (c Config) Plan(rec *store.Recording) []Fault {
	s := rec.Session
	rng := rand.New(rand.NewPCG(c.Seed, uint64(s.ID)))
	kinds := c.Kinds
	if kinds == nil {
		kinds = DefaultKinds()
	}
	sites := map[FaultKind][]Fault{}
	var order []FaultKind
	for _, k := range kinds {
		if !Injected(k, s.Transport, s.Revision) {
			continue
		}
		if fs := faultSites(k, rec); len(fs) > 0 {
			sites[k] = fs
			order = append(order, k)
		}
	}
	rate := c.Rate
	if rate <= 0 {
		rate = DefaultRate
	}
	var plan []Fault
	usedStream, usedRequest := map[int]bool{}, map[int]bool{}
	for len(plan) < rate && len(order) > 0 {
		i := rng.IntN(len(order))
		k := order[i]
		fs := sites[k]
		j := rng.IntN(len(fs))
		f := fs[j]
		sites[k] = slices.Delete(fs, j, j+1)
		if len(sites[k]) == 0 {
			order = slices.Delete(order, i, i+1)
		}
		if (f.Stream > 0 && usedStream[f.Stream]) || (f.Request > 0 && usedRequest[f.Request]) || (f.Other > 0 && usedStream[f.Other]) {
			continue
		}
		if (k == FaultExpire || k == FaultExit) && slices.ContainsFunc(plan, func(g Fault) bool { return g.Kind == k }) {
			continue // one expiry, or one exit, per session
		}
		switch k {
		case FaultDelay:
			f.Delay = time.Duration(5+rng.IntN(96)) * time.Millisecond
		case FaultResumeLate:
			f.Delay = time.Duration(50+rng.IntN(251)) * time.Millisecond
		case FaultRetry:
			f.Delay = time.Duration(100+rng.IntN(301)) * time.Millisecond
		}
		usedStream[f.Stream], usedRequest[f.Request] = f.Stream > 0, f.Request > 0
		if f.Other > 0 {
			usedStream[f.Other] = true // a fault there could keep the other notification from coming
		}
		plan = append(plan, f)
	}
	// After an expiry (or the server's exit) nothing of the session is
	// served: no fault later.
	for _, f := range plan {
		if f.Kind == FaultExpire || f.Kind == FaultExit {
			plan = slices.DeleteFunc(plan, func(g Fault) bool { return g.Kind != f.Kind && position(g) >= position(f) })
		}
	}
	slices.SortStableFunc(plan, func(a, b Fault) int { return position(a) - position(b) })
	return plan
}

// planLocked returns the plan of rec's session, drawn once.
func (cs *Hook) planLocked(rec *store.Recording) []Fault {
	p, ok := cs.plans[rec.Session.ID]
	if !ok {
		p = cs.Config.Plan(rec)
		cs.plans[rec.Session.ID] = p
	}
	return p
}

// pinLocked returns the recorded session whose plan live session ls
// draws its faults from: the one it followed when a fault was first
// looked for (rec), after its opening request was matched, whichever of
// the candidates it goes on to follow. Which candidate replay follows
// later may turn on timing (how long a client waits before candidates
// that disagree are settled); the faults must not: over HTTP a fault
// names its place by stream and event, which sessions that part later
// share. Over stdio it names its recorded frame by seq, which means
// nothing in another session: there the plan is the first candidate's
// while the client's lines have not told them apart (they agree on what
// was sent so far), and is pinned once one is left, so that the faults
// of a cassette's second session are drawn from that session. The
// 2026-07-28 exchanges keep each its own.
func (cs *Hook) pinLocked(ls *replayer.Session, rec *store.Recording) *store.Recording {
	if ls == cs.pool || rec == nil {
		return rec
	}
	if pinned := cs.pinned[ls]; pinned != nil {
		return pinned
	}
	if rec.Session.Transport != store.Stdio || ls.Candidates() <= 1 {
		cs.pinned[ls] = rec
		if sc := cs.stdio[ls]; sc != nil {
			sc.pinnedAt = sc.seen
		}
	}
	return rec
}

// position is where f sits in the session: the number of its request, or
// of its stream (recorded streams and requests nearly coincide).
func position(f Fault) int {
	switch {
	case f.Request > 0:
		return f.Request
	case f.Stream > 0:
		return f.Stream
	}
	return int(f.Seq) // stdio: no streams, only frames
}

// sseEvents returns the server events of stream id that count for a cut
// (comments aside), in order.
func sseEvents(rec *store.Recording, id int64) []*store.Frame {
	var fs []*store.Frame
	for i := range rec.Frames {
		f := &rec.Frames[i]
		if f.StreamID == id && f.Direction == store.ServerToClient && f.SSE && !f.Comment {
			fs = append(fs, f)
		}
	}
	return fs
}

// faultSites returns every place in rec where a fault of kind k can go.
func faultSites(k FaultKind, rec *store.Recording) []Fault {
	if rec.Session.Transport == store.Stdio {
		return stdioSites(k, rec)
	}
	if k == FaultReorder {
		return reorderSites(rec)
	}
	var out []Fault
	requests := 0
	cancelled := cancelledRequests(rec, true)
	for i := range rec.Streams {
		st := &rec.Streams[i]
		n := i + 1
		if st.Kind == store.HTTPStream {
			continue
		}
		if st.Kind == store.PostStream {
			requests++
		}
		base := Fault{Kind: k, Stream: n, StreamKind: st.Kind}
		evs := sseEvents(rec, st.ID)
		if at := sitesOf[k]; at != nil {
			out = append(out, at(rec, st, base, evs, requests, cancelled)...)
		}
	}
	return out
}

// sitesOf holds, by kind, the places on one stream st (number n, base
// naming it) of rec where a fault of that kind can go; requests is the
// number of POSTs up to st, cancelled the requests the recorded client
// cancelled (see cancelledRequests).
var sitesOf = map[FaultKind]func(rec *store.Recording, st *store.Stream, base Fault, evs []*store.Frame, requests int, cancelled map[int64]*store.Frame) []Fault{
	FaultCutResumable:  sitesResumable,
	FaultResume404:     sitesResumable,
	FaultResumeLate:    sitesResumable,
	FaultRetry:         sitesRetry,
	FaultLateResult:    sitesLateResult,
	FaultCloseEarly:    sitesCloseEarly,
	FaultCut:           sitesCut,
	FaultDelay:         sitesDelay,
	FaultDropPriming:   sitesDropPriming,
	FaultRefuseGet:     sitesRefuseGet,
	FaultExpire:        sitesExpire,
	Fault503:           sites503,
	FaultResetPeer:     sitesLost,
	FaultEmptyResponse: sitesLost,
	FaultSlicer:        sitesSlicer,
	FaultReframe:       sitesSlicer,
	FaultTimeout:       sitesLost,
	FaultStall:         sitesStall,
	FaultMalformed:     sitesMalformed,
	FaultErrorResult:   sitesErrorResult,
	FaultLimitData:     sitesLimitData,
	FaultRedeliver:     sitesRedeliver,
	FaultEarlyPing:     sitesEarlyPing,
	FaultListChanged:   sitesListChanged,
}

// resumedInRecording reports whether the recording itself resumes stream
// id: its own resumption is replayed as recorded, not chaos's.
func resumedInRecording(rec *store.Recording, id int64) bool {
	return slices.ContainsFunc(rec.Streams, func(st store.Stream) bool { return st.ResumesID == id })
}

// framesOfStream returns the server frames of stream id.
func framesOfStream(rec *store.Recording, id int64) []*store.Frame {
	var fs []*store.Frame
	for i := range rec.Frames {
		if f := &rec.Frames[i]; f.StreamID == id && f.Direction == store.ServerToClient {
			fs = append(fs, f)
		}
	}
	return fs
}

// cancelledRequests returns, by the stream that carries it, each client
// request of rec that the recorded client cancelled
// (notifications/cancelled) and that the recording never answers, or
// (with late) answers only after the cancellation. What answers and
// cancels what is the causal model's pairing (internal/causal).
func cancelledRequests(rec *store.Recording, late bool) map[int64]*store.Frame {
	m := causal.Pair(rec)
	out := map[int64]*store.Frame{}
	for _, x := range m.Msgs {
		if x.Send == causal.None || x.M.Kind != jsonrpc.KindRequest || x.Cancelled == causal.None {
			continue
		}
		if x.Answer == causal.None || late && m.Msgs[x.Answer].Frame.Seq > m.Msgs[x.Cancelled].Frame.Seq {
			out[x.Frame.StreamID] = x.Frame
		}
	}
	return out
}

// stdioSites returns the places in a stdio session where a fault of kind
// k can go: a delay before a server frame the client waited for, a late result for a request
// the recorded client cancelled and the recording never answers.
func stdioSites(k FaultKind, rec *store.Recording) []Fault {
	var out []Fault
	switch k {
	case FaultDelay:
		// Only before a line the recorded client waited for: one that
		// an awaited response or a request of the client's came after
		// (stdio is one stream: a delay holds back all that follows).
		// A client may leave before the answer to its cancelled request,
		// or what came after its last step, as the recorded one did.
		awaited := awaitedResponses(rec)
		var last int64 // the seq of the last awaited response or client request
		for i := range rec.Frames {
			if f := &rec.Frames[i]; awaited[f.Seq] || f.Direction == store.ClientToServer && f.Kind == store.KindRequest {
				last = f.Seq
			}
		}
		for i := range rec.Frames {
			if f := &rec.Frames[i]; f.Direction == store.ServerToClient && !f.Malformed && f.Seq <= last {
				out = append(out, Fault{Kind: k, Seq: f.Seq})
			}
		}
	case FaultLateResult:
		for _, req := range cancelledRequests(rec, true) {
			out = append(out, Fault{Kind: k, Seq: req.Seq})
		}
		slices.SortFunc(out, func(a, b Fault) int { return int(a.Seq - b.Seq) })
	case FaultExit:
		out = exitSites(rec)
	case FaultReorder:
		out = stdioReorderSites(rec)
	case FaultLateRequest:
		out = lateRequestSites(rec)
	}
	return out
}

// isProtocol reports whether f is a message of the session rather than
// of the transport (a comment, a priming event, an endpoint event).
func isProtocol(f *store.Frame) bool {
	if f.Comment {
		return false
	}
	return !(f.SSE && (f.Kind == store.KindEmpty || f.Event == "endpoint"))
}
