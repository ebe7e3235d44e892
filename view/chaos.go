package view

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/mcpvcr/mcpvcr/store"
)

// The verdicts a ChaosFault may carry, as replay prints them, and the one
// of a fault planned that the client never reached.
const (
	VerdictPass        = "pass"
	VerdictFail        = "fail"
	VerdictNotObserved = "not observed"
	VerdictNotReached  = "not reached"
)

// Chaos is what one chaos replay run did, for the HTML report: a summary
// above the timeline, and each fault marked where it was placed.
type Chaos struct {
	// Seed drew the faults. The page carries it as a string: a
	// JavaScript number cannot hold every uint64.
	Seed uint64 `json:"seed,string"`
	// Kinds are the kinds asked for, as --chaos-faults names them; if
	// empty, every kind.
	Kinds []string `json:"kinds,omitempty"`
	// Rate is how many faults were drawn per session.
	Rate int `json:"rate"`
	// Command is the command line that replays exactly this run.
	Command string `json:"command,omitempty"`
	// Faults are the faults injected, in the order replay reports them,
	// then those planned and not reached (Verdict VerdictNotReached).
	Faults []ChaosFault `json:"faults"`
}

// ChaosFault is one fault of a chaos run, placed in a recorded session
// as mcpvcr show numbers its streams and frames.
type ChaosFault struct {
	// Session is the recorded session the fault was placed in.
	Session int64 `json:"session"`
	// Kind is the fault's kind, as --chaos-faults names it.
	Kind string `json:"kind"`
	// Stream is the stream's number in the session (post#8 is 8); 0 for
	// a fault at a request.
	Stream int `json:"stream,omitempty"`
	// Event is the number of events sent on Stream before the fault.
	Event int `json:"event,omitempty"`
	// Seq is the frame at the fault (the last event sent before a cut,
	// the event delayed or left out); 0 when none.
	Seq int64 `json:"seq,omitempty"`
	// Request is the number of the session's POST the fault hit (from 1,
	// the initialize); 0 for a fault on a stream.
	Request int `json:"request,omitempty"`
	// Where and What describe the place and the fault for people.
	Where string `json:"where"`
	What  string `json:"what"`
	// Did is what the client did next, as the wire showed it.
	Did string `json:"did,omitempty"`
	// Verdict is one of the Verdict constants.
	Verdict string `json:"verdict"`
}

// Counts returns how many faults of ch have each verdict.
func (ch *Chaos) Counts() map[string]int {
	n := map[string]int{}
	for _, f := range ch.Faults {
		n[f.Verdict]++
	}
	return n
}

// ExportChaosHTML writes the HTML report of a chaos run: the recorded
// sessions of db its faults were placed in, in session order, with the
// run summarised on top and each fault marked on its session's timeline.
// When no fault was placed anywhere, the page shows the sessions with the
// given IDs (all when none is given) instead.
func ExportChaosHTML(ctx context.Context, db *store.DB, w io.Writer, ch Chaos, sessionIDs ...int64) error {
	var ids []int64
	for _, f := range ch.Faults {
		if !slices.Contains(ids, f.Session) {
			ids = append(ids, f.Session)
		}
	}
	slices.Sort(ids)
	if len(ids) == 0 {
		ids = sessionIDs
	}
	if len(ids) == 0 {
		ss, err := db.Sessions(ctx)
		if err != nil {
			return err
		}
		for _, s := range ss {
			ids = append(ids, s.ID)
		}
	}
	p := Page{Chaos: &ch}
	for _, id := range ids {
		r, err := db.Recording(ctx, id)
		if err != nil {
			return fmt.Errorf("write the chaos report: session %d: %w", id, err)
		}
		p.Sessions = append(p.Sessions, r)
	}
	n := ch.Counts()
	p.Title = fmt.Sprintf("mcpvcr chaos seed %d: %d injected, %d fail", ch.Seed, len(ch.Faults)-n[VerdictNotReached], n[VerdictFail])
	return WriteHTML(w, p)
}

// chaosData is a Chaos as the page reads it: each fault with its place
// in its session's timeline.
type chaosData struct {
	*Chaos
	Faults []chaosMark `json:"faults"`
}

// chaosMark is a fault and where the page marks it: on frame At, or,
// when At is 0, on the opening row of stream St (an index into the
// session's streams; -1 when the session has no such stream).
type chaosMark struct {
	ChaosFault
	At int64 `json:"at,omitempty"`
	St int   `json:"st"`
}

// chaosOf places each fault of ch in the session of sessions it names.
func chaosOf(ch *Chaos, sessions []*store.Recording) *chaosData {
	if ch == nil {
		return nil
	}
	d := &chaosData{Chaos: ch, Faults: make([]chaosMark, 0, len(ch.Faults))}
	for _, f := range ch.Faults {
		m := chaosMark{ChaosFault: f, St: -1}
		for _, r := range sessions {
			if r.Session.ID == f.Session {
				m.At, m.St = place(f, r)
				break
			}
		}
		d.Faults = append(d.Faults, m)
	}
	return d
}

// place returns where f sits in r: the frame it hit (0 for none) and the
// index of its stream (-1 for none). A fault at a request hits the
// session's Request-th POST stream, as chaos replay counts them, and its
// client frame; a fault on a stream hits the frame Seq when there is one.
func place(f ChaosFault, r *store.Recording) (at int64, st int) {
	st = -1
	if f.Request > 0 {
		n := 0
		for i := range r.Streams {
			if r.Streams[i].Kind == store.PostStream {
				if n++; n == f.Request {
					st = i
					break
				}
			}
		}
		if st < 0 {
			return 0, -1
		}
		for i := range r.Frames {
			if fr := &r.Frames[i]; fr.StreamID == r.Streams[st].ID && fr.Direction == store.ClientToServer {
				return fr.Seq, st
			}
		}
		return 0, st
	}
	if f.Stream >= 1 && f.Stream <= len(r.Streams) {
		st = f.Stream - 1
	}
	if f.Seq > 0 {
		for i := range r.Frames {
			if r.Frames[i].Seq == f.Seq {
				if st < 0 { // a stdio fault names only its frame
					st = slices.IndexFunc(r.Streams, func(s store.Stream) bool { return s.ID == r.Frames[i].StreamID })
				}
				return f.Seq, st
			}
		}
	}
	return 0, st
}
