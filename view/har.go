package view

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"runtime/debug"
	"sort"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/mcpvcr/mcpvcr/internal/causal"
	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/store"
)

// StreamLabels names each stream of a session as show numbers them:
// its kind and its position among the session's streams ("post#3").
func StreamLabels(streams []store.Stream) map[int64]string {
	label := make(map[int64]string, len(streams))
	for i, st := range streams {
		label[st.ID] = st.Kind.String() + "#" + strconv.Itoa(i+1)
	}
	return label
}

// exportHAR writes the sessions of db with the given IDs (all when none
// is given) as one HTTP Archive 1.2 document: see WriteHAR.
func exportHAR(ctx context.Context, db *store.DB, w io.Writer, sessionIDs ...int64) error {
	recs, err := db.Recordings(ctx, sessionIDs...)
	if err != nil {
		return fmt.Errorf("export as HAR: %w", err)
	}
	return WriteHAR(w, recs...)
}

// WriteHAR writes recs as one HTTP Archive 1.2 document, one page per
// session. Each HTTP exchange (a POST, GET, resuming GET, DELETE or any
// other request the session holds) is one entry with its redacted
// headers, status, timings and body text. An SSE answer keeps its raw
// event-stream text in content.text and lists its events in
// _eventSourceMessages ({time, eventName, eventId, data}, time in seconds
// since the epoch, as browsers export them), with _retry where an event
// set one. Each page carries _mcpvcrSession, the session as ls --format
// json writes it (SessionJSON). Entries carry _mcpvcrStream (the stream
// as show names it), _mcpvcrEnd (how it ended) and, for a resuming GET,
// _mcpvcrResumes.
//
// A stdio session has no HTTP: each request becomes an entry POSTed to
// mcp-stdio://session-N/c2s/METHOD?id=ID (s2c for the server's requests)
// with its answer as the response (status 200; 202 for a notification,
// 0 for a request never answered), and the server's stderr one entry at
// mcp-stdio://session-N/stderr.
func WriteHAR(w io.Writer, recs ...*store.Recording) error {
	doc := harDoc{Log: harLog{Version: "1.2", Creator: harCreator{Name: "mcpvcr", Version: version()}, Pages: []harPage{}, Entries: []harEntry{}}}
	for _, r := range recs {
		page := "session-" + strconv.FormatInt(r.Session.ID, 10)
		doc.Log.Pages = append(doc.Log.Pages, harPage{
			StartedDateTime: harTime(r.Session.StartedAt, 0),
			ID:              page,
			Title:           sessionTitle(r.Session),
			PageTimings:     struct{}{},
			Session:         SessionOf(r.Session),
		})
		var es []harEntry
		if r.Session.Transport == store.Stdio {
			es = stdioEntries(r)
		} else {
			es = httpEntries(r)
		}
		for i := range es {
			es[i].PageRef = page
		}
		doc.Log.Entries = append(doc.Log.Entries, es...)
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("write HAR: %w", err)
	}
	return nil
}

type harDoc struct {
	Log harLog `json:"log"`
}

type harLog struct {
	Version string     `json:"version"`
	Creator harCreator `json:"creator"`
	Pages   []harPage  `json:"pages"`
	Entries []harEntry `json:"entries"`
}

type harCreator struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

type harPage struct {
	StartedDateTime string      `json:"startedDateTime"`
	ID              string      `json:"id"`
	Title           string      `json:"title"`
	PageTimings     struct{}    `json:"pageTimings"`
	Session         SessionJSON `json:"_mcpvcrSession"` // as ls and show --format json write it
}

type harEntry struct {
	PageRef         string       `json:"pageref,omitempty"`
	StartedDateTime string       `json:"startedDateTime"`
	Time            float64      `json:"time"`
	Request         harRequest   `json:"request"`
	Response        harResponse  `json:"response"`
	Cache           struct{}     `json:"cache"`
	Timings         harTimings   `json:"timings"`
	ResourceType    string       `json:"_resourceType,omitempty"`
	Messages        []harMessage `json:"_eventSourceMessages,omitempty"`
	Retry           *int         `json:"_retry,omitempty"`
	Stream          string       `json:"_mcpvcrStream,omitempty"`
	End             string       `json:"_mcpvcrEnd,omitempty"`
	Err             string       `json:"_mcpvcrError,omitempty"`
	Resumes         string       `json:"_mcpvcrResumes,omitempty"`
	Seq             int64        `json:"_mcpvcrSeq,omitempty"`
	AnswerSeq       int64        `json:"_mcpvcrAnswerSeq,omitempty"`

	startOffset time.Duration // stdio: the request's offset
}

