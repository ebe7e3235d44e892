package diff

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/mcpvcr/mcpvcr/internal/termtext"
	"github.com/mcpvcr/mcpvcr/store"
)

// Status says how a request's answers compare.
type Status string

// Statuses of a RequestDiff.
const (
	StatusSame       Status = "same"       // no difference that counts
	StatusChanged    Status = "changed"    // the answers differ; see Changes
	StatusUnanswered Status = "unanswered" // answered in the old session, not in the new
	StatusMissing    Status = "missing"    // only the old session sent the request
	StatusExtra      Status = "extra"      // only the new session sent the request
	StatusSkipped    Status = "skipped"    // not sent on purpose (verify's write guard); not a difference
)

// ChangeKind says what happened at a path.
type ChangeKind string

// Kinds of Change.
const (
	Changed ChangeKind = "changed"
	Added   ChangeKind = "added"
	Removed ChangeKind = "removed"
)

// Change is one difference at one JSON path of an answer.
type Change struct {
	// Path is where, in the syntax of ParsePath (without a scope).
	Path string     `json:"path"`
	Kind ChangeKind `json:"change"`
	// Old and New are the normalised values; nil where absent.
	Old json.RawMessage `json:"old,omitempty"`
	New json.RawMessage `json:"new,omitempty"`
}

// RequestDiff is how one client request fared.
type RequestDiff struct {
	// Seq is the request's seq in the old session, NewSeq in the new;
	// 0 where the session did not send it.
	Seq    int64  `json:"seq,omitempty"`
	NewSeq int64  `json:"new_seq,omitempty"`
	Method string `json:"method,omitempty"`
	// Name is the tool or prompt name or the resource URI, if any.
	Name    string   `json:"name,omitempty"`
	Status  Status   `json:"status"`
	Reason  string   `json:"reason,omitempty"`
	Changes []Change `json:"changes,omitempty"`
	// RepeatedIn lists the old sessions whose comparisons all show this
	// same difference, where reports of several sessions are written
	// together and it is in more than one (see Summarize); a report lists
	// it once, under Summary.Repeated.
	RepeatedIn []int64 `json:"repeated_in,omitempty"`
}

// Label names the request for people: "tools/call info (seq 10)".
func (rd *RequestDiff) Label() string {
	if rd.Method == "" {
		return "requests and notifications the server sent on its own"
	}
	s := rd.Method
	if rd.Name != "" {
		s += " " + rd.Name
	}
	switch {
	case rd.Seq != 0:
		s += " (seq " + strconv.FormatInt(rd.Seq, 10) + ")"
	case rd.NewSeq != 0:
		s += " (new seq " + strconv.FormatInt(rd.NewSeq, 10) + ")"
	}
	return s
}

// Differs reports whether the request counts as a difference.
func (rd *RequestDiff) Differs() bool {
	return rd.Status != StatusSame && rd.Status != StatusSkipped
}

// Skipped returns how many requests were not sent on purpose (see
// StatusSkipped).
func (r *Report) Skipped() int {
	n := 0
	for i := range r.Requests {
		if r.Requests[i].Status == StatusSkipped {
			n++
		}
	}
	return n
}

// SessionInfo identifies a compared session.
type SessionInfo struct {
	ID        int64  `json:"id"`
	Name      string `json:"name,omitempty"`
	Transport string `json:"transport"`
	Revision  string `json:"revision,omitempty"`
	Upstream  string `json:"upstream,omitempty"`
}

func infoOf(rec *store.Recording) SessionInfo {
	s := rec.Session
	return SessionInfo{ID: s.ID, Name: s.Name, Transport: s.Transport.String(), Revision: s.Revision, Upstream: s.Upstream}
}

// String names the session for people: id, name, transport, revision
// and upstream.
func (si SessionInfo) String() string {
	s := "session " + strconv.FormatInt(si.ID, 10)
	var parts []string
	if si.Name != "" {
		parts = append(parts, strconv.Quote(si.Name))
	}
	parts = append(parts, si.Transport)
	if si.Revision != "" {
		parts = append(parts, si.Revision)
	}
	if si.Upstream != "" {
		parts = append(parts, si.Upstream)
	}
	return s + " (" + strings.Join(parts, ", ") + ")"
}

// Report is the outcome of comparing two sessions.
type Report struct {
	Old SessionInfo `json:"old"`
	New SessionInfo `json:"new"`
	// Requests holds every request of the old session in order, then those
	// only the new one sent.
	Requests []RequestDiff `json:"requests"`
	// Server compares what the server sent on its own; nil if neither
	// session holds any.
	Server *RequestDiff `json:"server,omitempty"`
	// Notes add what the comparison alone does not show, such as how a
	// verified server ended.
	Notes []string `json:"notes,omitempty"`
}

// Differs reports whether anything differs.
func (r *Report) Differs() bool {
	for i := range r.Requests {
		if r.Requests[i].Differs() {
			return true
		}
	}
	return r.Server != nil && r.Server.Differs()
}

