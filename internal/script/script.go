// Package script reads a recorded session as the script a replay
// follows: its protocol frames (IsProtocol), each linked, by the
// session's causal model (internal/causal), to what it waits for (the
// frame before it in its causal group, and another client frame), with
// the match keys of the client frames under a set of matching rules
// (internal/match), what answers or cancels which request, and the
// session's tasks. A Script is built once per recording and set of rules
// and shared, read only, by every replay of it, whatever the transport:
// package replayer's engines hold what each live client changes.
//
// The package also holds what replay indexes a recording by (index.go:
// the hashes its candidate tree is built from, the rows of its exchange
// index) and the facts of a recording's streams replay reads (facts.go,
// and Refused, Chain, Ordinal: refused, resumed, numbered as mcpvcr show
// numbers them).
package script

import (
	"encoding/json"
	"hash/fnv"
	"slices"
	"time"

	"github.com/mcpvcr/mcpvcr/internal/causal"
	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/internal/match"
	"github.com/mcpvcr/mcpvcr/internal/replayindex"
	"github.com/mcpvcr/mcpvcr/store"
)

// Script is one recorded session under one set of matching rules, as
// replay follows it.
type Script struct {
	Rec   *store.Recording
	Match match.Match
	// Frames are the session's protocol frames in recorded order, Index
	// each one's place in Frames.
	Frames []Frame
	Index  map[*store.Frame]int
	// Dependents lists, for each frame, the server frames that wait for
	// it (their Prev or Extra).
	Dependents [][]int
	// ServerFrames counts the server frames of Frames.
	ServerFrames int
	// AnswerOf maps a recorded client request to the index of the
	// server's answer to it, and CancelOf to the index of the client's
	// notifications/cancelled for it, as the causal model pairs them.
	AnswerOf, CancelOf map[Ref]int
	// Tasks are the session's server tasks by TaskKey, nil when none.
	Tasks map[string]*Task
}

// Frame is one recorded protocol frame with what replay derived from
// it: its causal group and the frames it waits for.
type Frame struct {
	F   *store.Frame
	Msg jsonrpc.Message
	C2S bool
	// Prev is the previous frame of the same causal group, Extra another
	// client frame this one waits for; -1 when none.
	Prev, Extra int
	// Key is the canonical match key of a client frame; for an answer to
	// a server request it names the id only, and Body holds the key of
	// its result or error under the rules (match.Match.AnswerKey, with the
	// method of the server request it answers).
	Key, Body string
	// MemberKeys are the sorted match keys of a client batch's members.
	MemberKeys []string
	// Asks is, for a response, the index of the request it answers
	// (for a batch, its first member's), and for a server's
	// notifications/cancelled, that of the server request it cancels:
	// the causal model's pairing; -1 otherwise.
	Asks int
	// Task is the recorded task the frame belongs to, nil if none, and
	// Role what the frame does for it (the causal model's).
	Task *Task
	Role causal.TaskRole
}

// Ref names one recorded client request: the index of its frame and
// its id (a batch frame carries several).
type Ref struct {
	Frame int
	ID    string
}

// Build reads rec as a script under rules mt.
func Build(rec *store.Recording, mt match.Match) *Script {
	s := &Script{Rec: rec, Match: mt, AnswerOf: map[Ref]int{}, CancelOf: map[Ref]int{}}
	protocol := map[int64]bool{}
	for _, st := range rec.Streams {
		if st.Kind != store.StderrStream && st.Kind != store.HTTPStream {
			protocol[st.ID] = true
		}
	}
	replayed := func(f *store.Frame) bool { return protocol[f.StreamID] && IsProtocol(f) }
	n := 0
	for i := range rec.Frames {
		if replayed(&rec.Frames[i]) {
			n++
		}
	}
	// Sized at once: a long recording's frames grown by append were copied
	// over and over, most of the time a first live session took.
	s.Frames, s.Index = make([]Frame, 0, n), make(map[*store.Frame]int, n)
	for i := range rec.Frames {
		f := &rec.Frames[i]
		if !replayed(f) {
			continue
		}
		s.Frames = append(s.Frames, Frame{F: f, Msg: jsonrpc.Parse(f.Data), C2S: f.Direction == store.ClientToServer, Prev: -1, Extra: -1, Asks: -1})
	}
	for i := range s.Frames {
		s.Index[s.Frames[i].F] = i
	}
	m := causal.Pair(rec)
	s.link(m)
	s.linkTasks(m)
	s.Dependents = make([][]int, len(s.Frames))
	for i, fr := range s.Frames {
		if fr.C2S {
			continue
		}
		s.ServerFrames++
		for _, d := range []int{fr.Prev, fr.Extra} {
			if d >= 0 {
				s.Dependents[d] = append(s.Dependents[d], i)
			}
		}
	}
	return s
}

