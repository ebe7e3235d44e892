// Package replayreport is what a replay reports: per live client a
// Report, with the client frames that matched no recorded one (Mismatch)
// and the requests whose recorded answer waits for what the client has
// not sent (Stall); written for people (Report.WriteSummary,
// WriteTotals), and for the client as the JSON-RPC error that answers an
// unmatched request (NoMatchAnswer). Package replayer fills them; its
// Report and Mismatch are these.
package replayreport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/internal/termtext"
	"github.com/mcpvcr/mcpvcr/store"
)

// NoMatchCode is the JSON-RPC error code of the answer to a request that
// matches no recorded request. It lies in the implementation-defined range
// that no MCP revision gives a meaning to.
const NoMatchCode = -32019

// Mismatch is a live client frame that matched no recorded frame.
type Mismatch struct {
	// Live is the frame the client sent.
	Live []byte
	// Closest is the recorded client frame most like it, nil if none.
	Closest *store.Frame
	// Diff shows how Live differs from Closest (-recorded +live).
	Diff string
	// Reason says why, for checks that are not about matching.
	Reason string
	// Hint names the matching rule that would have matched Closest, if
	// one would.
	Hint string
	// Rules are the rules of Hint in the --ignore syntax, such as
	// "initialize:params.capabilities.extensions"; Tolerant says that the
	// default tolerant matching would match instead of exact matching.
	// Callers that speak another language (Go, in mcpvcrtest) render the
	// hint from them.
	Rules    []string
	Tolerant bool
	// Session is the recorded session that holds Closest, 0 if none.
	Session int64
}

// Error describes the mismatch on one line.
func (m *Mismatch) Error() string {
	live := jsonrpc.Parse(m.Live)
	what := live.Kind.String()
	if live.Kind == jsonrpc.KindEmpty {
		what = "request without body"
	}
	if live.Method != "" {
		what += " " + live.Method
	}
	if m.Reason != "" {
		return fmt.Sprintf("%s: %s", what, m.Reason)
	}
	if m.Closest == nil {
		return fmt.Sprintf("%s: no recorded frame matches", what)
	}
	where := fmt.Sprintf("seq %d", m.Closest.Seq)
	if m.Session != 0 {
		where = fmt.Sprintf("session %d seq %d", m.Session, m.Closest.Seq)
	}
	return fmt.Sprintf("%s: no recorded frame matches; closest is %s (%s %s)", what, where, m.Closest.Kind, m.Closest.Method)
}

// NoMatchAnswer is the JSON-RPC error sent for an unmatched request: its
// data names the closest recorded frame, the diff and the hint.
func NoMatchAnswer(id json.RawMessage, mm *Mismatch) []byte {
	type closest struct {
		Seq    int64           `json:"seq"`
		Method string          `json:"method,omitempty"`
		Frame  json.RawMessage `json:"frame,omitempty"`
	}
	data := struct {
		Closest *closest `json:"closest,omitempty"`
		Diff    string   `json:"diff,omitempty"`
		Hint    string   `json:"hint,omitempty"`
	}{Diff: mm.Diff, Hint: mm.Hint}
	if mm.Closest != nil {
		data.Closest = &closest{Seq: mm.Closest.Seq, Method: mm.Closest.Method}
		if json.Valid(mm.Closest.Data) {
			data.Closest.Frame = json.RawMessage(strings.TrimSpace(string(mm.Closest.Data)))
		}
	}
	return jsonrpc.ErrorResponse(id, NoMatchCode, "mcpvcr: "+mm.Error(), data)
}

// NoMatchReply is the answer to an unmatched client frame: an error for a
// request, an array of errors (one per request) for a batch holding
// requests, nil when nothing is owed.
func NoMatchReply(live jsonrpc.Message, mm *Mismatch) []byte {
	return jsonrpc.ReplyEach(live, func(id json.RawMessage) []byte { return NoMatchAnswer(id, mm) })
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
	r.WriteLine(&w)
	WriteMismatches(&w, r.Mismatches)
	io.WriteString(out, termtext.Text(w.String()))
}

// WriteLine writes the report's one-line summary.
func (r *Report) WriteLine(w io.Writer) {
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

// WriteMismatches writes each mismatch with its diff and hint.
func WriteMismatches(w io.Writer, mms []*Mismatch) {
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

// WriteTotals writes, for people, what the replays of reps did not
// match (each answer invented, each client frame that matched nothing)
// and one total line, with the requests answered with a recorded
// refusal (refusals) and the server/discover probes answered as a legacy
// server (discovers). It reports whether everything matched.
func WriteTotals(out io.Writer, reps []*Report, invented []string, refusals, discovers int) (ok bool) {
	var w strings.Builder // escaped for a terminal as a whole
	defer func() { io.WriteString(out, termtext.Text(w.String())) }()
	ok = true
	for _, x := range invented {
		fmt.Fprintf(&w, "replay: invented an answer: %s\n", x)
		ok = false
	}
	sessions, frames, matched, unmatched, unsent, cut, resumed, unrecorded := 0, 0, 0, 0, 0, 0, 0, 0
	for _, rep := range reps {
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
		WriteMismatches(&w, rep.Mismatches)
		ok = ok && rep.OK()
	}
	fmt.Fprintf(&w, "replay: %s served, %s, %d matched, %d unmatched", termtext.Count(sessions, "client session"), termtext.Count(frames, "client frame"), matched, unmatched)
	if refusals > 0 {
		fmt.Fprintf(&w, ", %d refused as recorded", refusals)
	}
	if discovers > 0 {
		fmt.Fprintf(&w, ", %d server/discover answered as a legacy server (none recorded)", discovers)
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
