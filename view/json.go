package view

import (
	"bytes"
	"encoding/json"
	"io"
	"time"

	"github.com/mcpvcr/mcpvcr/internal/causal"
	"github.com/mcpvcr/mcpvcr/internal/termtext"
	"github.com/mcpvcr/mcpvcr/store"
)

// SessionJSON is a session as mcpvcr ls --format json and show --format
// json write it.
type SessionJSON struct {
	ID         int64             `json:"id"`
	Name       string            `json:"name,omitempty"`
	Transport  string            `json:"transport"`
	Revision   string            `json:"revision,omitempty"`
	Era        string            `json:"era,omitempty"`
	Upstream   string            `json:"upstream,omitempty"`
	ExternalID string            `json:"external_id,omitempty"`
	StartedAt  *time.Time        `json:"started_at,omitempty"`
	EndedAt    *time.Time        `json:"ended_at,omitempty"`
	ExitCode   int               `json:"exit_code"`
	ClientInfo json.RawMessage   `json:"client_info,omitempty"`
	ServerInfo json.RawMessage   `json:"server_info,omitempty"`
	Labels     map[string]string `json:"labels,omitempty"`
	Note       string            `json:"note,omitempty"`
}

// StreamJSON is a stream in show --format json.
type StreamJSON struct {
	Label       string  `json:"label"` // as show names it: "post#3"
	Kind        string  `json:"kind"`
	Method      string  `json:"method,omitempty"`
	URL         string  `json:"url,omitempty"`
	Status      int     `json:"status,omitempty"`
	Resumes     string  `json:"resumes,omitempty"`
	LastEventID string  `json:"last_event_id,omitempty"`
	OpenedMS    float64 `json:"opened_ms"`
	ClosedMS    float64 `json:"closed_ms,omitempty"`
	End         string  `json:"end"`
	Err         string  `json:"error,omitempty"`
	Request     header  `json:"request_header,omitempty"`
	Response    header  `json:"response_header,omitempty"`
}

type header = map[string][]string

// FrameJSON is a frame in show --format json.
type FrameJSON struct {
	Seq         int64           `json:"seq"`
	Stream      string          `json:"stream,omitempty"`
	Dir         string          `json:"dir"`
	OffsetMS    float64         `json:"offset_ms"`
	Kind        string          `json:"kind"`
	Method      string          `json:"method,omitempty"` // for an answer, the method of its request
	Name        string          `json:"name,omitempty"`   // the tool, prompt or resource it names (or its request named)
	ID          string          `json:"id,omitempty"`
	Size        int             `json:"size"`
	AnswerSeq   int64           `json:"answer_seq,omitempty"`
	RequestSeq  int64           `json:"request_seq,omitempty"`
	DurationMS  float64         `json:"duration_ms,omitempty"`
	ProgressOf  int64           `json:"progress_of,omitempty"`
	Cancels     int64           `json:"cancels,omitempty"`
	CancelledBy int64           `json:"cancelled_by,omitempty"`
	AfterCancel int64           `json:"after_cancel,omitempty"` // the seq of the cancellation this frame came after
	Task        string          `json:"task,omitempty"`         // the task it belongs to, as tasks labels it: "task#1"
	TaskRole    string          `json:"task_role,omitempty"`    // what it does for it: create, created, poll, status, result, cancel, related
	Flags       []string        `json:"flags,omitempty"`
	Payload     json.RawMessage `json:"payload,omitempty"` // with Options.Payload: the JSON, or the text as a string
}

// TaskJSON is a task (revision 2025-11-25) in show --format json: the
// frames of a task name it by its label.
type TaskJSON struct {
	Label      string   `json:"label"` // as show names it: "task#1"
	ID         string   `json:"id"`
	Runner     string   `json:"runner"`      // the side that runs it: server or client
	What       string   `json:"created_by"`  // the method that created it, and the tool it names
	CreateSeq  int64    `json:"create_seq"`  // the request with params.task
	CreatedSeq int64    `json:"created_seq"` // its CreateTaskResult
	ResultSeq  int64    `json:"result_seq,omitempty"`
	LastSeq    int64    `json:"last_seq"`
	States     []string `json:"states"` // the distinct statuses it was seen in, in order
	Polls      int      `json:"polls"`
	Notified   int      `json:"status_notifications"`
	OpenedMS   float64  `json:"opened_ms"`
	ClosedMS   float64  `json:"closed_ms"`
}

// TimelineJSON is what show --format json writes.
type TimelineJSON struct {
	Session SessionJSON  `json:"session"`
	Streams []StreamJSON `json:"streams"`
	Tasks   []TaskJSON   `json:"tasks,omitempty"`
	Frames  []FrameJSON  `json:"frames"`
}

