package replayer

import (
	"fmt"
	"io"
	"strings"

	"github.com/mcpvcr/mcpvcr/internal/termtext"
)

// WriteSummary writes, for people, what an HTTP replay by s did not
// match: each plain HTTP exchange no recording answered (see
// UnmatchedExchanges), each answer replay invented (see Invented), each
// client frame that matched nothing, with the closest recorded frame of
// any candidate session, the diff and the rule that would match it; then
// one total line. It reports whether everything matched. Call it once s
// has stopped serving.
func (s *Server) WriteSummary(out io.Writer) (ok bool) {
	var w strings.Builder // escaped for a terminal as a whole
	defer func() { io.WriteString(out, termtext.Text(w.String())) }()
	ok = true
	for _, x := range s.UnmatchedExchanges() {
		fmt.Fprintf(&w, "replay: unmatched OAuth exchange %s: nothing recorded answers it (answered 404)\n", x)
		ok = false
	}
	invented := s.Invented()
	for _, x := range invented {
		fmt.Fprintf(&w, "replay: invented an answer: %s\n", x)
		ok = false
	}
	sessions, frames, matched, unmatched, unsent, cut, resumed, unrecorded := 0, 0, 0, 0, 0, 0, 0, 0
	for _, rep := range s.Reports() {
		if rep.SessionID != 0 {
			sessions++
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