// all returns the requests and the server traffic, if any.
func (r *Report) all() []*RequestDiff {
	var out []*RequestDiff
	for i := range r.Requests {
		out = append(out, &r.Requests[i])
	}
	if r.Server != nil {
		out = append(out, r.Server)
	}
	return out
}

// Counts returns how many requests were compared, how many of them
// differ, and how many changes those hold. The server's own traffic is
// not counted; see Server.
func (r *Report) Counts() (requests, differ, changes int) {
	for i := range r.Requests {
		rd := &r.Requests[i]
		requests++
		if rd.Differs() {
			differ++
		}
		changes += len(rd.Changes)
	}
	return requests, differ, changes
}

// maxShown bounds how much of a value the text report shows.
const maxShown = 300

// WriteText writes the report for people: each request that differs,
// with its JSON paths and old and new values, then a summary line. The
// control characters of recorded data are escaped (see internal/termtext).
func (r *Report) WriteText(w io.Writer) error { return r.writeText(w, nil) }

// writeText is WriteText leaving out the differences whose key (see
// repeatKey) is in folded, which were listed once for several sessions;
// a line says how many.
func (r *Report) writeText(w io.Writer, folded map[string]bool) error {
	var b strings.Builder
	fmt.Fprintf(&b, "comparing %s with %s\n", r.Old, r.New)
	left := 0
	for _, rd := range r.all() {
		if folded[rd.repeatKey()] {
			left++
			continue
		}
		if rd.Differs() || rd.Status == StatusSkipped {
			b.WriteString(rd.text())
		}
	}
	if left > 0 {
		fmt.Fprintf(&b, "(and %s listed above, repeated in other sessions)\n", termtext.Count(left, "difference"))
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	b.WriteString(r.summary())
	b.WriteString("\n")
	if n := r.Skipped(); n > 0 {
		fmt.Fprintf(&b, "skipped %s that may write (the write guard; see verify --help)\n", termtext.Count(n, "tool call"))
	}
	_, err := io.WriteString(w, termtext.Text(b.String()))
	return err
}

// summary is the report's last line.
func (r *Report) summary() string {
	requests, differ, changes := r.Counts()
	serverDiffers := r.Server != nil && r.Server.Differs()
	if differ == 0 {
		if serverDiffers {
			return fmt.Sprintf("no differences in %d requests, but the server's own requests or notifications differ", requests)
		}
		return fmt.Sprintf("no differences in %d requests", requests)
	}
	byStatus := map[Status]int{}
	for i := range r.Requests {
		byStatus[r.Requests[i].Status]++
	}
	var parts []string
	for _, st := range []Status{StatusChanged, StatusUnanswered, StatusMissing, StatusExtra} {
		if n := byStatus[st]; n > 0 {
			p := fmt.Sprintf("%d %s", n, st)
			if st == StatusChanged {
				p += " (" + termtext.Count(changes, "change") + ")"
			}
			parts = append(parts, p)
		}
	}
	s := fmt.Sprintf("%d of %d requests differ: %s", differ, requests, strings.Join(parts, ", "))
	if serverDiffers {
		s += "; the server's own requests or notifications differ too"
	}
	return s
}

// text is the human description of one differing request.
func (rd *RequestDiff) text() string {
	var b strings.Builder
	switch rd.Status {
	case StatusChanged:
		fmt.Fprintf(&b, "%s: %s\n", rd.Label(), termtext.Count(len(rd.Changes), "change"))
	default:
		fmt.Fprintf(&b, "%s: %s: %s\n", rd.Label(), rd.Status, rd.Reason)
	}
	for _, c := range rd.Changes {
		fmt.Fprintf(&b, "  %-8s %s\n", c.Kind, c.Path)
		if method, ok := trafficMethod(rd, c.Path); ok {
			b.WriteString(describeTraffic(method, "-", c.Old))
			b.WriteString(describeTraffic(method, "+", c.New))
			continue
		}
		if c.Old != nil {
			fmt.Fprintf(&b, "             - %s\n", shown(c.Old))
		}
		if c.New != nil {
			fmt.Fprintf(&b, "             + %s\n", shown(c.New))
		}
	}
	return b.String()
}

// trafficMethod returns the method a change of the server's own traffic
// is about: path is requests["METHOD"] or notifications["METHOD"], with
// or without an element index.
func trafficMethod(rd *RequestDiff, path string) (string, bool) {
	if rd.Method != "" {
		return "", false
	}
	p, err := ParsePath(path)
	if err != nil || len(p.segs) < 2 || len(p.segs) > 3 || p.segs[0].Kind != segKey || p.segs[1].Kind != segKey {
		return "", false
	}
	if len(p.segs) == 3 && p.segs[2].Kind != segIndex {
		return "", false
	}
	if k := p.segs[0].Key; k != "requests" && k != "notifications" {
		return "", false
	}
	return p.segs[1].Key, true
}

// describeTraffic renders what a change to the server's own traffic
// added or removed: one line per distinct message, its method and a
// short body ("no params" when it had none), with a count when the same
// message came more than once. v is a list of params, or one params
// value.
func describeTraffic(method, sign string, v json.RawMessage) string {
	if v == nil {
		return ""
	}
	var items []json.RawMessage
	if json.Unmarshal(v, &items) != nil {
		items = []json.RawMessage{v}
	}
	var b strings.Builder
	for i := 0; i < len(items); {
		j := i + 1
		for j < len(items) && string(items[j]) == string(items[i]) {
			j++
		}
		body := string(items[i])
		if body == "{}" || body == `""` || body == "null" {
			body = "(no params)"
		} else if len(body) > maxTrafficBody {
			body = body[:maxTrafficBody] + "…"
		}
		count := ""
		if j-i > 1 {
			count = strconv.Itoa(j-i) + " × "
		}
		fmt.Fprintf(&b, "             %s %s%s %s\n", sign, count, method, body)
		i = j
	}
	return b.String()
}

// maxTrafficBody bounds the body shown for a server message.
const maxTrafficBody = 120

func shown(v json.RawMessage) string {
	s := string(v)
	if len(s) > maxShown {
		s = s[:maxShown] + "…"
	}
	return s
}

// WriteJSON writes reports as one JSON object: {"differ": bool,
// "summary": {...}, "reports": [...]}. The summary counts as the text
// report does (see Summarize); each report has its own counts, and each
// difference found in several sessions names them (repeated_in) and is
// listed once in the summary.
func WriteJSON(w io.Writer, reports ...*Report) error {
	type counted struct {
		*Report
		Counts ReportCounts `json:"counts"`
	}
	sum := Summarize(reports)
	out := struct {
		Differ  bool      `json:"differ"`
		Summary Summary   `json:"summary"`
		Reports []counted `json:"reports"`
	}{Summary: sum, Reports: make([]counted, len(reports))}
	for i, r := range reports {
		out.Differ = out.Differ || r.Differs()
		out.Reports[i] = counted{r, r.counts()}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Cases    []junitCase `xml:"testcase"`
	Output   string      `xml:"system-out,omitempty"`
}

type junitCase struct {
	Class   string        `xml:"classname,attr"`
	Name    string        `xml:"name,attr"`
	Failure *junitFailure `xml:"failure,omitempty"`
	Skipped *junitSkipped `xml:"skipped,omitempty"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Body    string `xml:",cdata"`
}

// WriteJUnit writes reports as JUnit XML for CI: one test suite per
// report, one test case per request; a request that differs fails, and
// its failure carries the differences; a call the write guard did not
// send is a skipped test case.
func WriteJUnit(w io.Writer, reports ...*Report) error {
	var doc junitSuites
	for _, r := range reports {
		s := junitSuite{Name: fmt.Sprintf("mcpvcr: %s vs %s", r.Old, r.New), Output: strings.Join(r.Notes, "\n")}
		class := "mcpvcr.session" + strconv.FormatInt(r.Old.ID, 10)
		for _, rd := range r.all() {
			c := junitCase{Class: class, Name: rd.Label()}
			if rd.Status == StatusSkipped {
				c.Skipped = &junitSkipped{Message: rd.Reason}
				s.Skipped++
			}
			if rd.Differs() {
				msg := string(rd.Status)
				if rd.Status == StatusChanged {
					msg = termtext.Count(len(rd.Changes), "change")
				} else if rd.Reason != "" {
					msg += ": " + rd.Reason
				}
				c.Failure = &junitFailure{Message: msg, Type: string(rd.Status), Body: rd.text()}
				s.Failures++
			}
			s.Cases = append(s.Cases, c)
			s.Tests++
		}
		doc.Suites = append(doc.Suites, s)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// Formats are the report formats Write takes.
var Formats = []string{"text", "json", "junit", "sarif"}

// Write writes reports to w in format: "text" (WriteText, one report
// after another), "json" (WriteJSON), "junit" (WriteJUnit) or "sarif"
// (WriteSARIF).
func Write(w io.Writer, format string, reports ...*Report) error {
	switch format {
	case "json":
		return WriteJSON(w, reports...)
	case "junit":
		return WriteJUnit(w, reports...)
	case "sarif":
		return WriteSARIF(w, reports...)
	case "text":
	default:
		return fmt.Errorf("unknown report format %q", format)
	}
	if len(reports) < 2 {
		for _, r := range reports {
			if err := r.WriteText(w); err != nil {
				return err
			}
		}
		return nil
	}
	sum := Summarize(reports)
	folded, err := writeRepeated(w, sum)
	if err != nil {
		return err
	}
	for _, r := range reports {
		if _, err := io.WriteString(w, "\n"); err != nil {
			return err
		}
		if err := r.writeText(w, folded); err != nil {
			return err
		}
	}
	_, err = fmt.Fprintf(w, "\n%s\n", sum.Text)
	return err
}
