package audit

import (
	"bytes"
	"encoding/json"
	"net/url"
	"slices"
	"time"

	"github.com/mcpvcr/mcpvcr/internal/mcpwire"
	"github.com/mcpvcr/mcpvcr/store"
)

// Rules on what a client does next: retries, pagination, subscriptions,
// resumption and the streams it opens.

const (
	secVersioning   = "docs/specification/2026-07-28/basic/versioning.mdx"
	secPagination   = "docs/specification/2026-07-28/server/utilities/pagination.mdx"
	secHeaderErr    = "docs/specification/2026-07-28/basic/transports/streamable-http.mdx §Server validation"
	secSubscription = "docs/specification/2026-07-28/basic/patterns/subscriptions.mdx"
	secResumption   = "docs/specification/2025-11-25/basic/transports.mdx §Resumability and Redelivery"
	secGetStream    = "docs/specification/2025-11-25/basic/transports.mdx §Listening for Messages from the Server"
	secLegacySSE    = "docs/specification/2024-11-05/basic/transports.mdx §HTTP with SSE"
)

var resumable = []string{mcpwire.V20250326, mcpwire.V20250618, mcpwire.V20251125}

func init() {
	register(
		&Rule{ID: "version/discover-retry", Revisions: modernRevs, Level: Warning, Section: secVersioning,
			Description: "After -32022 the retry names a version from data.supported, and no version is asked for more than twice.",
			Check:       checkDiscoverRetry},
		&Rule{ID: "pagination/empty-cursor-legacy", Revisions: legacyRevs, Level: Warning, Section: "docs/specification/2025-11-25/server/utilities/pagination.mdx",
			Description: "In the legacy revisions an empty nextCursor ends the list: no request follows with cursor \"\" (the legacy text does not say what \"\" means, so this is a warning).",
			Check:       checkPagination(false)},
		&Rule{ID: "pagination/empty-cursor-modern", Revisions: modernRevs, Level: Warning, Section: secPagination,
			Description: "In 2026-07-28 an empty nextCursor is a cursor, not the end of the list: the list is asked again with cursor \"\" (a client may stop paging on purpose, so a warning; replay --probe empty-cursor judges it for certain).",
			Check:       checkEmptyCursorModern},
		&Rule{ID: "pagination/repeated-cursor", Revisions: allRevs, Level: Warning, Section: secPagination,
			Description: "A nextCursor equal to the cursor just sent ends the list: it is not sent again (a loop guard no revision states, so a warning).",
			Check:       checkPagination(true)},
		&Rule{ID: "tools/header-mismatch-retry", Revisions: modernRevs, Level: Warning, Section: secHeaderErr,
			Description: "After -32020 on tools/call: tools/list again before the call is retried, and the call retried at most once.",
			Check:       checkHeaderMismatchRetry},
		&Rule{ID: "listen/declared-kinds", Revisions: modernRevs, Level: Error, Section: secSubscription,
			Description: "subscriptions/listen asks only for what the server declared: tools, prompts, resources listChanged, resource subscriptions only with resources.subscribe.",
			Check:       checkListenKinds},
		&Rule{ID: "listen/one-stream", Revisions: modernRevs, Level: Warning, Section: secSubscription,
			Description: "One listen stream per connection: a new one replaces the old, which is ended (closed over HTTP, cancelled over stdio), never kept beside it (the subscriptions page allows several concurrent listens, so a warning).",
			Check:       checkListenOne},
		&Rule{ID: "listen/replaced-ignored", Revisions: modernRevs, Level: Warning, Section: secSubscription,
			Description: "A list_changed tagged with a listen stream the client has replaced is not acted on: the client's next request is not the list it names (read from what the client did next, so a warning).",
			Check:       checkListenReplaced},
		&Rule{ID: "resume/last-event-id", Revisions: resumable, Transports: httpOnly, Level: Error, Section: secResumption,
			Description: "A resuming GET sends Last-Event-ID equal to the last event id received on the stream it resumes, and only streams with event ids are resumed.",
			Check:       checkLastEventID},
		&Rule{ID: "resume/retry-delay", Revisions: resumable, Transports: httpOnly, Level: Warning, Section: secResumption,
			Description: "A resumption waits the retry the server gave before reconnecting, a bounded number of times (at most 10 per stream).",
			Check:       checkRetryDelay},
		&Rule{ID: "http/get-stream", Revisions: allRevs, Transports: httpOnly, Level: Error, Section: secGetStream,
			Description: "The standalone GET is opened after initialize was answered, never in 2026-07-28, and not reopened in a loop after 405 (at most one more try).",
			Check:       checkGetStream},
		&Rule{ID: "sse/endpoint", Revisions: []string{mcpwire.V20241105, mcpwire.V20250326, mcpwire.V20250618, mcpwire.V20251125}, Transports: []store.Transport{store.LegacySSE}, Level: Error, Section: secLegacySSE,
			Description: "HTTP+SSE: every message is POSTed to the endpoint the stream named, on the stream's origin.",
			Check:       checkSSEEndpoint},
	)
}

