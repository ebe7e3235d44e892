// Package causal is the one model of a recorded session's order: which
// message answers which request, which progress notification and which
// cancellation belong to which request, which client request owns what
// the server sends, which messages belong to which task (tasks.go), and,
// for each client frame, what the recorded client had completed before
// it sent the frame and what was still in flight.
//
// Every package that pairs a session's frames reads it (the replayer's
// release order and its replay of tasks, verify's plan, the comparison in diff, and through Link
// the views: show, the HTML report, HAR), so that they cannot disagree.
// It reads a store.Recording and never changes it.
package causal

import (
	"slices"
	"time"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/internal/mcpwire"
	"github.com/mcpvcr/mcpvcr/store"
)

// None marks an absent index.
const None = -1

// Msg is one JSON-RPC message of the session: a frame's message, or one
// member of a batch frame; a frame that holds no valid message (or an
// empty batch) is one Msg of its kind. Every frame has at least one.
// Indexes name other entries of Model.Msgs.
type Msg struct {
	Frame *store.Frame
	// Member is the message's index in its batch, None if the frame is
	// not a batch.
	Member int
	M      jsonrpc.Message
	// Send is the index in Model.Sends of the client frame that carried
	// the message, None for a server message.
	Send int
	// Answers is, for a response, the request it answers; None if it
	// answers none the model knows. A response pairs with the latest
	// unanswered request of the same id sent the other way; over HTTP a
	// refusal without an id (HTTP 400 with "id": null) on a POST that
	// carried one request answers that request.
	Answers int
	// Answer is, for a request, its response; None if unanswered.
	Answer int
	// Progress is, for notifications/progress, the request whose
	// progress token it carries; None if no request carried it.
	Progress int
	// Cancels is, for notifications/cancelled, the request it names (sent
	// the other way); None if unknown. Cancelled is the reverse.
	Cancels, Cancelled int
	// Owner is, for a server request or notification, the client request
	// in flight it belongs to: the one whose progress token it carries,
	// else the subscriptions/listen request whose subscription id it
	// carries, else the newest request in flight on the same HTTP POST
	// stream, else the newest client request in flight. A listen request
	// stays open for good, so it owns only what names its subscription.
	// None if no client request was in flight.
	Owner int
	// Task is the task (an index into Model.Tasks) the message belongs
	// to, None if it belongs to none; TaskRole says what it does for it
	// (see tasks.go).
	Task     int
	TaskRole TaskRole
}

// Send is one client frame that carries messages, in seq order.
type Send struct {
	Frame *store.Frame
	// Msgs are the frame's messages (indexes into Model.Msgs).
	Msgs []int
	// Awaited are the earlier sends (indexes into Model.Sends) the
	// recorded client had completed when it sent this one: each request
	// answered or cancelled, and over HTTP, for a POST answered other than
	// with an event stream, its whole response (a 202, a JSON body, a
	// refusal) received.
	Awaited []int
	// Overlaps are the earlier sends still in flight when this one was
	// sent: the recording shows them concurrent.
	Overlaps []int
	// Seen counts the server messages (in Model.Msgs order) the recorded
	// client had received before it sent this frame.
	Seen int
}

// Responses reports whether every message of s is a response (the
// client's answers to server requests).
func (m *Model) Responses(s Send) bool {
	for _, i := range s.Msgs {
		if !m.Msgs[i].M.Kind.IsResponse() {
			return false
		}
	}
	return len(s.Msgs) > 0
}

// Model is the causal model of one session.
type Model struct {
	Msgs  []Msg
	Sends []Send
	// Tasks are the session's tasks (revision 2025-11-25), in the order
	// their CreateTaskResults came.
	Tasks []Task
	// streams maps stream ids to the recording's streams.
	streams map[int64]*store.Stream
}

// Stream returns the recorded stream a frame travelled on, nil if unknown.
func (m *Model) Stream(f *store.Frame) *store.Stream { return m.streams[f.StreamID] }

// New builds the model of rec's protocol frames (see
// store.Recording.ProtocolFrames).
func New(rec *store.Recording) *Model {
	m := Pair(rec)
	m.order()
	return m
}

