package replayer

import (
	"fmt"
	"io"
)

// WriteSummary writes, for people, what an HTTP replay by s did not
// match: each plain HTTP exchange no recording answered (see
// UnmatchedExchanges), then each client session's Report summary. It
// reports whether everything matched. Call it once s has stopped serving.
func (s *Server) WriteSummary(w io.Writer) (ok bool) {
	ok = true
	for _, x := range s.UnmatchedExchanges() {
		fmt.Fprintf(w, "replay: unmatched OAuth exchange %s: nothing recorded answers it (answered 404)\n", x)
		ok = false
	}
	for _, x := range s.Invented() {
		fmt.Fprintf(w, "replay: invented an answer: %s\n", x)
		ok = false
	}
	for _, rep := range s.Reports() {
		rep.WriteSummary(w)
		ok = ok && rep.OK()
	}
	return ok
}
