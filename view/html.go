package view

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/mcpvcr/mcpvcr/internal/causal"
	"github.com/mcpvcr/mcpvcr/store"
)

var (
	//go:embed assets/page.html
	pageHTML string
	//go:embed assets/report.css
	reportCSS string
	//go:embed assets/report.js
	reportJS string

	page = template.Must(template.New("page").Parse(pageHTML))

	// ReportCSP is the Content-Security-Policy of every HTML report, in a
	// <meta http-equiv> of the page (and the header to send with it,
	// where a report is served over HTTP): nothing is fetched, no form or
	// base URL, and the only script and style that run are the report's
	// own, named by their SHA-256 as the page holds them. A cassette from
	// a stranger may put markup in any string; should some of it ever
	// reach the page unescaped, it can neither run nor send anything.
	ReportCSP = "default-src 'none'; script-src " + cspHash(reportJS) + "; style-src " + cspHash(reportCSS) +
		"; img-src 'none'; connect-src 'none'; base-uri 'none'; form-action 'none'"
)

// cspHash is the CSP source expression of an inline script or style
// whose text is s.
func cspHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

// Page is what one HTML report shows: one session, or the two sides of a
// diff or verify run with their differences.
type Page struct {
	// Title heads the page; if empty, it names the first session.
	Title string
	// Sessions are shown one at a time, the first at load.
	Sessions []*store.Recording
	// Diffs, if any, are listed above the timeline and marked on the
	// frames they concern. Each is the JSON of a diff report: old and new
	// session ({"id": …}), and requests with seq, new_seq, method, name,
	// status, reason and changes ({path, change, old, new}).
	Diffs []json.RawMessage
	// Chaos, if set, is a chaos replay run over Sessions: summarised
	// above the timeline, each fault marked where it was placed.
	Chaos *Chaos
}

// WriteHTML writes p as one self-contained HTML file: styles, script and
// data inline, nothing fetched. The output depends only on p.
func WriteHTML(w io.Writer, p Page) error {
	if len(p.Sessions) == 0 {
		return fmt.Errorf("write HTML report: no session")
	}
	d := pageData{Sessions: make([]sessionData, 0, len(p.Sessions)), Diffs: p.Diffs, Chaos: chaosOf(p.Chaos, p.Sessions)}
	for _, r := range p.Sessions {
		d.Sessions = append(d.Sessions, sessionOf(r))
	}
	data, err := json.Marshal(d) // escapes <, > and &: safe inside <script>
	if err != nil {
		return fmt.Errorf("write HTML report: %w", err)
	}
	title := p.Title
	if title == "" {
		title = titleOf(p.Sessions[0].Session)
	}
	var buf bytes.Buffer
	err = page.Execute(&buf, map[string]any{
		"Title": title,
		"CSP":   ReportCSP,
		"CSS":   template.CSS(reportCSS),
		"JS":    template.JS(reportJS),
		"Data":  template.JS(data),
	})
	if err != nil {
		return fmt.Errorf("write HTML report: %w", err)
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("write HTML report: %w", err)
	}
	return nil
}

func titleOf(s store.Session) string {
	t := fmt.Sprintf("mcpvcr session %d", s.ID)
	if s.Name != "" {
		t += " " + s.Name
	}
	return t
}

type pageData struct {
	Sessions []sessionData     `json:"sessions"`
	Diffs    []json.RawMessage `json:"diffs,omitempty"`
	Chaos    *chaosData        `json:"chaos,omitempty"`
}

type sessionData struct {
	SessionJSON              // the session as ls and show --format json write it
	Duration    int64        `json:"durationUs,omitempty"` // -1 while open
	Streams     []streamData `json:"streams"`
	Tasks       []taskData   `json:"tasks,omitempty"`
	Frames      []frameData  `json:"frames"`
}

// taskData is a task (see tasks.go): the page draws a row where it
// begins, which folds its frames away, and one where it ends.
type taskData struct {
	Label    string   `json:"label"`
	ID       string   `json:"id"`
	Runner   string   `json:"runner"`
	What     string   `json:"what"`
	Create   int64    `json:"create"`  // seq of the request that created it
	Created  int64    `json:"created"` // seq of its CreateTaskResult
	Result   int64    `json:"result,omitempty"`
	Last     int64    `json:"last"`
	States   []string `json:"states"`
	Polls    int      `json:"polls"`
	Notified int      `json:"notified"`
	Opened   int64    `json:"opened"` // µs
	Closed   int64    `json:"closed"` // µs
}