// link assigns every frame to a causal group, reading the session's
// causal model m (internal/causal) for what answers, cancels, reports
// progress on or belongs to what: a client request, what the server sent
// while handling it (what the model says the request owns), the client's
// answers to that, and the response. A server frame waits for the frame
// before it in its group. Server frames that belong to no request wait
// for the client frame recorded just before them. link builds the match
// keys of client frames too.
func (s *Script) link(m *causal.Model) {
	at := s.Index                                       // frame -> its index in s.Frames
	msgsOf := make(map[*store.Frame][]int, len(m.Msgs)) // frame -> its messages in m
	for i := range m.Msgs {
		msgsOf[m.Msgs[i].Frame] = append(msgsOf[m.Msgs[i].Frame], i)
	}
	frameOf := func(msg int) (int, bool) { // message msg of m -> its frame's index
		if msg == causal.None {
			return 0, false
		}
		j, ok := at[m.Msgs[msg].Frame]
		return j, ok
	}
	askMethod := map[int]string{} // a client's answer -> the method of the server request it answers
	for _, x := range m.Msgs {
		i, ok := at[x.Frame]
		if !ok {
			continue
		}
		switch {
		case x.M.Kind.IsResponse():
			if j, ok := frameOf(x.Answers); ok && s.Frames[i].Asks < 0 {
				s.Frames[i].Asks, askMethod[i] = j, m.Msgs[x.Answers].M.Method
			}
		case x.Send == causal.None:
			if j, ok := frameOf(x.Cancels); ok {
				s.Frames[i].Asks = j // a server's cancellation of its own request
			}
		case x.M.Kind == jsonrpc.KindRequest:
			ref := Ref{i, string(x.M.ID)}
			if j, ok := frameOf(x.Answer); ok {
				s.AnswerOf[ref] = j
			}
			if j, ok := frameOf(x.Cancelled); ok {
				s.CancelOf[ref] = j
			}
		}
	}

	group := make([]int, len(s.Frames)) // frame index -> its group, 0 for none yet
	groupOf := func(msg int) (int, bool) {
		j, ok := frameOf(msg)
		return group[j], ok && group[j] != 0
	}
	last := map[int]int{} // group -> index of its latest frame
	lastC2S, groups := -1, 0
	lastC2SOn := map[int64]int{} // stream id -> its latest client frame
	for i := range s.Frames {
		fr := &s.Frames[i]
		g, ok := 0, false
		for _, x := range msgsOf[fr.F] {
			if ok {
				break
			}
			jm := m.Msgs[x]
			switch {
			case jm.M.Kind.IsResponse():
				// A client's answer joins the group of the server request it
				// answers (what the server sends next waits for it); the
				// server's, the group of the client request.
				g, ok = groupOf(jm.Answers)
			case jm.M.Method == "notifications/cancelled" && jm.Cancels != causal.None:
				g, ok = groupOf(jm.Cancels)
			case fr.C2S:
			case jm.M.Method == "notifications/progress" && jm.Progress != causal.None:
				g, ok = groupOf(jm.Progress)
			default:
				g, ok = groupOf(jm.Owner)
				if ok && m.Msgs[jm.Owner].M.Method == "subscriptions/listen" {
					// A listen stream's message: after its listen
					// request, and after what the client did before it.
					fr.Extra = lastC2S
				}
			}
		}
		if fr.C2S {
			lastC2SOn[fr.F.StreamID] = i
			if !ok {
				groups++
				g = groups
			}
			fr.Key, fr.MemberKeys = s.Match.Key(fr.Msg, nil)
			if fr.Msg.Kind.IsResponse() {
				fr.Body = s.Match.AnswerKey(askMethod[i], fr.Msg)
			}
			lastC2S = i
		}
		if !fr.C2S && !ok {
			groups++
			g = groups
			fr.Extra = lastC2S
			if c, found := lastC2SOn[fr.F.StreamID]; found && (fr.Msg.Kind == jsonrpc.KindInvalid || fr.Msg.Kind == jsonrpc.KindEmpty) {
				// A body that is no JSON-RPC message (an HTTP+SSE
				// POST's "Accepted") answers its own request, not what
				// the client sent since: the client may wait for it
				// before it sends more.
				fr.Extra = c
			}
		}
		group[i] = g
		if p, found := last[g]; found {
			fr.Prev = p
		}
		last[g] = i
	}
}