func checkDiscoverRetry(r *Rule, v *view) []Finding {
	var out []Finding
	// asked counts the versions asked for since the last server/discover
	// that was not a retry (one sent with no -32022 pending): a client
	// that connects again, or discovers again later, starts over.
	asked := map[string]int{}
	retrying := false
	var supported []string
	for _, m := range v.msgs {
		if !m.c2s() || !m.isRequest() {
			if req := v.requests[reqKey{store.ClientToServer, string(m.ID)}]; m.isResponse() && req != nil && req.Method == "server/discover" {
				retrying = m.Error != nil && m.Error.Code == -32022
			}
			if m.isResponse() && m.Error != nil && m.Error.Code == -32022 {
				var d struct {
					Supported []string `json:"supported"`
				}
				_ = json.Unmarshal(m.Error.Data, &d)
				supported = d.Supported
			}
			continue
		}
		ver := mcpwire.RequestMeta(m.Params).ProtocolVersion
		if m.Method == "server/discover" {
			if !retrying {
				asked = map[string]int{}
			}
			asked[ver]++
			if asked[ver] == 3 {
				out = append(out, v.finding(r, m.f, "server/discover asking for "+ver+" a third time", "each version at most twice"))
			}
		}
		if supported != nil && ver != "" {
			if !slices.Contains(supported, ver) {
				out = append(out, v.finding(r, m.f, m.Method+" asking for "+ver+" after -32022", "a version from data.supported "+string(mustJSON(supported))))
			}
			supported = nil
		}
	}
	return out
}

func mustJSON(x any) []byte { b, _ := json.Marshal(x); return b }

var listMethods = []string{"tools/list", "prompts/list", "resources/list", "resources/templates/list", "tasks/list"}

func checkPagination(repeated bool) func(*Rule, *view) []Finding {
	return func(r *Rule, v *view) []Finding {
		var out []Finding
		type page struct{ sent, next json.RawMessage }
		last := map[string]page{}
		for _, m := range v.msgs {
			if !m.c2s() || !m.isRequest() || !slices.Contains(listMethods, m.Method) {
				continue
			}
			cur := field(m.Params, "cursor")
			if p, ok := last[m.Method]; ok && cur != nil && p.next != nil && string(cur) == string(p.next) {
				switch {
				case repeated && p.sent != nil && string(p.sent) == string(p.next):
					out = append(out, v.finding(r, m.f, m.Method+" with cursor "+string(cur)+" again", "end the list: the server returned the cursor it was sent"))
				case !repeated && emptyString(cur):
					out = append(out, v.finding(r, m.f, m.Method+` with cursor ""`, `end the list: an empty nextCursor ends it before 2026-07-28`))
				}
			}
			pg := page{sent: cur}
			if a := v.answer(m); a != nil {
				pg.next = field(a.Result, "nextCursor")
			}
			last[m.Method] = pg
		}
		return out
	}
}

