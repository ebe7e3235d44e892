package replayer

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/mcpvcr/mcpvcr/internal/termtext"
	"github.com/mcpvcr/mcpvcr/store"
)

// WriteSummary writes, for people, what an HTTP replay by s did not
// match: each answer replay invented (see Invented), each
// client frame that matched nothing, with the closest recorded frame of
// any candidate session, the diff and the rule that would match it; then
// one total line. It reports whether everything matched. Call it once s
// has stopped serving.
func (s *Server) WriteSummary(out io.Writer) (ok bool) {
	var w strings.Builder // escaped for a terminal as a whole
	defer func() { io.WriteString(out, termtext.Text(w.String())) }()
	ok = true
	invented := s.Invented()
	for _, x := range invented {
		fmt.Fprintf(&w, "replay: invented an answer: %s\n", x)
		ok = false
	}
	sessions, frames, matched, unmatched, unsent, cut, resumed, unrecorded := 0, 0, 0, 0, 0, 0, 0, 0
	for _, rep := range s.Reports() {
		if rep.SessionID != 0 {
			sessions += max(rep.Clients, 1)
		}
		frames += rep.Received
		matched += rep.Matched
		unmatched += len(rep.Mismatches)
		unsent += len(rep.Unsent)
		cut += rep.Cut
		unrecorded += rep.Unrecorded
		resumed += rep.Resumed
		writeMismatches(&w, rep.Mismatches)
		ok = ok && rep.OK()
	}
	fmt.Fprintf(&w, "replay: %s served, %s, %d matched, %d unmatched", termtext.Count(sessions, "client session"), termtext.Count(frames, "client frame"), matched, unmatched)
	if n := s.refusals(); n > 0 {
		fmt.Fprintf(&w, ", %d refused as recorded", n)
	}
	if n := s.discovers(); n > 0 {
		fmt.Fprintf(&w, ", %d server/discover answered as a legacy server (none recorded)", n)
	}
	if len(invented) > 0 {
		fmt.Fprintf(&w, ", %s invented", termtext.Count(len(invented), "answer"))
	}
	if unrecorded > 0 {
		fmt.Fprintf(&w, ", %s to server requests the recording never got", termtext.Count(unrecorded, "answer"))
	}
	if unsent > 0 {
		fmt.Fprintf(&w, ", %s not sent", termtext.Count(unsent, "recorded client frame"))
	}
	if cut > 0 || resumed > 0 {
		fmt.Fprintf(&w, ", %s cut, %d resumed", termtext.Count(cut, "stream"), resumed)
	}
	fmt.Fprintln(&w)
	return ok
}

// WriteReports writes one line per live client: the recorded session it
// was replayed from and what it did.
func (s *Server) WriteReports(out io.Writer) {
	var w strings.Builder
	for _, rep := range s.Reports() {
		rep.writeLine(&w)
	}
	io.WriteString(out, termtext.Text(w.String()))
}

// Report is what one replay saw.
type Report struct {
	// SessionID is the recorded session that was replayed (the one the
	// client's frames singled out, or the first candidate).
	SessionID int64
	// Received counts the client's frames; Matched those that matched.
	Received, Matched int
	// Synthesized counts pings answered without a recording.
	Synthesized int
	// Discovered counts server/discover probes answered as a legacy
	// server would, because the recording holds none (stdio).
	Discovered int
	// Unrecorded counts client answers to server requests whose recorded
	// answer never came (the recorded client left first); they are taken
	// without complaint.
	Unrecorded int
	// Cut counts the SSE streams a fault option cut; Resumed the GETs
	// with Last-Event-ID that were answered.
	Cut, Resumed int
	// Mismatches are the client frames that matched nothing.
	Mismatches []*Mismatch
	// Unsent are recorded client frames the client never sent.
	Unsent []*store.Frame
	// Clients counts the live client sessions the report stands for:
	// 1, or more for the sessions of one recorded session that ended
	// with every frame matched, which a long-running HTTP replay folds
	// into one report so that what it keeps does not grow with them.
	Clients int
	// Candidates counts the recorded sessions still in play at the end
	// (HTTP): more than one when the client's frames never told them
	// apart, and SessionID is only the first of them.
	Candidates int
}

// OK reports whether every client frame matched.
func (r *Report) OK() bool { return len(r.Mismatches) == 0 }

// WriteSummary writes a human summary of the report to out, control
// characters of the frames escaped for a terminal.
func (r *Report) WriteSummary(out io.Writer) {
	var w strings.Builder // escaped for a terminal as a whole
	r.writeLine(&w)
	writeMismatches(&w, r.Mismatches)
	io.WriteString(out, termtext.Text(w.String()))
}

// writeLine writes the report's one-line summary.
func (r *Report) writeLine(w io.Writer) {
	what := fmt.Sprintf("session %d", r.SessionID)
	if r.Candidates > 1 {
		what = fmt.Sprintf("session %d (the first of %d candidates its frames never told apart)", r.SessionID, r.Candidates)
	}
	if r.SessionID == 0 {
		what = "2026-07-28 exchanges"
	}
	if r.Clients > 1 {
		what += fmt.Sprintf(" to %d clients that ended", r.Clients)
	}
	fmt.Fprintf(w, "replayed %s: %s, %d matched, %d unmatched", what, termtext.Count(r.Received, "client frame"), r.Matched, len(r.Mismatches))
	if r.Unrecorded > 0 {
		fmt.Fprintf(w, ", %s to server requests the recording never got", termtext.Count(r.Unrecorded, "answer"))
	}
	if r.Synthesized > 0 {
		fmt.Fprintf(w, ", %s answered without a recording", termtext.Count(r.Synthesized, "ping"))
	}
	if r.Discovered > 0 {
		fmt.Fprintf(w, ", %d server/discover answered as a legacy server (none recorded)", r.Discovered)
	}
	if len(r.Unsent) > 0 {
		fmt.Fprintf(w, ", %s not sent", termtext.Count(len(r.Unsent), "recorded client frame"))
	}
	if r.Cut > 0 || r.Resumed > 0 {
		fmt.Fprintf(w, ", %s cut, %d resumed", termtext.Count(r.Cut, "stream"), r.Resumed)
	}
	fmt.Fprintln(w)
}

// writeMismatches writes each mismatch with its diff and hint.
func writeMismatches(w io.Writer, mms []*Mismatch) {
	for _, m := range mms {
		fmt.Fprintf(w, "  unmatched %s\n", m.Error())
		if m.Diff != "" {
			fmt.Fprintf(w, "    diff (-recorded +live):\n%s", indent(m.Diff, "      "))
		}
		if m.Hint != "" {
			fmt.Fprintf(w, "    %s\n", m.Hint)
		}
	}
}

func indent(s, pre string) string {
	var b bytes.Buffer
	for _, line := range bytes.SplitAfter([]byte(s), []byte("\n")) {
		if len(line) > 0 {
			b.WriteString(pre)
			b.Write(line)
		}
	}
	if b.Len() > 0 && b.Bytes()[b.Len()-1] != '\n' {
		b.WriteByte('\n')
	}
	return b.String()
}