// Task is one task of the recording, as the causal model found it
// (internal/causal: which messages create, poll, answer or report on
// which task is its question, not replay's). Frame indexes are the
// script's.
type Task struct {
	ID     string // the taskId, as its recorded JSON value
	Server bool   // the recorded server runs it (else the client does)
	// Create is the index of the request that created it, Created that
	// of its CreateTaskResult.
	Create, Created int
	// Polls are the recorded client's tasks/get for a server's task and
	// the server's answers to them; Answers those answers that are
	// results, Status its notifications/tasks/status (in order).
	Polls, Answers, Status []int
	// CreatedAt is the task's recorded createdAt, from its
	// CreateTaskResult; zero when it has none that parses.
	CreatedAt time.Time
}

// linkTasks reads the tasks of m, the causal model of s's frames: each
// frame of a task learns its task and role, and the recording's server
// tasks are indexed by id for live polls (Tasks).
func (s *Script) linkTasks(m *causal.Model) {
	tasks := make([]*Task, len(m.Tasks))
	for n, t := range m.Tasks {
		create, ok1 := s.Index[m.Msgs[t.Create].Frame]
		created, ok2 := s.Index[m.Msgs[t.Created].Frame]
		if !ok1 || !ok2 {
			continue
		}
		rt := &Task{ID: t.ID, Server: t.Runner == store.ServerToClient, Create: create, Created: created}
		if raw, ok := jsonrpc.Lookup(m.Msgs[t.Created].M.Raw, "result", "task", "createdAt"); ok {
			rt.CreatedAt, _ = parseTaskTime(raw)
		}
		tasks[n] = rt
		if rt.Server {
			if s.Tasks == nil {
				s.Tasks = map[string]*Task{}
			}
			s.Tasks[TaskKey([]byte(t.ID))] = rt
		}
	}
	for _, x := range m.Msgs {
		i, ok := s.Index[x.Frame]
		if !ok || x.Task == causal.None || tasks[x.Task] == nil || s.Frames[i].Task != nil {
			continue
		}
		t, fr := tasks[x.Task], &s.Frames[i]
		fr.Task, fr.Role = t, x.TaskRole
		switch {
		case t.Server && x.TaskRole == causal.TaskPoll:
			t.Polls = append(t.Polls, i)
			if x.M.Kind == jsonrpc.KindResult {
				t.Answers = append(t.Answers, i)
			}
		case t.Server && x.TaskRole == causal.TaskStatus:
			t.Status = append(t.Status, i)
		case !t.Server && fr.ClientPoll() && fr.Extra < 0:
			// A server request about a task the client runs waits for
			// the client's answer that created the task, when nothing
			// else makes it wait for that answer: it carries the live
			// client's task id, which replay learns from that answer.
			// Its causal group may not hold the answer (the recorded
			// client answered another server request, a roots/list on
			// the standalone GET stream, after the task's creation, and
			// the poll followed that); a live client that answers those
			// in the other order got the poll with the recorded id, a
			// task it does not know.
			fr.Extra = t.Created
		}
	}
}

// TaskKey is a taskId as live and recorded ones compare: the string a
// JSON string holds, else the JSON text.
func TaskKey(raw []byte) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// ClientPoll reports whether fr is a server's request about a task the
// client runs: tasks/get, tasks/result or tasks/cancel.
func (fr *Frame) ClientPoll() bool {
	switch fr.Role {
	case causal.TaskPoll, causal.TaskResult, causal.TaskCancel:
		return !fr.C2S && fr.Task != nil && !fr.Task.Server && fr.Msg.Kind == jsonrpc.KindRequest
	}
	return false
}

// taskTimeLayout is how task times are written: RFC 3339 in UTC with
// milliseconds, as the TypeScript SDK writes them.
const taskTimeLayout = "2006-01-02T15:04:05.000Z07:00"

// parseTaskTime parses a JSON string holding an RFC 3339 time.
func parseTaskTime(raw []byte) (time.Time, bool) {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	return t, err == nil
}