// checkEmptyCursorModern reports each 2026-07-28 list answered with
// nextCursor "" that the client never asked again with cursor "": it
// read the empty cursor as the end of the list. A list asked with cursor
// "" and answered "" again ends there (pagination/repeated-cursor).
func checkEmptyCursorModern(r *Rule, v *view) []Finding {
	var out []Finding
	for i, m := range v.msgs {
		if !m.c2s() || !m.isRequest() || !slices.Contains(listMethods, m.Method) {
			continue
		}
		a := v.answer(m)
		if a == nil || !emptyString(field(a.Result, "nextCursor")) || emptyString(field(m.Params, "cursor")) {
			continue
		}
		if slices.ContainsFunc(v.msgs[i+1:], func(n *msg) bool {
			return n.c2s() && n.isRequest() && n.Method == m.Method && emptyString(field(n.Params, "cursor"))
		}) {
			continue
		}
		out = append(out, v.finding(r, m.f, m.Method+` answered with nextCursor "", never asked again with cursor ""`,
			`ask again with cursor "": in 2026-07-28 an empty string is a cursor, not the end of the list`))
	}
	return out
}

// emptyString reports whether raw is the JSON string "".
func emptyString(raw json.RawMessage) bool {
	return string(bytes.TrimSpace(raw)) == `""`
}

func checkHeaderMismatchRetry(r *Rule, v *view) []Finding {
	var out []Finding
	for _, m := range v.msgs {
		if !m.c2s() || m.Method != "tools/call" {
			continue
		}
		a := v.answer(m)
		if a == nil || a.Error == nil || a.Error.Code != -32020 {
			continue
		}
		name := str(field(m.Params, "name"))
		listed := false
		for _, n := range v.msgs {
			if n.f.Seq <= a.f.Seq || !n.c2s() || !n.isRequest() {
				continue
			}
			if n.Method == "tools/list" {
				listed = true
			}
			if n.Method == "tools/call" && str(field(n.Params, "name")) == name {
				if !listed {
					out = append(out, v.finding(r, n.f, "tools/call "+name+" retried without tools/list after -32020", "tools/list again, then the call"))
				}
				if na := v.answer(n); na != nil && na.Error != nil && na.Error.Code == -32020 {
					// the retry failed the same way: a third call is a loop
					for _, o := range v.msgs {
						if o.f.Seq > na.f.Seq && o.c2s() && o.Method == "tools/call" && str(field(o.Params, "name")) == name {
							out = append(out, v.finding(r, o.f, "tools/call "+name+" a second time after -32020", "the call retried at most once"))
							break
						}
					}
				}
				break
			}
		}
	}
	return out
}

// serverCaps returns the capabilities of the server/discover result.
func (v *view) serverCaps() (json.RawMessage, bool) {
	for _, m := range v.msgs {
		if !m.c2s() && m.Result != nil {
			if req := v.request(m); req != nil && req.Method == "server/discover" {
				return field(m.Result, "capabilities"), true
			}
		}
	}
	return nil, false
}

func checkListenKinds(r *Rule, v *view) []Finding {
	caps, ok := v.serverCaps()
	if !ok {
		return nil
	}
	need := map[string][]string{
		"toolsListChanged":      {"tools", "listChanged"},
		"promptsListChanged":    {"prompts", "listChanged"},
		"resourcesListChanged":  {"resources", "listChanged"},
		"resourceSubscriptions": {"resources", "subscribe"},
	}
	var out []Finding
	for _, m := range v.msgs {
		if !m.c2s() || m.Method != "subscriptions/listen" {
			continue
		}
		var filter map[string]json.RawMessage
		_ = json.Unmarshal(field(m.Params, "notifications"), &filter)
		for k, val := range filter {
			path, known := need[k]
			if !known || string(val) == "false" || string(val) == "null" || string(val) == "[]" {
				continue
			}
			if string(field(caps, path...)) != "true" {
				out = append(out, v.finding(r, m.f, "subscriptions/listen asking for "+k, "only what the server declared: capabilities."+path[0]+"."+path[1]+" is not true"))
			}
		}
	}
	return out
}

