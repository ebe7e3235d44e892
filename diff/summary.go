package diff

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/mcpvcr/mcpvcr/internal/termtext"
)

// The reports of several sessions written together: each one's counts,
// the total across them, and the differences they share, listed once.

// repeatKey is what makes two sessions' differences the same one: the
// request (its method and name, not its seq) and what differs; "" for a
// request that does not differ.
func (rd *RequestDiff) repeatKey() string {
	if !rd.Differs() {
		return ""
	}
	return strings.Replace(rd.text(), rd.Label(), rd.plainLabel(), 1)
}

// plainLabel is Label without the seq: the request as every session
// sends it.
func (rd *RequestDiff) plainLabel() string {
	if rd.Method == "" {
		return rd.Label()
	}
	if rd.Name != "" {
		return rd.Method + " " + rd.Name
	}
	return rd.Method
}

// ReportCounts are one comparison's numbers, as its text summary line
// says them.
type ReportCounts struct {
	Requests int `json:"requests"`
	Differ   int `json:"differ"`
	Changes  int `json:"changes"`
	// ByStatus counts the requests that differ by status.
	ByStatus map[Status]int `json:"by_status,omitempty"`
	// ServerDiffers: the server's own requests or notifications differ.
	ServerDiffers bool   `json:"server_differs,omitempty"`
	Skipped       int    `json:"skipped,omitempty"`
	Text          string `json:"text"`
}

func (r *Report) counts() ReportCounts {
	c := ReportCounts{Skipped: r.Skipped(), Text: r.summary(), ServerDiffers: r.Server != nil && r.Server.Differs()}
	c.Requests, c.Differ, c.Changes = r.Counts()
	for i := range r.Requests {
		if rd := &r.Requests[i]; rd.Differs() {
			if c.ByStatus == nil {
				c.ByStatus = map[Status]int{}
			}
			c.ByStatus[rd.Status]++
		}
	}
	return c
}

// Summary adds up the reports of several sessions, as the last line of
// the text report does.
type Summary struct {
	Sessions       int `json:"sessions"`
	SessionsDiffer int `json:"sessions_differ"`
	Requests       int `json:"requests"`
	RequestsDiffer int `json:"requests_differ"`
	// Repeated lists once each difference found in more than one
	// session, with the sessions it is in.
	Repeated []Repeated `json:"repeated,omitempty"`
	Text     string     `json:"text"`
}

// Repeated is a difference several sessions show alike.
type Repeated struct {
	Sessions []int64 `json:"sessions"`
	// Request is the request without its seq, "tools/call info".
	Request string       `json:"request"`
	Diff    *RequestDiff `json:"diff"`
	key     string
}

// Summarize adds reports up and marks each difference found in more than
// one of them with the sessions it is in (RequestDiff.RepeatedIn).
func Summarize(reports []*Report) Summary {
	var sum Summary
	in := map[string]*Repeated{}
	var order []string
	for _, r := range reports {
		n, d, _ := r.Counts()
		sum.Sessions++
		sum.Requests += n
		sum.RequestsDiffer += d
		if d > 0 || (r.Server != nil && r.Server.Differs()) {
			sum.SessionsDiffer++
		}
		seen := map[string]bool{}
		for _, rd := range r.all() {
			rd.RepeatedIn = nil
			k := rd.repeatKey()
			if k == "" || seen[k] {
				continue
			}
			seen[k] = true
			if in[k] == nil {
				in[k] = &Repeated{Request: rd.plainLabel(), Diff: rd, key: k}
				order = append(order, k)
			}
			in[k].Sessions = append(in[k].Sessions, r.Old.ID)
		}
	}
	for _, k := range order {
		if rep := in[k]; len(rep.Sessions) > 1 {
			sum.Repeated = append(sum.Repeated, *rep)
		}
	}
	for _, r := range reports {
		for _, rd := range r.all() {
			if rep := in[rd.repeatKey()]; rep != nil && len(rep.Sessions) > 1 {
				rd.RepeatedIn = rep.Sessions
			}
		}
	}
	sum.Text = fmt.Sprintf("in all: %d sessions compared, %d with differences; %d of %d requests differ", sum.Sessions, sum.SessionsDiffer, sum.RequestsDiffer, sum.Requests)
	return sum
}

// writeRepeated lists once each difference of sum found in more than
// one session, with the sessions it is in, and returns their keys.
func writeRepeated(w io.Writer, sum Summary) (map[string]bool, error) {
	folded := map[string]bool{}
	var b strings.Builder
	for _, rep := range sum.Repeated {
		folded[rep.key] = true
		where := make([]string, len(rep.Sessions))
		for i, id := range rep.Sessions {
			where[i] = strconv.FormatInt(id, 10)
		}
		every := ""
		if len(rep.Sessions) == sum.Sessions {
			every = ", every session compared"
		}
		fmt.Fprintf(&b, "in sessions %s%s:\n%s", strings.Join(where, ", "), every, rep.key)
	}
	if len(folded) > 0 {
		head := fmt.Sprintf("%s repeated in several sessions, listed once:\n", termtext.Count(len(folded), "difference"))
		if _, err := io.WriteString(w, termtext.Text(head+b.String())); err != nil {
			return nil, err
		}
	}
	return folded, nil
}
