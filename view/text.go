package view

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mcpvcr/mcpvcr/internal/authwire"
	"github.com/mcpvcr/mcpvcr/internal/causal"
	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/internal/mcpwire"
	"github.com/mcpvcr/mcpvcr/internal/termtext"
	"github.com/mcpvcr/mcpvcr/store"
)

// Options select what the terminal timeline and its JSON form show.
// The zero value shows every frame, without payloads or colour.
type Options struct {
	// Method keeps the frames of one JSON-RPC method: its requests and
	// notifications, and the answers to its requests.
	Method string
	// Stream keeps one stream, named as show names it ("post#3"), by its
	// number ("3"), or every stream of a kind ("stderr").
	Stream string
	// Dir keeps one direction; DirectionUnknown keeps both.
	Dir store.Direction
	// Task keeps one task's frames and the lines where it begins and
	// ends: the task as show names it ("task#2"), its number ("2") or
	// its taskId.
	Task string
	// Payload prints each frame's JSON, pretty-printed, below its row (the
	// raw text when it is not JSON).
	Payload bool
	// Color marks directions, kinds and stream ends with ANSI colours.
	Color bool
}

// Column widths of the timeline. They are fixed: a long method, URL or
// id is cut with "…" rather than pushing the columns to the right.
const (
	wSeq    = 5
	wOffset = 10
	wStream = 9
	wKind   = 12
	wMethod = 40
	wID     = 8
	wSize   = 7
	wPair   = 15
)

// row is one line of the timeline: a frame, a stream opening or a
// stream ending, or where a task begins or ends.
type row struct {
	frame  *store.Frame
	stream int // index into the streams; -1 for a frame on none and a task's line
	end    bool
	task   int // for a task's line, the task's index + 1; 0 otherwise
}

// timeline orders the frames of r with a line where each stream opens
// (before its first frame, at its offset) and where it ends (after its
// last frame, at its offset), a line where each of tasks begins (before
// the request that created it) and ends (after its last frame), and
// applies o's filters.
func timeline(r *store.Recording, links causal.Links, tasks []taskInfo, o Options) []row {
	index := map[int64]int{}
	for i, st := range r.Streams {
		index[st.ID] = i
	}
	last := make([]int64, len(r.Streams))
	lastAt := make([]time.Duration, len(r.Streams))
	for i := range r.Frames {
		if j, ok := index[r.Frames[i].StreamID]; ok {
			last[j], lastAt[j] = r.Frames[i].Seq, r.Frames[i].Offset
		}
	}
	var opens, ends []int
	for i, st := range r.Streams {
		opens = append(opens, i)
		if st.End != store.EndOpen || st.Closed > 0 {
			ends = append(ends, i)
		}
	}
	endAt := func(i int) time.Duration { return max(r.Streams[i].Closed, lastAt[i]) }
	sort.SliceStable(opens, func(a, b int) bool { return r.Streams[opens[a]].Opened < r.Streams[opens[b]].Opened })
	sort.SliceStable(ends, func(a, b int) bool { return endAt(ends[a]) < endAt(ends[b]) })
	opened := make([]bool, len(r.Streams))
	var rows []row
	oi, ei := 0, 0
	until := func(off time.Duration, seq int64, all bool) {
		for {
			for oi < len(opens) && opened[opens[oi]] {
				oi++
			}
			canOpen := oi < len(opens) && (all || r.Streams[opens[oi]].Opened <= off)
			canEnd := ei < len(ends) && opened[ends[ei]] && (all || last[ends[ei]] < seq && endAt(ends[ei]) <= off)
			switch {
			case canEnd && (!canOpen || endAt(ends[ei]) <= r.Streams[opens[oi]].Opened):
				rows = append(rows, row{stream: ends[ei], end: true})
				ei++
			case canOpen:
				opened[opens[oi]] = true
				rows = append(rows, row{stream: opens[oi]})
				oi++
			default:
				return
			}
		}
	}
	for i := range r.Frames {
		f := &r.Frames[i]
		until(f.Offset, f.Seq, false)
		j, ok := index[f.StreamID]
		if !ok {
			j = -1
		} else if !opened[j] {
			opened[j] = true
			rows = append(rows, row{stream: j})
		}
		rows = append(rows, row{frame: f, stream: j})
	}
	until(0, 0, true)
	for ; ei < len(ends); ei++ {
		rows = append(rows, row{stream: ends[ei], end: true})
	}
	return filter(withTasks(rows, tasks), r, links, tasks, o)
}

