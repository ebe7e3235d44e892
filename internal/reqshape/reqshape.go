// Package reqshape is the HTTP shape of an MCP request: what, besides
// its body, decides whether and how a server answers it. Replay answers
// a 2026-07-28 exchange only to a request of its exact Shape, and decides
// by the coarse Door whether a server answers a request at all (a request
// of a door never recorded was never answered).
package reqshape

import (
	"encoding/json"
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/mcpvcr/mcpvcr/store"
)

// Shape is what decides an HTTP-level answer to a request, besides its
// body: the server may refuse a request for any of it. Credentials count
// only as present or not; their values are redacted in the recording and
// never compared.
type Shape struct {
	Method, Path         string
	Version              string // MCP-Protocol-Version
	McpMethod, McpName   string
	Params               string // the Mcp-Param-* headers, sorted
	AcceptJSON, AcceptEv bool
	ContentType          string
	Origin               string // "", "local" or "foreign"
	Host                 string // "", "local" or "foreign"
	Credentials          bool
}

func (sh Shape) String() string {
	type plain Shape // without this method
	return fmt.Sprintf("%+v", plain(sh))
}

// Same reports whether a live request of shape live has recorded shape
// sh; a Host the recording did not keep (older cassettes) is not compared.
func (sh Shape) Same(live Shape) bool {
	if sh.Host == "" {
		live.Host = ""
	}
	if strings.Contains(sh.Params, "=REDACTED-") {
		live.Params = maskParams(sh.Params, live.Params)
	}
	return sh == live
}

// maskParams returns the live Mcp-Param-* headers with the value of each
// one that the recording stored as a placeholder (a credential-like name,
// such as Mcp-Param-Api-Key) replaced by that placeholder: its value is
// never compared.
func maskParams(recorded, live string) string {
	placeholders := map[string]string{}
	for _, p := range strings.Split(recorded, "\x00") {
		if k, v, ok := strings.Cut(p, "="); ok && strings.HasPrefix(v, "REDACTED-") {
			placeholders[k] = v
		}
	}
	ps := strings.Split(live, "\x00")
	for i, p := range ps {
		if k, _, ok := strings.Cut(p, "="); ok {
			if v, ok := placeholders[k]; ok {
				ps[i] = k + "=" + v
			}
		}
	}
	return strings.Join(ps, "\x00")
}

// Live returns the shape of a live request.
func Live(r *http.Request) Shape {
	h := r.Header.Clone()
	if h.Get("Host") == "" {
		h.Set("Host", r.Host)
	}
	return Of(r.Method, r.URL.Path, h)
}

// Recorded returns the shape of a recorded request.
func Recorded(st *store.Stream) Shape {
	path := st.URL
	if u, err := url.Parse(st.URL); err == nil {
		path = u.Path
	}
	return Of(st.Method, path, st.RequestHeader)
}

// Of returns the shape of a request with method, path and headers h.
func Of(method, path string, h http.Header) Shape {
	sh := Shape{Method: method, Path: path, Version: h.Get("MCP-Protocol-Version"),
		McpMethod: h.Get("Mcp-Method"), McpName: h.Get("Mcp-Name"),
		Origin: OriginClass(h.Get("Origin")), Host: HostClass(h.Get("Host")),
		Credentials: h.Get("Authorization") != "" || h.Get("Cookie") != ""}
	var params []string
	for k, vs := range h {
		if strings.HasPrefix(http.CanonicalHeaderKey(k), "Mcp-Param-") {
			params = append(params, http.CanonicalHeaderKey(k)+"="+strings.Join(vs, ","))
		}
	}
	sort.Strings(params)
	sh.Params = strings.Join(params, "\x00")
	for _, a := range h.Values("Accept") {
		for _, part := range strings.Split(a, ",") {
			mt, _, _ := mime.ParseMediaType(strings.TrimSpace(part))
			switch mt {
			case "application/json":
				sh.AcceptJSON = true
			case "text/event-stream":
				sh.AcceptEv = true
			case "*/*":
				sh.AcceptJSON, sh.AcceptEv = true, true
			}
		}
	}
	sh.ContentType, _, _ = mime.ParseMediaType(h.Get("Content-Type"))
	return sh
}

// OriginClass sorts an Origin: none, a loopback page, or another site.
func OriginClass(o string) string {
	if o == "" {
		return ""
	}
	u, err := url.Parse(o)
	if err != nil {
		return "foreign"
	}
	return HostClass(u.Host)
}

// HostClass sorts a Host: unknown, loopback, or another name.
func HostClass(h string) string {
	if h == "" {
		return ""
	}
	if host, _, err := net.SplitHostPort(h); err == nil {
		h = host
	}
	h = strings.Trim(h, "[]")
	if h == "localhost" {
		return "local"
	}
	if ip := net.ParseIP(h); ip != nil && ip.IsLoopback() {
		return "local"
	}
	return "foreign"
}