type streamData struct {
	Label       string     `json:"label"`
	Kind        string     `json:"kind"`
	Method      string     `json:"method,omitempty"`
	URL         string     `json:"url,omitempty"`
	Status      int        `json:"status,omitempty"`
	ContentType string     `json:"ct,omitempty"`
	ReqHeader   [][]string `json:"reqH,omitempty"`
	RespHeader  [][]string `json:"respH,omitempty"`
	Resumes     int        `json:"resumes,omitempty"` // index+1 of the resumed stream
	LastEventID string     `json:"lastEventId,omitempty"`
	ResumeAfter int64      `json:"resumeAfter,omitempty"` // seq of the event it picks up after
	Opened      int64      `json:"opened"`                // µs
	Closed      int64      `json:"closed"`                // µs; 0 while open
	End         string     `json:"end"`
	Err         string     `json:"err,omitempty"`
}

// frameData is one frame; short keys keep a large session's page small.
type frameData struct {
	Seq       int64   `json:"s"`
	Stream    int     `json:"t"` // index into streams, -1 for none
	Dir       int     `json:"d"` // 0 client to server, 1 server to client
	Offset    int64   `json:"o"` // µs
	Kind      string  `json:"k"`
	Method    string  `json:"m,omitempty"`
	Name      string  `json:"nm,omitempty"` // the tool, prompt or resource a request (or its answer) names
	ID        string  `json:"i,omitempty"`
	Raw       string  `json:"r"`
	Base64    bool    `json:"b64,omitempty"` // Raw is base64: the bytes are not UTF-8
	Members   int     `json:"n,omitempty"`   // a batch's size
	Malformed bool    `json:"x,omitempty"`
	Oversize  int64   `json:"os,omitempty"` // the true length of a frame stored cut (Raw is its start)
	Event     string  `json:"ev,omitempty"`
	EventID   *string `json:"eid,omitempty"`
	Retry     *int    `json:"rt,omitempty"`
	Answer    int64   `json:"ans,omitempty"` // seq of the answer to this request
	Request   int64   `json:"req,omitempty"` // seq of the request this answers
	Duration  int64   `json:"dur,omitempty"` // µs from request to answer
	Progress  int64   `json:"pr,omitempty"`  // seq of the request this progress is for
	Cancels   int64   `json:"cx,omitempty"`  // seq of the request this cancels
	Cancelled int64   `json:"cxd,omitempty"` // seq of the cancellation of this request
	// AfterCancel is the seq of the cancellation this frame came after.
	AfterCancel int64 `json:"acx,omitempty"`
	// Task is the task the frame belongs to (an index into the session's
	// tasks, plus one), TaskRole what it does for it.
	Task     int    `json:"tk,omitempty"`
	TaskRole string `json:"tr,omitempty"`
}