// SessionOf returns s as JSON shows it.
func SessionOf(s store.Session) SessionJSON {
	j := SessionJSON{ID: s.ID, Name: s.Name, Transport: s.Transport.String(), Revision: s.Revision, Era: s.Era.String(),
		Upstream: s.Upstream, ExternalID: s.ExternalID, ExitCode: s.ExitCode, ClientInfo: s.ClientInfo, ServerInfo: s.ServerInfo,
		Labels: s.Labels, Note: s.Note}
	if !s.StartedAt.IsZero() {
		t := s.StartedAt.UTC()
		j.StartedAt = &t
	}
	if !s.EndedAt.IsZero() {
		t := s.EndedAt.UTC()
		j.EndedAt = &t
	}
	return j
}

// WriteSessionsJSON writes ss as a JSON array, one object per session.
func WriteSessionsJSON(w io.Writer, ss []store.Session) error {
	out := make([]SessionJSON, 0, len(ss))
	for _, s := range ss {
		out = append(out, SessionOf(s))
	}
	return encode(w, out)
}

// WriteJSON writes the timeline of r as JSON (a TimelineJSON): the
// session, its streams, and the frames o's filters keep.
func WriteJSON(w io.Writer, r *store.Recording, o Options) error {
	links := causal.Link(r)
	labels := labelsOf(r.Streams)
	named := names(r.Frames, links)
	tasks := tasksOf(r, links, named)
	if err := checkTask(tasks, o); err != nil {
		return err
	}
	t := TimelineJSON{Session: SessionOf(r.Session), Streams: []StreamJSON{}, Frames: []FrameJSON{}}
	task := pickTask(tasks, o.Task)
	for i, k := range tasks {
		if o.Task != "" && task != i+1 {
			continue
		}
		t.Tasks = append(t.Tasks, TaskJSON{Label: k.Label, ID: k.ID, Runner: k.Runner, What: k.What, CreateSeq: k.Create,
			CreatedSeq: k.Created, ResultSeq: k.Result, LastSeq: k.Last, States: k.States, Polls: k.Polls, Notified: k.Notified,
			OpenedMS: ms(k.Opened), ClosedMS: ms(k.Closed)})
	}
	index := map[int64]int{}
	for i, st := range r.Streams {
		index[st.ID] = i
	}
	for i, st := range r.Streams {
		sj := StreamJSON{Label: labels[i], Kind: st.Kind.String(), Method: st.Method, URL: st.URL, Status: st.Status,
			LastEventID: st.LastEventID, OpenedMS: ms(st.Opened), ClosedMS: ms(st.Closed), End: st.End.String(), Err: st.Err,
			Request: st.RequestHeader, Response: st.ResponseHeader}
		if j, ok := index[st.ResumesID]; ok && st.ResumesID != 0 {
			sj.Resumes = labels[j]
		}
		t.Streams = append(t.Streams, sj)
	}
	bySeq := map[int64]*store.Frame{}
	for i := range r.Frames {
		bySeq[r.Frames[i].Seq] = &r.Frames[i]
	}
	for _, rw := range timeline(r, links, tasks, o) {
		f := rw.frame
		if f == nil {
			continue
		}
		kind := store.StreamUnknown
		fj := FrameJSON{Seq: f.Seq, Dir: f.Direction.String(), OffsetMS: ms(f.Offset), Method: f.Method, Name: named[f.Seq], ID: f.ID, Size: len(f.Raw)}
		if rw.stream >= 0 {
			fj.Stream, kind = labels[rw.stream], r.Streams[rw.stream].Kind
		}
		fj.Kind = Kind(f, kind)
		if a, ok := links.Answer[f.Seq]; ok {
			fj.AnswerSeq, fj.DurationMS = a, ms(bySeq[a].Offset-f.Offset)
		}
		if q, ok := links.Request[f.Seq]; ok {
			fj.RequestSeq, fj.DurationMS, fj.Method = q, ms(f.Offset-bySeq[q].Offset), links.Method[f.Seq]
		}
		fj.ProgressOf, fj.Cancels, fj.CancelledBy = links.Progress[f.Seq], links.Cancel[f.Seq], links.Cancelled[f.Seq]
		fj.AfterCancel = links.AfterCancel[f.Seq]
		if of, ok := links.Task[f.Seq]; ok {
			fj.Task, fj.TaskRole = taskLabel(of.Task), of.Role.String()
		}
		fj.Flags = flags(f, kind)
		if o.Payload {
			if d := f.Data; len(d) > 0 && json.Valid(d) {
				fj.Payload = d
			} else if len(f.Raw) > 0 {
				fj.Payload, _ = json.Marshal(string(f.Raw))
			}
		}
		t.Frames = append(t.Frames, fj)
	}
	return encode(w, t)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// encode writes v as indented JSON, with C1 controls, bidi controls and
// zero-width characters as \u escapes (termtext.JSON): the same values,
// but none a terminal acts on or a reader cannot see.
func encode(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(termtext.JSON(buf.Bytes()))
	return err
}