// Pair builds the model of rec's protocol frames as New does, without
// each send's Awaited and Overlaps, which take time quadratic in the
// number of sends: what answers, causes and owns what, for readers that
// need only that (the replayer, the views, diff).
func Pair(rec *store.Recording) *Model {
	m := &Model{streams: map[int64]*store.Stream{}}
	for i := range rec.Streams {
		m.streams[rec.Streams[i].ID] = &rec.Streams[i]
	}
	type key struct {
		dir store.Direction
		id  string
	}
	var (
		open     = map[key]int{}     // unanswered requests by sender and id
		sent     = map[key]int{}     // every request by sender and id, for cancellations
		tokens   = map[string]int{}  // client progress token -> request
		inflight []int               // client requests in flight, oldest first
		byStream = map[int64][]int{} // client requests by the POST stream that carried them
	)
	drop := func(i int) {
		inflight = slices.DeleteFunc(inflight, func(x int) bool { return x == i })
	}
	live := func(i int) bool { return slices.Contains(inflight, i) }
	seen := 0
	pf := rec.ProtocolFrames()
	sends := 0
	for _, f := range pf {
		if f.Direction == store.ClientToServer {
			sends++
		}
	}
	// Sized at once (a batch's members may grow Msgs further): grown by
	// append, a long recording's messages were copied over and over.
	m.Msgs, m.Sends = make([]Msg, 0, len(pf)), make([]Send, 0, sends)
	for _, f := range pf {
		whole := jsonrpc.Parse(f.Data)
		msgs, batch := []jsonrpc.Message{whole}, whole.Kind == jsonrpc.KindBatch
		if batch && len(whole.Members) > 0 {
			msgs = whole.Members
		}
		send := None
		if f.Direction == store.ClientToServer {
			send = len(m.Sends)
			m.Sends = append(m.Sends, Send{Frame: f, Seen: seen})
		}
		for j, jm := range msgs {
			i := len(m.Msgs)
			x := Msg{Frame: f, Member: None, M: jm, Send: send, Answers: None, Answer: None, Progress: None, Cancels: None, Cancelled: None, Owner: None, Task: None}
			if batch {
				x.Member = j
			}
			m.Msgs = append(m.Msgs, x)
			if send != None {
				m.Sends[send].Msgs = append(m.Sends[send].Msgs, i)
			} else {
				seen++
			}
			switch jm.Kind {
			case jsonrpc.KindRequest:
				k := key{f.Direction, string(jm.ID)}
				open[k], sent[k] = i, i
				if f.Direction == store.ClientToServer {
					if jm.Method != "subscriptions/listen" {
						inflight = append(inflight, i)
					}
					byStream[f.StreamID] = append(byStream[f.StreamID], i)
					if t := mcpwire.ProgressToken(jm.Params); t != nil {
						tokens[string(t)] = i
					}
				}
			case jsonrpc.KindResult, jsonrpc.KindError:
				k := key{other(f.Direction), string(jm.ID)}
				r, ok := open[k]
				if !ok && f.Direction == store.ServerToClient && !jm.HasID() {
					r, ok = m.refused(f, byStream[f.StreamID])
				}
				if !ok {
					continue
				}
				delete(open, key{other(f.Direction), string(m.Msgs[r].M.ID)})
				m.Msgs[i].Answers = r
				if m.Msgs[r].Answer == None {
					m.Msgs[r].Answer = i
				}
				drop(r)
			case jsonrpc.KindNotification:
				switch jm.Method {
				case "notifications/progress":
					if r, ok := tokens[string(mcpwire.ProgressNotificationToken(jm.Params))]; ok && f.Direction == store.ServerToClient {
						m.Msgs[i].Progress = r
					}
				case "notifications/cancelled":
					if r, ok := sent[key{f.Direction, string(mcpwire.CancelledRequestID(jm.Params))}]; ok {
						m.Msgs[i].Cancels, m.Msgs[r].Cancelled = r, i
						if f.Direction == store.ClientToServer {
							drop(r)
						}
					}
				}
			}
			if f.Direction == store.ServerToClient && (jm.Kind == jsonrpc.KindRequest || jm.Kind == jsonrpc.KindNotification) {
				m.Msgs[i].Owner = m.owner(i, f, inflight, byStream, live)
				if sub := mcpwire.SubscriptionID(jm.Params); sub != nil && jm.Kind == jsonrpc.KindNotification {
					if r, ok := sent[key{store.ClientToServer, string(sub)}]; ok && m.Msgs[r].M.Method == "subscriptions/listen" && m.Msgs[i].Progress == None {
						m.Msgs[i].Owner = r
					}
				}
			}
		}
	}
	m.tasks()
	return m
}

// refused finds the request a response without an id answers: the one
// request of the POST it came back on, if that request is unanswered.
func (m *Model) refused(f *store.Frame, reqs []int) (int, bool) {
	st := m.streams[f.StreamID]
	if st == nil || st.Kind != store.PostStream || len(reqs) != 1 {
		return 0, false
	}
	r := reqs[0]
	return r, m.Msgs[r].Answer == None
}

// owner is the client request the server message i belongs to.
func (m *Model) owner(i int, f *store.Frame, inflight []int, byStream map[int64][]int, live func(int) bool) int {
	if x := m.Msgs[i]; x.M.Method == "notifications/progress" {
		if x.Progress != None && live(x.Progress) {
			return x.Progress
		}
		return None
	}
	if st := m.streams[f.StreamID]; st != nil && st.Kind == store.PostStream {
		reqs := byStream[f.StreamID]
		for k := len(reqs) - 1; k >= 0; k-- {
			if live(reqs[k]) {
				return reqs[k]
			}
		}
	}
	if len(inflight) == 0 {
		return None
	}
	return inflight[len(inflight)-1]
}

// order fills each send's Awaited and Overlaps.
func (m *Model) order() {
	for s := range m.Sends {
		f := m.Sends[s].Frame
		at := f.Offset
		if st := m.streams[f.StreamID]; st != nil && st.Kind == store.PostStream {
			at = min(at, st.Opened)
		}
		for e := range s {
			if m.completed(e, f.Seq, at) {
				m.Sends[s].Awaited = append(m.Sends[s].Awaited, e)
			} else {
				m.Sends[s].Overlaps = append(m.Sends[s].Overlaps, e)
			}
		}
	}
}

// completed reports whether send e was complete before the frame of seq
// seq, sent at offset at, went out.
func (m *Model) completed(e int, seq int64, at time.Duration) bool {
	s := m.Sends[e]
	for _, i := range s.Msgs {
		x := m.Msgs[i]
		if x.M.Kind != jsonrpc.KindRequest {
			continue
		}
		answered := x.Answer != None && m.Msgs[x.Answer].Frame.Seq < seq
		cancelled := x.Cancelled != None && m.Msgs[x.Cancelled].Frame.Seq < seq
		if !answered && !cancelled {
			return false
		}
	}
	st := m.streams[s.Frame.StreamID]
	if st == nil || st.Kind != store.PostStream || st.SSE() {
		return true
	}
	// A response that is not an event stream arrives whole: the POST is
	// complete when its stream closed.
	return st.Closed > 0 && st.Closed <= at
}

func other(d store.Direction) store.Direction {
	if d == store.ClientToServer {
		return store.ServerToClient
	}
	return store.ClientToServer
}