type harRequest struct {
	Method      string      `json:"method"`
	URL         string      `json:"url"`
	HTTPVersion string      `json:"httpVersion"`
	Cookies     []harNV     `json:"cookies"`
	Headers     []harNV     `json:"headers"`
	QueryString []harNV     `json:"queryString"`
	PostData    *harContent `json:"postData,omitempty"`
	HeadersSize int         `json:"headersSize"`
	BodySize    int         `json:"bodySize"`
}

type harResponse struct {
	Status      int        `json:"status"`
	StatusText  string     `json:"statusText"`
	HTTPVersion string     `json:"httpVersion"`
	Cookies     []harNV    `json:"cookies"`
	Headers     []harNV    `json:"headers"`
	Content     harContent `json:"content"`
	RedirectURL string     `json:"redirectURL"`
	HeadersSize int        `json:"headersSize"`
	BodySize    int        `json:"bodySize"`
}

// harContent serves as a response's content (Size set) and a request's
// postData (Size nil).
type harContent struct {
	Size     *int   `json:"size,omitempty"`
	MimeType string `json:"mimeType"`
	Text     string `json:"text"`
	Encoding string `json:"encoding,omitempty"`
}

type harNV struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type harTimings struct {
	Blocked float64 `json:"blocked"`
	DNS     float64 `json:"dns"`
	Connect float64 `json:"connect"`
	Send    float64 `json:"send"`
	Wait    float64 `json:"wait"`
	Receive float64 `json:"receive"`
	SSL     float64 `json:"ssl"`
}

type harMessage struct {
	Time      float64 `json:"time"`
	EventName string  `json:"eventName"`
	EventID   string  `json:"eventId"`
	Data      string  `json:"data"`
	Retry     *int    `json:"_retry,omitempty"`
}

func httpEntries(r *store.Recording) []harEntry {
	label := StreamLabels(r.Streams)
	byStream := map[int64][]*store.Frame{}
	for i := range r.Frames {
		f := &r.Frames[i]
		byStream[f.StreamID] = append(byStream[f.StreamID], f)
	}
	base, err := url.Parse(r.Session.Upstream)
	if err != nil || base.Scheme == "" || base.Host == "" {
		base = &url.URL{Scheme: "http", Host: "mcpvcr.invalid"}
	}
	streams := append([]store.Stream(nil), r.Streams...)
	sort.SliceStable(streams, func(i, j int) bool { return streams[i].Opened < streams[j].Opened })
	var es []harEntry
	for _, st := range streams {
		if st.Method == "" {
			continue // not an HTTP exchange
		}
		e := harEntry{
			StartedDateTime: harTime(r.Session.StartedAt, st.Opened),
			Stream:          label[st.ID],
			End:             st.End.String(),
			Err:             st.Err,
			ResourceType:    "fetch",
			Cache:           struct{}{},
		}
		if st.ResumesID != 0 {
			e.Resumes = label[st.ResumesID]
		}
		u := resolveURL(base, st.URL)
		e.Request = harRequest{
			Method: st.Method, URL: u.String(), HTTPVersion: "HTTP/1.1",
			Cookies: []harNV{}, Headers: harHeaders(st.RequestHeader), QueryString: harQuery(u),
			HeadersSize: -1,
		}
		var sent, got []byte
		var firstGot time.Duration = -1
		lastAt := st.Opened
		sse := st.SSE()
		for _, f := range byStream[st.ID] {
			if f.Direction == store.ClientToServer {
				sent = append(sent, f.Raw...)
				continue
			}
			got = append(got, f.Raw...)
			if firstGot < 0 {
				firstGot = f.Offset
			}
			lastAt = max(lastAt, f.Offset)
			if f.SSE {
				sse = true
				if f.Comment {
					continue
				}
				m := harMessage{Time: epochSeconds(r.Session.StartedAt, f.Offset), EventName: f.Event, EventID: f.EventID, Data: string(f.Data)}
				if m.EventName == "" {
					m.EventName = "message"
				}
				if f.Retry >= 0 {
					retry := f.Retry
					m.Retry, e.Retry = &retry, &retry
				}
				e.Messages = append(e.Messages, m)
			}
		}
		if sse {
			e.ResourceType = "eventsource"
		}
		if len(sent) > 0 || st.Method == http.MethodPost {
			pd := contentOf(sent, st.RequestHeader.Get("Content-Type"))
			e.Request.PostData = &pd
		}
		e.Request.BodySize = len(sent)
		e.Response = harResponse{
			Status: st.Status, StatusText: http.StatusText(st.Status), HTTPVersion: "HTTP/1.1",
			Cookies: []harNV{}, Headers: harHeaders(st.ResponseHeader),
			Content:     contentOf(got, st.ResponseHeader.Get("Content-Type")),
			RedirectURL: st.ResponseHeader.Get("Location"), HeadersSize: -1, BodySize: len(got),
		}
		size := len(got)
		e.Response.Content.Size = &size
		end := st.Closed
		if end < lastAt {
			end = lastAt // still open when the recording stopped
		}
		if firstGot < 0 {
			firstGot = end
		}
		e.Timings = timings(firstGot-st.Opened, end-firstGot)
		e.Time = e.Timings.Wait + e.Timings.Receive
		es = append(es, e)
	}
	return es
}