func checkListenOne(r *Rule, v *view) []Finding {
	var out []Finding
	var listens []*msg
	for _, m := range v.msgs {
		if m.c2s() && m.isRequest() && m.Method == "subscriptions/listen" {
			listens = append(listens, m)
		}
	}
	for i, old := range listens {
		if i+1 == len(listens) {
			break
		}
		next := listens[i+1]
		if v.listenEnded(old, next) {
			continue
		}
		out = append(out, v.finding(r, next.f, "subscriptions/listen "+string(next.ID)+" while listen "+string(old.ID)+" stays open", "one listen stream: end the old one (close it over HTTP, notifications/cancelled over stdio)"))
	}
	return out
}

// listChangedLists names the list a list_changed notification asks a
// client to read again.
var listChangedLists = map[string]string{
	"notifications/tools/list_changed":     "tools/list",
	"notifications/prompts/list_changed":   "prompts/list",
	"notifications/resources/list_changed": "resources/list",
}

// checkListenReplaced reports a list the client asked for as its next
// request after a list_changed tagged with a listen stream it had
// replaced (a later subscriptions/listen was sent before the
// notification came), unless a list_changed of a listen still current
// came in between.
func checkListenReplaced(r *Rule, v *view) []Finding {
	var out []Finding
	replaced := map[string]int64{} // a listen's id: the seq of the listen that replaced it
	current := ""
	for _, m := range v.msgs {
		if m.c2s() && m.isRequest() && m.Method == "subscriptions/listen" {
			if current != "" {
				replaced[current] = m.f.Seq
			}
			current = string(m.ID)
		}
	}
	stale := func(m *msg) bool {
		at, ok := replaced[string(mcpwire.SubscriptionID(m.Params))]
		return ok && m.f.Seq > at
	}
	for i, m := range v.msgs {
		list, ok := listChangedLists[m.Method]
		if m.c2s() || !ok || !stale(m) {
			continue
		}
		for _, n := range v.msgs[i+1:] {
			if !n.c2s() && n.Method == m.Method && !stale(n) {
				break // a current listen's notification: acting on it is right
			}
			if n.c2s() && n.isRequest() {
				if n.Method == list {
					out = append(out, v.finding(r, n.f, list+" right after "+m.Method+" of replaced listen "+string(mcpwire.SubscriptionID(m.Params)),
						"notifications of a replaced listen stream are not acted on"))
				}
				break
			}
		}
	}
	return out
}

// listenEnded reports whether listen stream old ended, at any point, by
// its answer, a cancellation naming it or its HTTP stream closing: a
// replaced stream may briefly overlap its replacement.
func (v *view) listenEnded(old, next *msg) bool {
	if v.answer(old) != nil {
		return true
	}
	for _, m := range v.msgs {
		if m.c2s() && m.Method == "notifications/cancelled" && string(mcpwire.CancelledRequestID(m.Params)) == string(old.ID) {
			return true
		}
	}
	if old.st != nil && v.http() {
		return old.st.End != store.EndOpen && old.st.End != store.EndProxyShutdown
	}
	return false
}

// chain returns the streams resumed by st's chain of resumptions, the
// original first.
func (v *view) chain(st *store.Stream) []*store.Stream {
	var out []*store.Stream
	for id := st.ResumesID; id != 0; {
		s := v.streams[id]
		if s == nil || slices.Contains(out, s) {
			break
		}
		out = append([]*store.Stream{s}, out...)
		id = s.ResumesID
	}
	return out
}

// lastEvent returns the last event id and retry received on streams sts
// before offset at.
func (v *view) lastEvent(sts []*store.Stream, at time.Duration) (id string, has bool, retry int, closed time.Duration) {
	retry = -1
	for i := range v.rec.Frames {
		f := &v.rec.Frames[i]
		if f.Offset > at || !slices.ContainsFunc(sts, func(s *store.Stream) bool { return s.ID == f.StreamID }) {
			continue
		}
		if f.HasEventID {
			id, has = f.EventID, true
		}
		if f.Retry >= 0 {
			retry = f.Retry
		}
	}
	for _, s := range sts {
		closed = max(closed, s.Closed)
	}
	return id, has, retry, closed
}