// withTasks adds to rows the line where each of tasks begins, before the
// request that created it, and where it ends, after its last frame.
func withTasks(rows []row, tasks []taskInfo) []row {
	if len(tasks) == 0 {
		return rows
	}
	begins, ends := map[int64][]int{}, map[int64][]int{}
	for i, t := range tasks {
		begins[t.Create] = append(begins[t.Create], i+1)
		ends[t.Last] = append(ends[t.Last], i+1)
	}
	out := make([]row, 0, len(rows)+2*len(tasks))
	for _, rw := range rows {
		if rw.frame == nil {
			out = append(out, rw)
			continue
		}
		for _, t := range begins[rw.frame.Seq] {
			out = append(out, row{stream: -1, task: t})
		}
		out = append(out, rw)
		for _, t := range ends[rw.frame.Seq] {
			out = append(out, row{stream: -1, task: t, end: true})
		}
	}
	return out
}

// NoTaskError is returned by WriteText and WriteJSON when Options.Task
// names no task of the session.
type NoTaskError struct {
	Name string   // what Options.Task said
	Have []string // the session's tasks, as show names them (task#1)
}

func (e *NoTaskError) Error() string {
	if len(e.Have) == 0 {
		return fmt.Sprintf("--task %s: the session has no task", e.Name)
	}
	return fmt.Sprintf("--task %s: the session has no such task; it has %s", e.Name, strings.Join(e.Have, ", "))
}

// checkTask returns a *NoTaskError when o.Task names none of tasks.
func checkTask(tasks []taskInfo, o Options) error {
	if o.Task == "" || pickTask(tasks, o.Task) != 0 {
		return nil
	}
	e := &NoTaskError{Name: o.Task}
	for _, t := range tasks {
		e.Have = append(e.Have, t.Label)
	}
	return e
}

// pickTask returns the index + 1 of the task o.Task names, 0 if none
// does.
func pickTask(tasks []taskInfo, name string) int {
	for i, t := range tasks {
		if name == t.Label || name == strconv.Itoa(i+1) || name == t.ID {
			return i + 1
		}
	}
	return 0
}

// inTask reports whether rw is a frame of the task of index task-1 or
// one of its lines.
func inTask(rw row, links causal.Links, task int) bool {
	if rw.frame == nil {
		return task != 0 && rw.task == task
	}
	of, ok := links.Task[rw.frame.Seq]
	return ok && of.Task+1 == task
}

func filter(rows []row, r *store.Recording, links causal.Links, tasks []taskInfo, o Options) []row {
	if o.Method == "" && o.Stream == "" && o.Dir == store.DirectionUnknown && o.Task == "" {
		return rows
	}
	labels := labelsOf(r.Streams)
	task := pickTask(tasks, o.Task)
	var out []row
	for _, rw := range rows {
		if o.Task != "" && !inTask(rw, links, task) {
			continue
		}
		if rw.task != 0 {
			if o.Method == "" && o.Stream == "" && o.Dir == store.DirectionUnknown {
				out = append(out, rw)
			}
			continue
		}
		if o.Stream != "" {
			if rw.stream < 0 {
				continue
			}
			st := r.Streams[rw.stream]
			if o.Stream != labels[rw.stream] && o.Stream != strconv.Itoa(rw.stream+1) && o.Stream != st.Kind.String() {
				continue
			}
		}
		if rw.frame == nil {
			if o.Method == "" && o.Dir == store.DirectionUnknown {
				out = append(out, rw)
			}
			continue
		}
		f := rw.frame
		if o.Method != "" && f.Method != o.Method && links.Method[f.Seq] != o.Method {
			continue
		}
		if o.Dir != store.DirectionUnknown && f.Direction != o.Dir {
			continue
		}
		out = append(out, rw)
	}
	return out
}

func labelsOf(streams []store.Stream) []string {
	out := make([]string, len(streams))
	for i, st := range streams {
		out[i] = st.Kind.String() + "#" + strconv.Itoa(i+1)
	}
	return out
}

