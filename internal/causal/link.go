package causal

import "github.com/mcpvcr/mcpvcr/store"

// Links says, by seq, how the frames of one session relate to each other:
// which answer answers which request, which progress notifications belong
// to which request and which request a cancellation names. It is the
// Model seen frame by frame, as the views (show, the HTML report, HAR)
// print it; nothing here is stored.
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
	// Tasks are the session's tasks (revision 2025-11-25), in the order
	// they were created, and Task maps the seq of each frame of a task to
	// the task and what the frame does for it. Both are nil when the
	// session has no task.
	Tasks []TaskLink
	Task  map[int64]TaskOf
}

// TaskOf is the task a frame belongs to and what it does for it.
type TaskOf struct {
	Task int // an index into Links.Tasks
	Role TaskRole
}

// Link returns the Links of rec's frames, read from its Model (see Pair):
// the pairing rules are the Model's.
func Link(rec *store.Recording) Links { return Pair(rec).Links() }

// Links returns the model frame by frame. Where a frame holds several
// messages (a batch), the first message's link is the frame's.
func (m *Model) Links() Links {
	l := Links{
		Answer:      map[int64]int64{},
		Request:     map[int64]int64{},
		Method:      map[int64]string{},
		Progress:    map[int64]int64{},
		Cancel:      map[int64]int64{},
		Cancelled:   map[int64]int64{},
		AfterCancel: map[int64]int64{},
	}
	first := func(of map[int64]int64, seq, to int64) {
		if _, done := of[seq]; !done {
			of[seq] = to
		}
	}
	for _, x := range m.Msgs {
		seq := x.Frame.Seq
		if x.Answer != None {
			first(l.Answer, seq, m.Msgs[x.Answer].Frame.Seq)
		}
		if x.Answers != None {
			if _, done := l.Request[seq]; !done {
				r := m.Msgs[x.Answers]
				l.Request[seq], l.Method[seq] = r.Frame.Seq, r.M.Method
			}
		}
		if x.Progress != None {
			first(l.Progress, seq, m.Msgs[x.Progress].Frame.Seq)
		}
		if x.Cancels != None {
			first(l.Cancel, seq, m.Msgs[x.Cancels].Frame.Seq)
		}
		if x.Cancelled != None {
			l.Cancelled[seq] = m.Msgs[x.Cancelled].Frame.Seq
		}
	}
	if len(m.Tasks) > 0 {
		l.Tasks, l.Task = m.taskLinks(), map[int64]TaskOf{}
		for _, x := range m.Msgs {
			if _, done := l.Task[x.Frame.Seq]; !done && x.Task != None {
				l.Task[x.Frame.Seq] = TaskOf{Task: x.Task, Role: x.TaskRole}
			}
		}
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
