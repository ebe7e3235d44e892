package verify

import (
	"encoding/json"
	"net"
	"net/url"
	"slices"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
)

// WriteGuard keeps a Verifier from sending the recorded tools/call
// requests whose tool may write: verify sends recorded traffic to a live
// server, which may hold real data. A tool may write unless its
// annotations say readOnlyHint true (and not destructiveHint true); the
// annotations come from the live server's tools/list answer in the run,
// else from the recorded one. A tool neither lists may write.
type WriteGuard struct {
	// Allow names tools to send even though they may write.
	Allow []string
}

// SkippedCall is a tools/call the write guard did not send.
type SkippedCall struct {
	// Seq is the recorded request's seq.
	Seq  int64
	Tool string
	// Why says what marks the tool as possibly writing.
	Why string
}

// Remote reports whether u is a server verify did not start and that is
// not on this machine's loopback interface: where the write guard is on
// by default.
func Remote(u *url.URL) bool {
	if u == nil {
		return false
	}
	h := u.Hostname()
	if h == "localhost" {
		return false
	}
	ip := net.ParseIP(h)
	return ip == nil || !ip.IsLoopback()
}

// toolAnnotations are the hints of one tool.
type toolAnnotations struct {
	listed   bool
	readOnly *bool
	destruct *bool
}

// toolsOf reads the tools of a tools/list result, by name.
func toolsOf(result json.RawMessage, into map[string]toolAnnotations) {
	var r struct {
		Tools []struct {
			Name        string `json:"name"`
			Annotations *struct {
				ReadOnlyHint    *bool `json:"readOnlyHint"`
				DestructiveHint *bool `json:"destructiveHint"`
			} `json:"annotations"`
		} `json:"tools"`
	}
	if json.Unmarshal(result, &r) != nil {
		return
	}
	for _, t := range r.Tools {
		a := toolAnnotations{listed: true}
		if t.Annotations != nil {
			a.readOnly, a.destruct = t.Annotations.ReadOnlyHint, t.Annotations.DestructiveHint
		}
		into[t.Name] = a
	}
}

// mayWrite says why a tool may write, "" if it is read-only.
func (a toolAnnotations) mayWrite(source string) string {
	switch {
	case !a.listed:
		return "no tools/list names it"
	case a.destruct != nil && *a.destruct:
		return "the " + source + " tools/list marks it destructiveHint: true"
	case a.readOnly == nil:
		return "the " + source + " tools/list gives it no readOnlyHint"
	case !*a.readOnly:
		return "the " + source + " tools/list marks it readOnlyHint: false"
	}
	return ""
}

// guarded returns the tool and why, when the write guard keeps step st
// from being sent. The caller holds d.mu.
func (d *driver) guarded(st *step) (tool, why string) {
	g := d.v.Guard
	if g == nil || st.f == nil {
		return "", ""
	}
	for _, m := range st.msgs {
		if m.Kind != jsonrpc.KindRequest || m.Method != "tools/call" {
			continue
		}
		var p struct {
			Name string `json:"name"`
		}
		_ = json.Unmarshal(m.Params, &p)
		if slices.Contains(g.Allow, p.Name) {
			continue
		}
		a, source := d.liveTools[p.Name], "live"
		if !a.listed {
			a, source = d.p.recTools[p.Name], "recorded"
		}
		if why := a.mayWrite(source); why != "" {
			return p.Name, why
		}
	}
	return "", ""
}