func sessionOf(r *store.Recording) sessionData {
	s := r.Session
	sd := sessionData{SessionJSON: SessionOf(s), Streams: []streamData{}, Frames: make([]frameData, 0, len(r.Frames))}
	if !s.StartedAt.IsZero() {
		sd.Duration = -1
		if !s.EndedAt.IsZero() {
			sd.Duration = s.EndedAt.Sub(s.StartedAt).Microseconds()
		}
	}
	index := map[int64]int{}
	kinds := map[int64]store.StreamKind{}
	for i, st := range r.Streams {
		index[st.ID], kinds[st.ID] = i, st.Kind
	}
	bySeq := map[int64]*store.Frame{}
	for i := range r.Frames {
		bySeq[r.Frames[i].Seq] = &r.Frames[i]
	}
	for i, st := range r.Streams {
		d := streamData{
			Label: fmt.Sprintf("%s#%d", st.Kind, i+1), Kind: st.Kind.String(), Method: st.Method, URL: st.URL,
			Status: st.Status, ContentType: st.ResponseHeader.Get("Content-Type"),
			ReqHeader: headerPairs(st.RequestHeader), RespHeader: headerPairs(st.ResponseHeader),
			LastEventID: st.LastEventID, Opened: st.Opened.Microseconds(), Closed: st.Closed.Microseconds(),
			End: st.End.String(), Err: st.Err,
		}
		if j, ok := index[st.ResumesID]; ok && st.ResumesID != 0 {
			d.Resumes = j + 1
			for k := range r.Frames {
				if f := &r.Frames[k]; f.StreamID == st.ResumesID && f.HasEventID && f.EventID == st.LastEventID {
					d.ResumeAfter = f.Seq
				}
			}
		}
		sd.Streams = append(sd.Streams, d)
	}
	links := causal.Link(r)
	named := names(r.Frames, links)
	for _, t := range tasksOf(r, links, named) {
		sd.Tasks = append(sd.Tasks, taskData{Label: t.Label, ID: t.ID, Runner: t.Runner, What: t.What, Create: t.Create,
			Created: t.Created, Result: t.Result, Last: t.Last, States: t.States, Polls: t.Polls, Notified: t.Notified,
			Opened: t.Opened.Microseconds(), Closed: t.Closed.Microseconds()})
	}
	for i := range r.Frames {
		f := &r.Frames[i]
		fd := frameData{Seq: f.Seq, Stream: -1, Offset: f.Offset.Microseconds(), Kind: Kind(f, kinds[f.StreamID]),
			Method: f.Method, Name: named[f.Seq], ID: f.ID, Malformed: f.Malformed, Oversize: f.Oversize, Event: f.Event}
		if j, ok := index[f.StreamID]; ok {
			fd.Stream = j
		}
		if f.Direction == store.ServerToClient {
			fd.Dir = 1
		}
		if utf8.Valid(f.Raw) {
			fd.Raw = string(f.Raw)
		} else {
			fd.Raw, fd.Base64 = base64.StdEncoding.EncodeToString(f.Raw), true
		}
		if f.Batch {
			fd.Members = len(f.Members)
		}
		if f.HasEventID {
			id := f.EventID
			fd.EventID = &id
		}
		if f.SSE && f.Retry >= 0 {
			rt := f.Retry
			fd.Retry = &rt
		}
		if a, ok := links.Answer[f.Seq]; ok {
			fd.Answer = a
			fd.Duration = (bySeq[a].Offset - f.Offset).Microseconds()
		}
		if q, ok := links.Request[f.Seq]; ok {
			fd.Request = q
			if fd.Method == "" {
				fd.Method = links.Method[f.Seq] // an answer shows what it answers
			}
			fd.Duration = (f.Offset - bySeq[q].Offset).Microseconds()
		}
		fd.Progress, fd.Cancels, fd.Cancelled = links.Progress[f.Seq], links.Cancel[f.Seq], links.Cancelled[f.Seq]
		fd.AfterCancel = links.AfterCancel[f.Seq]
		if of, ok := links.Task[f.Seq]; ok {
			fd.Task, fd.TaskRole = of.Task+1, of.Role.String()
		}
		sd.Frames = append(sd.Frames, fd)
	}
	return sd
}

func headerPairs(h map[string][]string) [][]string {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out [][]string
	for _, k := range keys {
		out = append(out, []string{k, strings.Join(h[k], ", ")})
	}
	return out
}

// ExportHTML writes the sessions of db with the given IDs (all when none
// is given) as one HTML report, the first shown at load.
func ExportHTML(ctx context.Context, db *store.DB, w io.Writer, sessionIDs ...int64) error {
	if len(sessionIDs) == 0 {
		ss, err := db.Sessions(ctx)
		if err != nil {
			return err
		}
		for _, s := range ss {
			sessionIDs = append(sessionIDs, s.ID)
		}
	}
	var p Page
	for _, id := range sessionIDs {
		r, err := db.Recording(ctx, id)
		if err != nil {
			return fmt.Errorf("export session %d as HTML: %w", id, err)
		}
		p.Sessions = append(p.Sessions, r)
	}
	return WriteHTML(w, p)
}

// ExportDiffHTML writes one HTML report of the given diff reports (each
// the JSON that diff and verify write with --format json): the sessions
// they compare, read from db in the order they first appear, with the
// differences listed and marked.
func ExportDiffHTML(ctx context.Context, db *store.DB, w io.Writer, diffs ...json.RawMessage) error {
	var p Page
	seen := map[int64]bool{}
	for i, d := range diffs {
		var ids struct {
			Old, New struct{ ID int64 }
		}
		if err := json.Unmarshal(d, &ids); err != nil {
			return fmt.Errorf("write HTML report: diff %d: %w", i+1, err)
		}
		for _, id := range []int64{ids.Old.ID, ids.New.ID} {
			if id == 0 || seen[id] {
				continue
			}
			seen[id] = true
			r, err := db.Recording(ctx, id)
			if err != nil {
				return fmt.Errorf("write HTML report: %w", err)
			}
			p.Sessions = append(p.Sessions, r)
		}
	}
	p.Diffs = diffs
	if len(p.Sessions) > 0 {
		p.Title = fmt.Sprintf("mcpvcr: %d comparisons", len(diffs))
		if len(diffs) == 1 && len(p.Sessions) == 2 {
			p.Title = fmt.Sprintf("mcpvcr: session %d compared with session %d", p.Sessions[0].Session.ID, p.Sessions[1].Session.ID)
		}
	}
	return WriteHTML(w, p)
}