func stdioEntries(r *store.Recording) []harEntry {
	links := causal.Link(r)
	label := StreamLabels(r.Streams)
	kinds := map[int64]store.StreamKind{}
	for _, st := range r.Streams {
		kinds[st.ID] = st.Kind
	}
	prefix := "mcp-stdio://session-" + strconv.FormatInt(r.Session.ID, 10) + "/"
	var es []harEntry
	at := map[int64]int{} // request seq → its entry
	stderr := -1
	for i := range r.Frames {
		f := &r.Frames[i]
		if kinds[f.StreamID] == store.StderrStream {
			if stderr < 0 {
				stderr = len(es)
				es = append(es, stdioEntry(r, f, prefix+"stderr", label[f.StreamID], nil))
				es[stderr].Seq = 0 // many frames
				es[stderr].Request.Method = http.MethodGet
				es[stderr].Response.Status, es[stderr].Response.StatusText = http.StatusOK, http.StatusText(http.StatusOK)
				es[stderr].End = "stderr"
			}
			c := &es[stderr].Response.Content
			c.Text += string(f.Raw)
			*c.Size += len(f.Raw)
			es[stderr].Response.BodySize = *c.Size
			es[stderr].Response.Content.MimeType = "text/plain"
			es[stderr].Timings.Receive = ms(f.Offset) - ms(es[stderr].startOffset)
			es[stderr].Time = es[stderr].Timings.Receive
			continue
		}
		if req, ok := links.Request[f.Seq]; ok {
			if j, ok := at[req]; ok {
				e := &es[j]
				if e.AnswerSeq == 0 {
					e.AnswerSeq = f.Seq
					e.Response.Status, e.Response.StatusText = http.StatusOK, http.StatusText(http.StatusOK)
					e.Timings.Wait = ms(f.Offset) - ms(e.startOffset)
					e.Time = e.Timings.Wait
				}
				e.Response.Content.Text += string(f.Raw)
				*e.Response.Content.Size += len(f.Raw)
				e.Response.BodySize = *e.Response.Content.Size
				continue
			}
		}
		m := jsonrpc.Parse(f.Data)
		method, id := m.Method, ""
		switch m.Kind {
		case jsonrpc.KindRequest:
			id = string(m.ID)
		case jsonrpc.KindBatch:
			method = "batch"
		case jsonrpc.KindResult, jsonrpc.KindError:
			method, id = "response", string(m.ID)
		case jsonrpc.KindInvalid, jsonrpc.KindEmpty:
			method = "invalid"
		}
		u := prefix + f.Direction.String() + "/" + method
		if id != "" {
			u += "?id=" + url.QueryEscape(id)
		}
		e := stdioEntry(r, f, u, label[f.StreamID], &f.Raw)
		switch m.Kind {
		case jsonrpc.KindNotification:
			e.Response.Status, e.Response.StatusText = http.StatusAccepted, http.StatusText(http.StatusAccepted)
		case jsonrpc.KindRequest, jsonrpc.KindBatch:
			e.End = "unanswered"
		}
		at[f.Seq] = len(es)
		es = append(es, e)
	}
	for i := range es {
		if es[i].AnswerSeq != 0 {
			es[i].End = "answered"
		}
	}
	return es
}