// ShiftTimes returns data, the payload of a frame showing a task recorded
// as created at createdAt, with the task's createdAt and lastUpdatedAt
// moved to a task created at born, each as long after born as it was
// after createdAt; and whether it changed anything.
func ShiftTimes(data []byte, createdAt, born time.Time) ([]byte, bool) {
	changed := false
	for _, path := range [][]string{
		{"result", "task", "createdAt"}, {"result", "task", "lastUpdatedAt"},
		{"result", "createdAt"}, {"result", "lastUpdatedAt"},
		{"params", "createdAt"}, {"params", "lastUpdatedAt"},
	} {
		a, z, err := jsonrpc.Find(data, path...)
		if err != nil {
			continue
		}
		rec, ok := parseTaskTime(data[a:z])
		if !ok {
			continue
		}
		v, _ := json.Marshal(born.Add(rec.Sub(createdAt)).UTC().Format(taskTimeLayout))
		if out, err := jsonrpc.Splice(data, v, path...); err == nil {
			data, changed = out, true
		}
	}
	return data, changed
}

// Hashes returns the index hash of each of s's frames, as replay matches
// them: a client frame's by its match keys (marked refused when the
// server refused its stream at the HTTP level), a server frame's by its
// bytes.
func (s *Script) Hashes() []uint64 {
	hs := make([]uint64, len(s.Frames))
	for i := range s.Frames {
		hs[i] = s.Frames[i].hash()
		if RefusedFrame(s.Rec, s.Frames[i].F) {
			hs[i] |= replayindex.RefusedBit
		}
	}
	return hs
}

// hash is the index hash of fr.
func (fr *Frame) hash() uint64 {
	if fr.C2S {
		return ClientHash(fr.Key, fr.Body, fr.MemberKeys)
	}
	h := fnv.New64a()
	h.Write(fr.F.Data)
	return h.Sum64() &^ replayindex.ClientBit
}

// ClientHash is the index hash of a client frame with match key key,
// answer body body and batch members' keys members.
func ClientHash(key, body string, members []string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(key))
	h.Write([]byte{0})
	h.Write([]byte(body))
	for _, m := range members {
		h.Write([]byte{0})
		h.Write([]byte(m))
	}
	return h.Sum64()&^replayindex.RefusedBit | replayindex.ClientBit
}

// IsProtocol reports whether replay matches or releases f: everything
// but the transport's own events: comments, events without data
// (priming, a close with retry) and the HTTP+SSE endpoint event.
func IsProtocol(f *store.Frame) bool {
	if f.Comment {
		return false
	}
	return !(f.SSE && (f.Kind == store.KindEmpty || f.Event == "endpoint"))
}

// refusedStatus lists the statuses with which a server refuses a request
// before, or instead of, answering it.
var refusedStatus = []int{400, 401, 403, 404, 405, 406, 415}

// Refused reports whether the server refused stream st at the HTTP level.
func Refused(st *store.Stream) bool { return slices.Contains(refusedStatus, st.Status) }

// RefusedFrame reports whether f is a client frame on a stream of rec the
// server refused at the HTTP level.
func RefusedFrame(rec *store.Recording, f *store.Frame) bool {
	return f.Direction == store.ClientToServer && RefusedStream(rec, f)
}

// RefusedStream reports whether f, of either direction, is on a stream of
// rec the server refused at the HTTP level.
func RefusedStream(rec *store.Recording, f *store.Frame) bool {
	st := Stream(rec, f.StreamID)
	return st != nil && Refused(st)
}

// Stream returns rec's stream id, nil if it has none.
func Stream(rec *store.Recording, id int64) *store.Stream {
	for i := range rec.Streams {
		if rec.Streams[i].ID == id {
			return &rec.Streams[i]
		}
	}
	return nil
}

// Ordinal returns the number of stream id within rec, from 1, as mcpvcr
// show prints it; 0 if rec has no such stream.
func Ordinal(rec *store.Recording, id int64) int {
	for i := range rec.Streams {
		if rec.Streams[i].ID == id {
			return i + 1
		}
	}
	return 0
}

// Chain returns the server frames of rec's stream id and of every stream
// that resumes it, in recorded order.
func Chain(rec *store.Recording, id int64) []*store.Frame {
	in := map[int64]bool{id: true}
	// Resumes can chain: a resume of a resume.
	for changed := true; changed; {
		changed = false
		for _, st := range rec.Streams {
			if st.ResumesID != 0 && in[st.ResumesID] && !in[st.ID] {
				in[st.ID], changed = true, true
			}
		}
	}
	// A stream that this one resumes belongs to the chain too.
	for st := Stream(rec, id); st != nil && st.ResumesID != 0; st = Stream(rec, st.ResumesID) {
		in[st.ResumesID] = true
	}
	var fs []*store.Frame
	for i := range rec.Frames {
		if f := &rec.Frames[i]; in[f.StreamID] && f.Direction == store.ServerToClient {
			fs = append(fs, f)
		}
	}
	return fs
}