// Info encodes sh and whether its request was refused, as a row of the
// replay index.
func Info(sh Shape, refused bool) string {
	b, _ := json.Marshal(infoRow{sh, refused})
	return string(b)
}

// infoRow is what Info encodes.
type infoRow struct {
	Shape
	Refused bool
}

// DecodeInfo decodes what Info encoded.
func DecodeInfo(info string) (Shape, bool, error) {
	var r infoRow
	if err := json.Unmarshal([]byte(info), &r); err != nil {
		return Shape{}, false, err
	}
	return r.Shape, r.Refused, nil
}

// Door is the coarse shape of a request that decides whether a server
// answers it at all: a request of a shape never recorded was never
// answered. Origin and Host count only as foreign or not (none and
// loopback are the same); the path is not compared (a replay answers on
// every path), nor are Accept and Content-Type, which --strict checks.
type Door struct {
	Method          string
	Session, Resume bool // Mcp-Session-Id, Last-Event-ID present
	ForeignOrigin   bool
	ForeignHost     bool
	Credentials     bool
	HostUnknown     bool // recorded without Host (older cassettes): not compared
	Refused         bool // the server refused the recorded request for its shape
}

// DoorOf returns the door of a request with method, headers h and shape
// sh.
func DoorOf(method string, h http.Header, sh Shape) Door {
	return Door{Method: method, Session: h.Get("Mcp-Session-Id") != "", Resume: h.Get("Last-Event-ID") != "",
		ForeignOrigin: sh.Origin == "foreign", ForeignHost: sh.Host == "foreign", Credentials: sh.Credentials,
		HostUnknown: sh.Host == ""}
}

// LiveDoor returns the door of a live request.
func LiveDoor(r *http.Request) Door {
	return DoorOf(r.Method, r.Header, Live(r))
}

// Differences lists, for people, how live differs from recorded door d.
func (d Door) Differences(live Door) []string {
	var out []string
	has := func(b bool) string {
		if b {
			return "present"
		}
		return "absent"
	}
	add := func(what string, rec, got string) {
		if rec != got {
			out = append(out, fmt.Sprintf("%s %s (recorded %s)", what, got, rec))
		}
	}
	add("method", d.Method, live.Method)
	add("Mcp-Session-Id", has(d.Session), has(live.Session))
	add("Last-Event-ID", has(d.Resume), has(live.Resume))
	add("foreign Origin", has(d.ForeignOrigin), has(live.ForeignOrigin))
	if !d.HostUnknown {
		add("foreign Host", has(d.ForeignHost), has(live.ForeignHost))
	}
	add("credentials", has(d.Credentials), has(live.Credentials))
	return out
}

// Key is what two doors are compared by.
type Key struct {
	Method                                                   string
	Session, Resume, ForeignOrigin, ForeignHost, Credentials bool
}

// Keys returns the keys of live doors d is the same as: a door recorded
// without Host stands for both.
func (d Door) Keys() []Key {
	k := Key{d.Method, d.Session, d.Resume, d.ForeignOrigin, d.ForeignHost, d.Credentials}
	if !d.HostUnknown {
		return []Key{k}
	}
	k.ForeignHost = false
	k2 := k
	k2.ForeignHost = true
	return []Key{k, k2}
}

// Encode writes what d compares (its Key and whether its Host was
// recorded) as a row key of the replay index.
func (d Door) Encode() string {
	bits := []bool{d.Session, d.Resume, d.ForeignOrigin, d.ForeignHost, d.Credentials, d.HostUnknown}
	var b strings.Builder
	b.WriteString(d.Method)
	for _, v := range bits {
		b.WriteString(" " + strconv.FormatBool(v))
	}
	return b.String()
}

// DecodeDoor decodes what Encode wrote.
func DecodeDoor(key string) (Door, error) {
	f := strings.Fields(key)
	if len(f) != 7 {
		return Door{}, fmt.Errorf("replay exchange index: bad door shape %q", key)
	}
	var bits [6]bool
	for i := range bits {
		v, err := strconv.ParseBool(f[i+1])
		if err != nil {
			return Door{}, fmt.Errorf("replay exchange index: bad door shape %q", key)
		}
		bits[i] = v
	}
	return Door{Method: f[0], Session: bits[0], Resume: bits[1], ForeignOrigin: bits[2], ForeignHost: bits[3],
		Credentials: bits[4], HostUnknown: bits[5]}, nil
}

// String is k as a row key.
func (k Key) String() string {
	return Door{Method: k.Method, Session: k.Session, Resume: k.Resume, ForeignOrigin: k.ForeignOrigin,
		ForeignHost: k.ForeignHost, Credentials: k.Credentials}.Encode()
}