// WriteText writes the timeline of r for a terminal: a line for the
// session, then one line per frame in fixed-width columns (seq, offset,
// direction, stream, kind, method, id, size, the frame it pairs with,
// flags), with a line where each stream opens (its HTTP method, path and
// status) and where it ends (how).
func WriteText(w io.Writer, r *store.Recording, o Options) error {
	var b bytes.Buffer
	s := r.Session
	c := painter(o.Color)
	fmt.Fprintf(&b, "%s  transport=%s revision=%s era=%s upstream=%s\n",
		c.bold(strings.TrimSpace(fmt.Sprintf("session %d %s", s.ID, termtext.Escape(s.Name)))), s.Transport, dash(s.Revision), dash(s.Era.String()), dash(s.Upstream))
	fmt.Fprintln(&b, c.dim(strings.TrimRight(
		pad("SEQ", wSeq, true)+" "+pad("OFFSET", wOffset, true)+" D "+pad("STREAM", wStream, false)+" "+pad("KIND", wKind, false)+" "+
			pad("METHOD", wMethod, false)+" "+pad("ID", wID, false)+" "+pad("SIZE", wSize, true)+" "+pad("PAIRS WITH", wPair, false)+" FLAGS", " ")))
	links := causal.Link(r)
	labels := labelsOf(r.Streams)
	named := names(r.Frames, links)
	tasks := tasksOf(r, links, named)
	if err := checkTask(tasks, o); err != nil {
		return err
	}
	bySeq := map[int64]*store.Frame{}
	for i := range r.Frames {
		bySeq[r.Frames[i].Seq] = &r.Frames[i]
	}
	for _, rw := range timeline(r, links, tasks, o) {
		var line string
		switch {
		case rw.task != 0:
			line = taskLine(&tasks[rw.task-1], rw.end, c)
		case rw.frame == nil && !rw.end:
			line = openLine(r, rw.stream, labels, c)
		case rw.frame == nil:
			line = endLine(r.Streams[rw.stream], labels[rw.stream], c)
		default:
			line = frameLine(r, rw, labels, links, named, bySeq, c)
		}
		b.WriteString(strings.TrimRight(line, " "))
		b.WriteByte('\n')
		if o.Payload && rw.frame != nil {
			writePayload(&b, rw.frame, c)
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

func openLine(r *store.Recording, i int, labels []string, c painter) string {
	st := r.Streams[i]
	kind, what, flags := "open", "", []string{}
	if st.Method != "" {
		kind = st.Method
		if st.Status != 0 {
			kind += " " + strconv.Itoa(st.Status)
		}
		what = st.URL
		if ct := st.ResponseHeader.Get("Content-Type"); ct != "" {
			flags = append(flags, strings.TrimSpace(strings.SplitN(ct, ";", 2)[0]))
		}
	}
	if st.ResumesID != 0 {
		for j, o := range r.Streams {
			if o.ID == st.ResumesID {
				flags = append(flags, "resumes="+labels[j])
			}
		}
	}
	if st.LastEventID != "" {
		flags = append(flags, "Last-Event-ID="+st.LastEventID)
	}
	if st.Kind == store.HTTPStream {
		flags = append(flags, authwire.Label(st.URL))
		if v := st.ResponseHeader.Get(authwire.AuthorizeHeader); v != "" {
			flags = append(flags, v) // how the authorization request went: relayed, browser
		}
	}
	return pad("", wSeq, true) + " " + pad(fmtOffset(st.Opened), wOffset, true) + " " + c.dim("=") + " " + pad(labels[i], wStream, false) + " " +
		c.dim(pad(kind, wKind, false)) + " " + pad(what, wMethod, false) + " " + pad("", wID, false) + " " + pad("", wSize, true) + " " +
		pad("", wPair, false) + " " + flagsText(flags)
}

func endLine(st store.Stream, label string, c painter) string {
	end := st.End.String()
	color := c.green
	switch st.End {
	case store.EndServerClosed, store.EndProxyShutdown, store.EndOpen:
		color = c.yellow
	case store.EndClientAborted, store.EndUpstreamError:
		color = c.red
	}
	at := st.Closed
	return pad("", wSeq, true) + " " + pad(fmtOffset(at), wOffset, true) + " " + c.dim("■") + " " + pad(label, wStream, false) + " " +
		c.dim(pad("end", wKind, false)) + " " + color(pad(end, wMethod, false)) + " " + pad("", wID, false) + " " + pad("", wSize, true) + " " +
		pad("", wPair, false) + " " + termtext.Escape(st.Err)
}

func frameLine(r *store.Recording, rw row, labels []string, links causal.Links, named map[int64]string, bySeq map[int64]*store.Frame, c painter) string {
	f := rw.frame
	label, kind := "", store.StreamUnknown
	if rw.stream >= 0 {
		label, kind = labels[rw.stream], r.Streams[rw.stream].Kind
	}
	k := Kind(f, kind)
	method := f.Method
	if kind == store.HTTPStream {
		method = authwire.Label(r.Streams[rw.stream].URL) // what the exchange is: token, as-metadata…
	}
	pair := ""
	if a, ok := links.Answer[f.Seq]; ok {
		pair = "→ #" + strconv.FormatInt(a, 10) + " " + fmtDur(bySeq[a].Offset-f.Offset)
	}
	if q, ok := links.Request[f.Seq]; ok {
		method = links.Method[f.Seq]
		pair = "← #" + strconv.FormatInt(q, 10) + " " + fmtDur(f.Offset-bySeq[q].Offset)
	}
	if q, ok := links.Progress[f.Seq]; ok {
		pair = "progress #" + strconv.FormatInt(q, 10)
	}
	if q, ok := links.Cancel[f.Seq]; ok {
		pair = "cancels #" + strconv.FormatInt(q, 10)
	}
	if n := named[f.Seq]; n != "" {
		method += " " + n
	}
	var text string
	if k == "stderr" || k == "body" || k == "endpoint" {
		text = strings.TrimSpace(string(f.Data)) // the text is what there is to read: last, uncut
	}
	dir, dirColor := ">", c.blue
	if f.Direction == store.ServerToClient {
		dir, dirColor = "<", c.cyan
	}
	kindColor := c.plain
	switch k {
	case "request":
		kindColor = c.blue
	case "result":
		kindColor = c.green
	case "error":
		kindColor = c.red
	case "notification":
		kindColor = c.magenta
	case "invalid":
		kindColor = c.yellow
	case "stderr", "comment", "priming", "empty":
		kindColor = c.dim
	}
	fl := flags(f, kind)
	if m := taskMember(links, f.Seq); m != "" {
		fl = append([]string{m}, fl...) // first, never cut
	}
	if q, ok := links.Cancelled[f.Seq]; ok {
		fl = append(fl, "cancelled-by=#"+strconv.FormatInt(q, 10))
	}
	if q, ok := links.AfterCancel[f.Seq]; ok {
		fl = append(fl, "after-cancel=#"+strconv.FormatInt(q, 10))
	}
	if text != "" {
		fl = append(fl, strings.Join(strings.Fields(text), " "))
	}
	return pad(strconv.FormatInt(f.Seq, 10), wSeq, true) + " " + pad(fmtOffset(f.Offset), wOffset, true) + " " + dirColor(dir) + " " +
		pad(label, wStream, false) + " " + kindColor(pad(k, wKind, false)) + " " + pad(method, wMethod, false) + " " + pad(f.ID, wID, false) + " " +
		pad(strconv.Itoa(len(f.Raw)), wSize, true) + " " + pad(pair, wPair, false) + " " + flagsText(fl)
}

// wFlags is the most the FLAGS column of a line shows, in characters:
// the text of a body, a stderr line or a header a stranger's cassette
// made long is cut there (--payload prints a frame whole).
const wFlags = 60

// flagsText is fl for the FLAGS column: escaped, and cut with "…" past
// wFlags characters. It never escapes more of fl than it shows.
func flagsText(fl []string) string {
	s := strings.Join(fl, ",")
	cut := len(s) > 4*wFlags
	if cut {
		s = s[:4*wFlags] // at least wFlags characters; one cut here is escaped, then dropped
	}
	s = termtext.Escape(s)
	if rs := []rune(s); cut || len(rs) > wFlags {
		return string(rs[:min(len(rs), wFlags-1)]) + "…"
	}
	return s
}

// flags lists what else there is to know about a frame.
func flags(f *store.Frame, kind store.StreamKind) []string {
	var fl []string
	if f.Batch {
		fl = append(fl, fmt.Sprintf("batch(%d)", len(f.Members)))
	}
	if f.Kind.String() == "request" {
		if v := mcpwire.RequestMeta(jsonrpc.Parse(f.Data).Params).ProtocolVersion; v != "" {
			fl = append(fl, "rev="+v) // a modern request names its revision
		}
	}
	switch {
	case f.Oversize > 0 && len(f.Raw) == 0:
		fl = append(fl, fmt.Sprintf("oversize=%d(not stored)", f.Oversize))
	case f.Oversize > 0:
		// Cut short: its bytes are not a whole message, so it is not
		// called malformed.
		fl = append(fl, fmt.Sprintf("oversize=%d(stored %d)", f.Oversize, len(f.Raw)))
	case f.Malformed:
		fl = append(fl, "malformed")
	}
	if f.HasEventID {
		fl = append(fl, "sse-id="+f.EventID)
	}
	if f.Event != "" && f.Event != "endpoint" {
		fl = append(fl, "event="+f.Event)
	}
	if f.Retry >= 0 && f.SSE {
		fl = append(fl, fmt.Sprintf("retry=%d", f.Retry))
	}
	if f.Oversize == 0 && len(f.Raw) > 0 && f.Raw[len(f.Raw)-1] != '\n' && (kind == store.StdinStream || kind == store.StdoutStream) {
		fl = append(fl, "no-newline")
	}
	return fl
}

// writePayload writes the frame's JSON pretty-printed (json.Indent keeps
// the bytes of every value and the order of keys), or its text.
func writePayload(b *bytes.Buffer, f *store.Frame, c painter) {
	const indent = "      "
	data := bytes.TrimSpace(f.Data)
	if len(data) == 0 && !f.SSE {
		data = bytes.TrimSpace(f.Raw)
	}
	var out bytes.Buffer
	if json.Valid(data) && json.Indent(&out, data, indent, "  ") == nil {
		b.WriteString(indent)
		b.WriteString(c.dim(termtext.Text(out.String())))
		b.WriteByte('\n')
		return
	}
	if len(data) == 0 {
		return
	}
	for _, l := range strings.Split(string(data), "\n") {
		b.WriteString(indent + c.dim(termtext.Text(strings.TrimRight(l, "\r"))) + "\n")
	}
}

// pad fits s in n columns: cut with "…" when longer, padded with spaces
// (on the left when right is set) when shorter. Line breaks and tabs
// become spaces, and other control characters escapes.
func pad(s string, n int, right bool) string {
	s = termtext.Escape(strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == '\t' {
			return ' '
		}
		return r
	}, s))
	if c := utf8.RuneCountInString(s); c > n {
		rs := []rune(s)
		s = string(rs[:n-1]) + "…"
	} else if right {
		s = strings.Repeat(" ", n-c) + s
	} else {
		s += strings.Repeat(" ", n-c)
	}
	return s
}

func fmtOffset(d time.Duration) string { return fmt.Sprintf("%.3fs", d.Seconds()) }

func fmtDur(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return strconv.FormatInt(d.Microseconds(), 10) + "µs"
	case d < time.Second:
		return strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', 1, 64) + "ms"
	}
	return strconv.FormatFloat(d.Seconds(), 'f', 2, 64) + "s"
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return termtext.Escape(s)
}

// painter wraps text in ANSI colours, or leaves it alone.
type painter bool

func (p painter) wrap(code, s string) string {
	if !p {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

func (p painter) plain(s string) string   { return s }
func (p painter) bold(s string) string    { return p.wrap("1", s) }
func (p painter) dim(s string) string     { return p.wrap("2", s) }
func (p painter) red(s string) string     { return p.wrap("31", s) }
func (p painter) green(s string) string   { return p.wrap("32", s) }
func (p painter) yellow(s string) string  { return p.wrap("33", s) }
func (p painter) blue(s string) string    { return p.wrap("34", s) }
func (p painter) magenta(s string) string { return p.wrap("35", s) }
func (p painter) cyan(s string) string    { return p.wrap("36", s) }