// stdioEntry starts the entry of a stdio frame sent at f's offset, with
// body (if any) as its request's post data.
func stdioEntry(r *store.Recording, f *store.Frame, rawURL, stream string, body *[]byte) harEntry {
	u, _ := url.Parse(rawURL)
	zero := 0
	e := harEntry{
		StartedDateTime: harTime(r.Session.StartedAt, f.Offset),
		Stream:          stream,
		Seq:             f.Seq,
		ResourceType:    "fetch",
		Request: harRequest{
			Method: http.MethodPost, URL: rawURL, HTTPVersion: "stdio",
			Cookies: []harNV{}, Headers: []harNV{}, QueryString: harQuery(u), HeadersSize: -1,
		},
		Response: harResponse{
			HTTPVersion: "stdio", Cookies: []harNV{}, Headers: []harNV{},
			Content:     harContent{Size: &zero, MimeType: "application/json"},
			HeadersSize: -1,
		},
		Timings: timings(0, 0),
	}
	e.startOffset = f.Offset
	if body != nil {
		pd := contentOf(*body, "application/json")
		e.Request.PostData = &pd
		e.Request.BodySize = len(*body)
	}
	return e
}

func timings(wait, receive time.Duration) harTimings {
	return harTimings{Blocked: -1, DNS: -1, Connect: -1, SSL: -1, Send: 0, Wait: ms(wait), Receive: ms(receive)}
}

func harTime(start time.Time, off time.Duration) string {
	return start.Add(off).UTC().Format("2006-01-02T15:04:05.000Z")
}

func epochSeconds(start time.Time, off time.Duration) float64 {
	return float64(start.Add(off).UnixMicro()) / 1e6
}

func contentOf(b []byte, mime string) harContent {
	c := harContent{MimeType: mime}
	if utf8.Valid(b) {
		c.Text = string(b)
	} else {
		c.Text, c.Encoding = base64.StdEncoding.EncodeToString(b), "base64"
	}
	return c
}

func harHeaders(h http.Header) []harNV {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := []harNV{}
	for _, k := range keys {
		for _, v := range h[k] {
			out = append(out, harNV{Name: k, Value: v})
		}
	}
	return out
}

func harQuery(u *url.URL) []harNV {
	out := []harNV{}
	if u == nil {
		return out
	}
	q := u.Query()
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for _, v := range q[k] {
			out = append(out, harNV{Name: k, Value: v})
		}
	}
	return out
}

// resolveURL makes a recorded request URL (usually a path) absolute
// against the session's upstream.
func resolveURL(base *url.URL, raw string) *url.URL {
	ref, err := url.Parse(raw)
	if err != nil {
		return &url.URL{Scheme: base.Scheme, Host: base.Host, Path: "/", RawQuery: url.Values{"unparsable": {raw}}.Encode()}
	}
	return base.ResolveReference(ref)
}

func sessionTitle(s store.Session) string {
	t := "session " + strconv.FormatInt(s.ID, 10)
	if s.Name != "" {
		t += " " + strconv.Quote(s.Name)
	}
	t += " (" + s.Transport.String()
	if s.Revision != "" {
		t += ", " + s.Revision
	}
	return t + ")"
}

// version is the mcpvcr module's version, "(devel)" for a local build.
func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}