func checkLastEventID(r *Rule, v *view) []Finding {
	var out []Finding
	for i := range v.rec.Streams {
		st := &v.rec.Streams[i]
		if st.Kind != store.ResumeStream {
			continue
		}
		prev := v.chain(st)
		if len(prev) == 0 {
			continue
		}
		id, has, _, _ := v.lastEvent(prev, st.Opened)
		sent, ok := header(st.RequestHeader, "Last-Event-ID")
		if !ok {
			sent, ok = st.LastEventID, st.LastEventID != ""
		}
		switch {
		case !has:
			out = append(out, v.streamFinding(r, st, "GET resuming a stream that sent no event id", "no resumption of a stream without event ids"))
		case !ok || sent != id:
			out = append(out, v.streamFinding(r, st, "GET with Last-Event-ID: "+quote(sent, ok), "Last-Event-ID: "+id+", the last id received"))
		}
	}
	return out
}

func checkRetryDelay(r *Rule, v *view) []Finding {
	var out []Finding
	count := map[int64]int{}
	for i := range v.rec.Streams {
		st := &v.rec.Streams[i]
		if st.Kind != store.ResumeStream {
			continue
		}
		prev := v.chain(st)
		if len(prev) == 0 {
			continue
		}
		origin := prev[0].ID
		count[origin]++
		if count[origin] == 11 {
			out = append(out, v.streamFinding(r, st, "an 11th resumption of one stream", "a bounded number of attempts (mcpvcr allows 10)"))
		}
		_, _, retry, closed := v.lastEvent(prev, st.Opened)
		if retry > 0 && closed > 0 && st.Opened-closed < time.Duration(retry)*time.Millisecond {
			out = append(out, v.streamFinding(r, st, "GET resuming "+(st.Opened-closed).String()+" after the stream closed", "wait retry: "+time.Duration(retry*int(time.Millisecond)).String()+" as the server asked"))
		}
	}
	return out
}

func checkGetStream(r *Rule, v *view) []Finding {
	var out []Finding
	_, initResp := v.initialize()
	refused := 0
	for i := range v.rec.Streams {
		st := &v.rec.Streams[i]
		if st.Kind != store.GetStream {
			continue
		}
		switch {
		case v.modern():
			out = append(out, v.streamFinding(r, st, "a standalone GET", "no GET stream: 2026-07-28 removed it"))
			continue
		case initResp == nil || st.Opened < initResp.f.Offset:
			out = append(out, v.streamFinding(r, st, "a standalone GET before initialize was answered", "the GET stream after initialize"))
		case refused >= 2:
			out = append(out, v.streamFinding(r, st, "a standalone GET reopened after 405", "no reopening after 405 (one more try at most)"))
		}
		if st.Status == 405 || refused > 0 {
			refused++
		}
	}
	return out
}

func checkSSEEndpoint(r *Rule, v *view) []Finding {
	var out []Finding
	var endpoint *url.URL
	for i := range v.rec.Frames {
		f := &v.rec.Frames[i]
		st := v.streams[f.StreamID]
		if st == nil {
			continue
		}
		if st.Kind == store.SSEGetStream && f.Event == "endpoint" && endpoint == nil {
			base, err := url.Parse(st.URL)
			ref, err2 := url.Parse(string(f.Data))
			if err == nil && err2 == nil {
				endpoint = base.ResolveReference(ref)
			}
			continue
		}
		if st.Kind != store.PostStream || f.Direction != store.ClientToServer || endpoint == nil {
			continue
		}
		got, err := url.Parse(st.URL)
		if err != nil {
			continue
		}
		if endpoint.IsAbs() && got.IsAbs() && (got.Scheme != endpoint.Scheme || got.Host != endpoint.Host) ||
			got.Path != endpoint.Path || got.RawQuery != endpoint.RawQuery {
			out = append(out, v.finding(r, f, "POST "+st.URL, "POST "+endpoint.String()+", the endpoint the stream named, on its origin"))
		}
	}
	return out
}
