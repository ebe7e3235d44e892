package replayer

import (
	"io"
	"strings"

	"github.com/mcpvcr/mcpvcr/internal/replayreport"
	"github.com/mcpvcr/mcpvcr/internal/termtext"
)

// WriteSummary writes, for people, what an HTTP replay by s did not
// match: each answer replay invented (see Invented), each
// client frame that matched nothing, with the closest recorded frame of
// any candidate session, the diff and the rule that would match it; then
// one total line. It reports whether everything matched. Call it once s
// has stopped serving.
func (s *Server) WriteSummary(out io.Writer) (ok bool) {
	return replayreport.WriteTotals(out, s.Reports(), s.Invented(), s.refusals(), s.discovers())
}

// WriteReports writes one line per live client: the recorded session it
// was replayed from and what it did.
func (s *Server) WriteReports(out io.Writer) {
	var w strings.Builder
	for _, rep := range s.Reports() {
		rep.WriteLine(&w)
	}
	io.WriteString(out, termtext.Text(w.String()))
}

// Report is what one replay saw: the recorded session it was replayed
// from, what the client sent and what matched, and the client frames
// that matched nothing (Mismatches). OK reports whether everything
// matched; WriteSummary writes it for people.
type Report = replayreport.Report

// Mismatch is a live client frame that matched no recorded frame: the
// frame (Live), the recorded client frame most like it (Closest, in
// Session), how they differ (Diff, -recorded +live), why when the check
// is not about matching (Reason), and the matching rule that would have
// matched (Hint; Rules and Tolerant for callers that write it in another
// language).
type Mismatch = replayreport.Mismatch

// NoMatchCode is the JSON-RPC error code of the answer to a request that
// matches no recorded request. It lies in the implementation-defined range
// that no MCP revision gives a meaning to.
const NoMatchCode int = replayreport.NoMatchCode
